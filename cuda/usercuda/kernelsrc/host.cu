// The host side of a learner's kernel (package usercuda, Run). The
// generated lines above it define the kernel and its glue:
//
//   coalesce_launch(p, v, grid, block, shared)  launches it with pointer
//                                               args p[i] and values v[i]
//   coalesce_kernel                             its address
//   coalesce_name                               its name
//   coalesce_kinds                              one letter an arg: p, i, f
//   coalesce_nargs                              how many args
//
// and, just above this file, package cuda's src/shared.cuh, which the
// course's harness is built with too: the exit statuses, Failure and
// COALESCE_CK, the plan's reader, jstr, the L2 flush and the timing loop.
//
// Run as `program DIR`, it reads the launch from DIR/plan.json, one plan
// in shared.cuh's format (a flat JSON object; usercuda's writePlan writes
// it with cuda.PlanWriter, as cuda writes the harness's):
//
//   {"kernel":"copy","grid_x":4,"grid_y":1,"grid_z":1,
//    "block_x":256,"block_y":1,"block_z":1,"shared_bytes":0,
//    "warmup":3,"reps":20,"flush":true,"once":false,
//    "arg0_kind":"ptr","arg0_bytes":4096,"arg0_input":true,"arg0_output":false,
//    "arg1_kind":"int","arg1_int":1024,
//    "arg2_kind":"float","arg2_float":"0x1.8p+1"}
//
// (argI_input: the buffer's bytes are in DIR/inI.bin; argI_float: strtod's
// text, a hex float that keeps every bit). It fills each buffer from its
// file (0xA5 bytes without one), launches the kernel once, checks it
// (cudaGetLastError, then cudaDeviceSynchronize, where a fault shows),
// writes each output buffer to DIR/outI.bin, then, unless once, times it
// as the harness times the course's kernels (time_launches: warmup
// launches, then reps between a pair of CUDA events each, the L2 flushed
// before every one when flush). Before each of those launches every buffer
// is also restored from a device copy of what it held before the first
// launch, so that a kernel that updates in place runs on the same data
// every time. Neither is timed.
//
// It writes DIR/result.json, one JSON object:
//
//   {"status":"ok","gpu":...,"cc":"9.0","registers":R,"warmup":W,"times_ms":[...]}
//   {"status":"error","phase":"setup|launch|run|timed runs","cuda_error":"cudaError...","error":"...","call":"...","gpu":...}
//
// and exits (shared.cuh's Exit) ExitOK after a run, ExitFailed after an
// error of the kernel or the runtime (result.json says which), ExitUsage
// on a bad plan or a file it cannot read or write (the reason on stderr),
// ExitNoDevice or ExitNoDriver when CUDA cannot reach a GPU.

static std::string coalesce_dir;
static std::string coalesce_gpu;
static std::string coalesce_cc;
// coalesce_phase names what the program is doing, for the error a failed
// CUDA call reports.
static const char* coalesce_phase = "setup";

static std::string coalesce_path(const char* name, int i) {
    char buf[64];
    if (i >= 0) snprintf(buf, sizeof buf, "/%s%d.bin", name, i);
    else snprintf(buf, sizeof buf, "/%s", name);
    return coalesce_dir + buf;
}

[[noreturn]] static void coalesce_usage(const std::string& msg) {
    fprintf(stderr, "kernel program: %s\n", msg.c_str());
    exit(coalesce_host::ExitUsage);
}

static void coalesce_write_result(const std::string& body) {
    std::string p = coalesce_path("result.json", -1);
    FILE* f = fopen(p.c_str(), "w");
    if (!f) coalesce_usage(p + ": " + strerror(errno));
    fprintf(f, "{%s}\n", body.c_str());
    if (fclose(f) != 0) coalesce_usage(p + ": " + strerror(errno));
}

// coalesce_fail records an error of the kernel or the runtime and exits:
// ExitFailed once the device is open, the missing device's or driver's
// status before.
[[noreturn]] static void coalesce_fail(const char* phase, cudaError_t e, const std::string& msg, const std::string& call) {
    using coalesce_host::jstr;
    std::string b = "\"status\":\"error\",\"phase\":" + jstr(phase) + ",\"cuda_error\":" + jstr(cudaGetErrorName(e)) +
                    ",\"error\":" + jstr(msg) + ",\"call\":" + jstr(call) + ",\"gpu\":" + jstr(coalesce_gpu);
    coalesce_write_result(b);
    exit(coalesce_gpu.empty() ? coalesce_host::missing_exit(e) : coalesce_host::ExitFailed);
}

struct coalesce_arg {
    char kind = 0;
    long long bytes = 0;
    bool input = false, output = false;
    void* dev = nullptr;
    void* pristine = nullptr;
};

// coalesce_read_file returns the whole of the file at p.
static std::string coalesce_read_file(const std::string& p) {
    FILE* f = fopen(p.c_str(), "rb");
    if (!f) coalesce_usage(p + ": " + strerror(errno));
    std::string text;
    char buf[4096];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, got);
    if (ferror(f)) coalesce_usage(p + ": " + strerror(errno));
    fclose(f);
    return text;
}

int main(int argc, char** argv) {
    using coalesce_host::Failure;
    if (argc != 2) coalesce_usage("usage: program DIR (DIR holds plan.json)");
    coalesce_dir = argv[1];
    std::string text = coalesce_read_file(coalesce_path("plan.json", -1));
    dim3 grid, block;
    size_t shared = 0;
    int warmup = 0, reps = 0;
    bool flush = false, once = false;
    std::vector<coalesce_arg> args(coalesce_nargs);
    std::vector<coalesce_value> values(coalesce_nargs);
    try {
        coalesce_host::Plan plan = coalesce_host::parse_plan(text);
        if (plan.kernel() != coalesce_name)
            throw Failure("plan: \"kernel\" is \"" + plan.kernel() + "\", and this program's kernel is " + coalesce_name);
        grid.x = (unsigned)plan.integer("grid_x");
        grid.y = (unsigned)plan.integer("grid_y");
        grid.z = (unsigned)plan.integer("grid_z");
        block.x = (unsigned)plan.integer("block_x");
        block.y = (unsigned)plan.integer("block_y");
        block.z = (unsigned)plan.integer("block_z");
        shared = (size_t)plan.integer("shared_bytes");
        warmup = (int)plan.integer("warmup");
        reps = (int)plan.integer("reps");
        flush = plan.flag("flush");
        once = plan.flag("once");
        for (int i = 0; i < coalesce_nargs; i++) {
            std::string a = "arg" + std::to_string(i);
            std::string k = plan.text(a + "_kind");
            char want = coalesce_kinds[i];
            if ((k == "ptr") != (want == 'p') || (k == "int") != (want == 'i') || (k == "float") != (want == 'f'))
                throw Failure("plan: arg " + std::to_string(i) + " is " + k + ", the kernel's is '" + want + "'");
            args[i].kind = want;
            if (want == 'p') {
                args[i].bytes = plan.integer(a + "_bytes");
                args[i].input = plan.flag(a + "_input");
                args[i].output = plan.flag(a + "_output");
            } else if (want == 'i') {
                values[i].i = plan.integer(a + "_int");
            } else {
                std::string f = plan.text(a + "_float");
                char* end = nullptr;
                values[i].f = strtod(f.c_str(), &end);
                if (f.empty() || *end != 0) throw Failure("plan: \"" + a + "_float\": \"" + f + "\" is not a number");
            }
        }
    } catch (const Failure& f) {
        coalesce_usage(std::string("plan.json: ") + f.what());
    }

    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) coalesce_fail("setup", e, std::string("no usable CUDA device: ") + cudaGetErrorString(e), "cudaGetDeviceCount");
    if (count == 0) coalesce_fail("setup", cudaErrorNoDevice, "no CUDA device", "cudaGetDeviceCount");
    cudaDeviceProp prop;
    if ((e = cudaSetDevice(0)) != cudaSuccess || (e = cudaGetDeviceProperties(&prop, 0)) != cudaSuccess)
        coalesce_fail("setup", e, std::string("opening device 0: ") + cudaGetErrorString(e), "cudaGetDeviceProperties");
    coalesce_gpu = prop.name;
    coalesce_cc = std::to_string(prop.major) + "." + std::to_string(prop.minor);

    cudaFuncAttributes attr;
    std::vector<double> ms;
    try {
        COALESCE_CK(cudaFuncGetAttributes(&attr, coalesce_kernel));
        coalesce_phase = "launch";
        long long threads = (long long)block.x * block.y * block.z;
        if (threads > attr.maxThreadsPerBlock)
            coalesce_fail("launch", cudaErrorLaunchOutOfResources,
                          "the kernel uses " + std::to_string(attr.numRegs) + " registers a thread, so a block may have at most " +
                              std::to_string(attr.maxThreadsPerBlock) + " threads on this GPU; the block has " + std::to_string(threads),
                          "cudaFuncGetAttributes");
        if (shared > 48 * 1024)
            COALESCE_CK(cudaFuncSetAttribute(coalesce_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared));

        coalesce_phase = "setup";
        size_t need = 0;
        for (auto& a : args)
            if (a.kind == 'p') need += (size_t)a.bytes * (once ? 1 : 2);
        if (flush && !once) need += coalesce_host::L2Flush::bytes_for(prop);
        size_t free_b = 0, total_b = 0;
        COALESCE_CK(cudaMemGetInfo(&free_b, &total_b));
        if (need > free_b)
            coalesce_fail("setup", cudaErrorMemoryAllocation,
                          "the buffers need " + std::to_string(need) + " bytes of device memory (twice each buffer, to restore it before each timed launch), and " +
                              std::to_string(free_b) + " are free",
                          "cudaMemGetInfo");

        std::vector<void*> ptrs(coalesce_nargs, nullptr);
        for (int i = 0; i < coalesce_nargs; i++) {
            coalesce_arg& a = args[i];
            if (a.kind != 'p') continue;
            std::vector<unsigned char> host((size_t)a.bytes, 0xA5);
            if (a.input) {
                std::string p = coalesce_path("in", i);
                FILE* f = fopen(p.c_str(), "rb");
                if (!f) coalesce_usage(p + ": " + strerror(errno));
                size_t got = fread(host.data(), 1, host.size(), f);
                if (got != host.size() || fgetc(f) != EOF)
                    coalesce_usage(p + ": want exactly " + std::to_string(a.bytes) + " bytes");
                fclose(f);
            }
            COALESCE_CK(cudaMalloc(&a.dev, (size_t)a.bytes));
            COALESCE_CK(cudaMemcpy(a.dev, host.data(), (size_t)a.bytes, cudaMemcpyHostToDevice));
            if (!once) {
                COALESCE_CK(cudaMalloc(&a.pristine, (size_t)a.bytes));
                COALESCE_CK(cudaMemcpy(a.pristine, a.dev, (size_t)a.bytes, cudaMemcpyDeviceToDevice));
            }
            ptrs[i] = a.dev;
        }

        // The first launch: its result is the output.
        coalesce_launch(ptrs.data(), values.data(), grid, block, shared);
        coalesce_phase = "launch";
        COALESCE_CK(cudaGetLastError());
        coalesce_phase = "run";
        COALESCE_CK(cudaDeviceSynchronize());
        for (int i = 0; i < coalesce_nargs; i++) {
            coalesce_arg& a = args[i];
            if (a.kind != 'p' || !a.output) continue;
            std::vector<unsigned char> host((size_t)a.bytes);
            COALESCE_CK(cudaMemcpy(host.data(), a.dev, (size_t)a.bytes, cudaMemcpyDeviceToHost));
            std::string p = coalesce_path("out", i);
            FILE* f = fopen(p.c_str(), "wb");
            if (!f || fwrite(host.data(), 1, host.size(), f) != host.size() || fclose(f) != 0)
                coalesce_usage(p + ": " + strerror(errno));
        }

        if (!once && reps > 0) {
            coalesce_phase = "setup";
            coalesce_host::L2Flush l2;
            if (flush) l2.alloc(prop);
            coalesce_phase = "timed runs";
            ms = coalesce_host::time_launches([&] { coalesce_launch(ptrs.data(), values.data(), grid, block, shared); }, warmup, reps,
                                              flush ? &l2 : nullptr, [&] {
                                                  for (auto& a : args)
                                                      if (a.kind == 'p')
                                                          COALESCE_CK(cudaMemcpyAsync(a.dev, a.pristine, (size_t)a.bytes, cudaMemcpyDeviceToDevice));
                                              });
        }
    } catch (const Failure& f) {
        coalesce_fail(coalesce_phase, f.code, cudaGetErrorString(f.code), f.call);
    }
    using coalesce_host::jstr;
    std::string b = "\"status\":\"ok\",\"gpu\":" + jstr(coalesce_gpu) + ",\"cc\":" + jstr(coalesce_cc) +
                    ",\"registers\":" + std::to_string(attr.numRegs) + ",\"warmup\":" + std::to_string(once ? 0 : warmup) +
                    ",\"times_ms\":[";
    for (size_t t = 0; t < ms.size(); t++) {
        char x[32];
        snprintf(x, sizeof x, "%s%.6g", t ? "," : "", ms[t]);
        b += x;
    }
    coalesce_write_result(b + "]");
    return coalesce_host::ExitOK;
}
