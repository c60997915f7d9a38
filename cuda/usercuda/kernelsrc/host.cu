// The host side of a learner's kernel (package cuda, RunUserKernel). The
// generated lines above it define the kernel and its glue:
//
//   coalesce_launch(p, v, grid, block, shared)  launches it with pointer
//                                               args p[i] and values v[i]
//   coalesce_kernel                             its address
//   coalesce_kinds                              one letter an arg: p, i, f
//   coalesce_nargs                              how many args
//
// Run as `program DIR`, it reads the launch from DIR/launch.txt:
//
//   coalesce-kernel 1
//   grid X Y Z
//   block X Y Z
//   shared BYTES
//   warmup N
//   reps N
//   flush 0|1
//   once 0|1
//   arg I ptr BYTES HAS_INPUT IS_OUTPUT   (input bytes in DIR/inI.bin)
//   arg I int VALUE
//   arg I float VALUE                     (strtod: a hex float keeps every bit)
//
// fills each buffer from its file (0xA5 bytes without one), launches the
// kernel once, checks it (cudaGetLastError, then cudaDeviceSynchronize,
// where a fault shows), writes each output buffer to DIR/outI.bin, then,
// unless once, launches it warmup + reps more times, the reps each between
// a pair of CUDA events. Before each of those launches every buffer is
// restored from a device copy of what it held before the first launch, so
// that a kernel that updates in place runs on the same data every time,
// and (flush 1) the L2 is flushed, as the course's harness does: each
// timed launch starts as cold as the first. Neither is timed.
//
// It writes DIR/result.json, one JSON object:
//
//   {"status":"ok","gpu":...,"cc":"9.0","registers":R,"warmup":W,"times_ms":[...]}
//   {"status":"error","phase":"setup|launch|run|timed runs","cuda_error":"cudaError...","error":"...","call":"...","gpu":...}
//
// and exits 0 after a run, 1 after an error of the kernel or the runtime
// (result.json says which), 2 on a bad launch file or a file it cannot
// read or write (the reason on stderr), 3 without a CUDA device and 4
// without a usable driver, as the course's harness does.

static std::string coalesce_dir;
static std::string coalesce_gpu;
static std::string coalesce_cc;

static std::string coalesce_path(const char* name, int i) {
    char buf[64];
    if (i >= 0) snprintf(buf, sizeof buf, "/%s%d.bin", name, i);
    else snprintf(buf, sizeof buf, "/%s", name);
    return coalesce_dir + buf;
}

[[noreturn]] static void coalesce_usage(const std::string& msg) {
    fprintf(stderr, "kernel program: %s\n", msg.c_str());
    exit(2);
}

static std::string coalesce_json(const std::string& s) {
    std::string o = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            o += '\\';
            o += (char)c;
        } else if (c < 0x20) {
            char b[8];
            snprintf(b, sizeof b, "\\u%04x", c);
            o += b;
        } else {
            o += (char)c;
        }
    }
    return o + "\"";
}

static void coalesce_write_result(const std::string& body) {
    std::string p = coalesce_path("result.json", -1);
    FILE* f = fopen(p.c_str(), "w");
    if (!f) coalesce_usage(p + ": " + strerror(errno));
    fprintf(f, "{%s}\n", body.c_str());
    if (fclose(f) != 0) coalesce_usage(p + ": " + strerror(errno));
}

// coalesce_fail records an error of the kernel or the runtime and exits.
[[noreturn]] static void coalesce_fail(const char* phase, cudaError_t e, const std::string& msg, const char* call) {
    std::string b = "\"status\":\"error\",\"phase\":" + coalesce_json(phase) +
                    ",\"cuda_error\":" + coalesce_json(cudaGetErrorName(e)) +
                    ",\"error\":" + coalesce_json(msg) + ",\"call\":" + coalesce_json(call) +
                    ",\"gpu\":" + coalesce_json(coalesce_gpu);
    coalesce_write_result(b);
    int code = 1;
    if (coalesce_gpu.empty()) {
        code = 3;
        if (e == cudaErrorInsufficientDriver || e == cudaErrorSystemDriverMismatch ||
            e == cudaErrorCompatNotSupportedOnDevice || e == cudaErrorInitializationError ||
            e == cudaErrorSystemNotReady)
            code = 4;
    }
    exit(code);
}

#define COALESCE_CK(phase, call)                                                  \
    do {                                                                          \
        cudaError_t coalesce_e = (call);                                          \
        if (coalesce_e != cudaSuccess)                                            \
            coalesce_fail(phase, coalesce_e, cudaGetErrorString(coalesce_e), #call); \
    } while (0)

// coalesce_flush_l2 reads a buffer twice the L2's size, so that the L2
// holds none of the kernel's data before a timed launch. The store never
// executes (the buffer is zeros); it keeps the loads alive.
__global__ void coalesce_flush_l2(const uint4* buf, long long n, uint4* sink) {
    uint4 acc = make_uint4(0, 0, 0, 0);
    for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < n; k += (long long)gridDim.x * blockDim.x) {
        uint4 v = buf[k];
        acc.x ^= v.x;
        acc.y ^= v.y;
        acc.z ^= v.z;
        acc.w ^= v.w;
    }
    if (acc.x == 0xFFFFFFFFu && acc.y == 0x12345678u) *sink = acc;
}

struct coalesce_arg {
    char kind = 0;
    long long bytes = 0;
    int input = 0, output = 0;
    void* dev = nullptr;
    void* pristine = nullptr;
};

static void coalesce_expect(FILE* f, const char* word) {
    char got[32] = {0};
    if (fscanf(f, "%31s", got) != 1 || strcmp(got, word) != 0)
        coalesce_usage(std::string("launch.txt: want ") + word + ", got \"" + got + "\"");
}

static long long coalesce_int(FILE* f, const char* what) {
    char tok[64] = {0};
    if (fscanf(f, "%63s", tok) != 1) coalesce_usage(std::string("launch.txt: no ") + what);
    char* end = nullptr;
    errno = 0;
    long long v = strtoll(tok, &end, 10);
    if (errno != 0 || *end != 0) coalesce_usage(std::string("launch.txt: ") + what + " \"" + tok + "\" is not an integer");
    return v;
}

static double coalesce_float(FILE* f, const char* what) {
    char tok[64] = {0};
    if (fscanf(f, "%63s", tok) != 1) coalesce_usage(std::string("launch.txt: no ") + what);
    char* end = nullptr;
    double v = strtod(tok, &end);
    if (*end != 0) coalesce_usage(std::string("launch.txt: ") + what + " \"" + tok + "\" is not a number");
    return v;
}

int main(int argc, char** argv) {
    if (argc != 2) coalesce_usage("usage: program DIR (DIR holds launch.txt)");
    coalesce_dir = argv[1];
    std::string lp = coalesce_path("launch.txt", -1);
    FILE* lf = fopen(lp.c_str(), "r");
    if (!lf) coalesce_usage(lp + ": " + strerror(errno));
    coalesce_expect(lf, "coalesce-kernel");
    if (coalesce_int(lf, "version") != 1) coalesce_usage("launch.txt: version: want 1");
    dim3 grid, block;
    coalesce_expect(lf, "grid");
    grid.x = (unsigned)coalesce_int(lf, "grid x");
    grid.y = (unsigned)coalesce_int(lf, "grid y");
    grid.z = (unsigned)coalesce_int(lf, "grid z");
    coalesce_expect(lf, "block");
    block.x = (unsigned)coalesce_int(lf, "block x");
    block.y = (unsigned)coalesce_int(lf, "block y");
    block.z = (unsigned)coalesce_int(lf, "block z");
    coalesce_expect(lf, "shared");
    size_t shared = (size_t)coalesce_int(lf, "shared");
    coalesce_expect(lf, "warmup");
    int warmup = (int)coalesce_int(lf, "warmup");
    coalesce_expect(lf, "reps");
    int reps = (int)coalesce_int(lf, "reps");
    coalesce_expect(lf, "flush");
    bool flush = coalesce_int(lf, "flush") != 0;
    coalesce_expect(lf, "once");
    bool once = coalesce_int(lf, "once") != 0;
    std::vector<coalesce_arg> args(coalesce_nargs);
    std::vector<coalesce_value> values(coalesce_nargs);
    for (int i = 0; i < coalesce_nargs; i++) {
        coalesce_expect(lf, "arg");
        if (coalesce_int(lf, "arg index") != i) coalesce_usage("launch.txt: args out of order");
        char kind[16] = {0};
        if (fscanf(lf, "%15s", kind) != 1) coalesce_usage("launch.txt: no arg kind");
        std::string k = kind;
        char want = coalesce_kinds[i];
        if ((k == "ptr") != (want == 'p') || (k == "int") != (want == 'i') || (k == "float") != (want == 'f'))
            coalesce_usage("launch.txt: arg " + std::to_string(i) + " is " + k + ", the kernel's is '" + want + "'");
        args[i].kind = want;
        if (want == 'p') {
            args[i].bytes = coalesce_int(lf, "bytes");
            args[i].input = (int)coalesce_int(lf, "has input");
            args[i].output = (int)coalesce_int(lf, "is output");
        } else if (want == 'i') {
            values[i].i = coalesce_int(lf, "int value");
        } else {
            values[i].f = coalesce_float(lf, "float value");
        }
    }
    fclose(lf);

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
    COALESCE_CK("setup", cudaFuncGetAttributes(&attr, coalesce_kernel));
    long long threads = (long long)block.x * block.y * block.z;
    if (threads > attr.maxThreadsPerBlock)
        coalesce_fail("launch", cudaErrorLaunchOutOfResources,
                      "the kernel uses " + std::to_string(attr.numRegs) + " registers a thread, so a block may have at most " +
                          std::to_string(attr.maxThreadsPerBlock) + " threads on this GPU; the block has " + std::to_string(threads),
                      "cudaFuncGetAttributes");
    if (shared > 48 * 1024)
        COALESCE_CK("launch", cudaFuncSetAttribute(coalesce_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared));

    size_t need = 0;
    for (auto& a : args)
        if (a.kind == 'p') need += (size_t)a.bytes * (once ? 1 : 2);
    size_t flush_bytes = flush && !once ? 2 * (size_t)std::max(prop.l2CacheSize, 1 << 20) : 0;
    need += flush_bytes;
    size_t free_b = 0, total_b = 0;
    COALESCE_CK("setup", cudaMemGetInfo(&free_b, &total_b));
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
        COALESCE_CK("setup", cudaMalloc(&a.dev, (size_t)a.bytes));
        COALESCE_CK("setup", cudaMemcpy(a.dev, host.data(), (size_t)a.bytes, cudaMemcpyHostToDevice));
        if (!once) {
            COALESCE_CK("setup", cudaMalloc(&a.pristine, (size_t)a.bytes));
            COALESCE_CK("setup", cudaMemcpy(a.pristine, a.dev, (size_t)a.bytes, cudaMemcpyDeviceToDevice));
        }
        ptrs[i] = a.dev;
    }

    // The first launch: its result is the output.
    coalesce_launch(ptrs.data(), values.data(), grid, block, shared);
    COALESCE_CK("launch", cudaGetLastError());
    COALESCE_CK("run", cudaDeviceSynchronize());
    for (int i = 0; i < coalesce_nargs; i++) {
        coalesce_arg& a = args[i];
        if (a.kind != 'p' || !a.output) continue;
        std::vector<unsigned char> host((size_t)a.bytes);
        COALESCE_CK("run", cudaMemcpy(host.data(), a.dev, (size_t)a.bytes, cudaMemcpyDeviceToHost));
        std::string p = coalesce_path("out", i);
        FILE* f = fopen(p.c_str(), "wb");
        if (!f || fwrite(host.data(), 1, host.size(), f) != host.size() || fclose(f) != 0)
            coalesce_usage(p + ": " + strerror(errno));
    }

    std::vector<double> ms;
    if (!once && reps > 0) {
        uint4* flush_buf = nullptr;
        if (flush_bytes) {
            COALESCE_CK("setup", cudaMalloc(&flush_buf, flush_bytes));
            COALESCE_CK("setup", cudaMemset(flush_buf, 0, flush_bytes));
        }
        std::vector<cudaEvent_t> ev(2 * (size_t)reps);
        for (auto& x : ev) COALESCE_CK("setup", cudaEventCreate(&x));
        for (int r = 0; r < warmup + reps; r++) {
            for (auto& a : args)
                if (a.kind == 'p') COALESCE_CK("timed runs", cudaMemcpyAsync(a.dev, a.pristine, (size_t)a.bytes, cudaMemcpyDeviceToDevice));
            if (flush_buf) coalesce_flush_l2<<<prop.multiProcessorCount * 8, 256>>>(flush_buf, (long long)(flush_bytes / 16), flush_buf);
            int t = r - warmup;
            if (t >= 0) COALESCE_CK("timed runs", cudaEventRecord(ev[2 * t]));
            coalesce_launch(ptrs.data(), values.data(), grid, block, shared);
            if (t >= 0) COALESCE_CK("timed runs", cudaEventRecord(ev[2 * t + 1]));
        }
        COALESCE_CK("timed runs", cudaGetLastError());
        COALESCE_CK("timed runs", cudaDeviceSynchronize());
        for (int t = 0; t < reps; t++) {
            float x = 0;
            COALESCE_CK("timed runs", cudaEventElapsedTime(&x, ev[2 * t], ev[2 * t + 1]));
            ms.push_back(x);
        }
    }
    std::string b = "\"status\":\"ok\",\"gpu\":" + coalesce_json(coalesce_gpu) + ",\"cc\":" + coalesce_json(coalesce_cc) +
                    ",\"registers\":" + std::to_string(attr.numRegs) + ",\"warmup\":" + std::to_string(once ? 0 : warmup) +
                    ",\"times_ms\":[";
    for (size_t t = 0; t < ms.size(); t++) {
        char x[32];
        snprintf(x, sizeof x, "%s%.6g", t ? "," : "", ms[t]);
        b += x;
    }
    coalesce_write_result(b + "]");
    return 0;
}
