// harness.cu: runs the course's launches on the GPU at hand.
//
// It reads one launch plan per line and answers each with one JSON line, in
// order:
//
//   {"line":N, "time_ms":..., ..., "verified":true}   the kernel ran, was right
//   {"line":N, "error":"..."}                          it did not, and why
//
// An error line also carries "launched":true when the kernel had been
// launched, "cuda_error" (cudaGetErrorName) when a CUDA call failed, and
// "context_failed":true when that failure was a fault inside the kernel,
// which leaves the CUDA context unusable: every later line is then answered
// "not run: the CUDA context failed on an earlier line", and the Go side
// runs those lines again in a fresh process.
//
// A plan is a flat JSON object (shared.cuh's format, which a learner's
// kernel's program reads too) that the Go side (cuda/plan.go, with
// PlanWriter) writes from the experiment spec and the kernel table of
// lessons/spec: the kernel, the arguments its body takes, and every size
// derived from them, so that the harness computes none of the spec's
// rules:
//
//   {"kernel":"strided_copy","n":1048576,"block":256,"elem_bytes":4,
//    "stride":32,"l2_fetch_granularity":64,"blocks":128,"threads":32768,
//    "block_x":256,"block_y":1,"grid_x":128,"grid_y":1,"shared_bytes":0,
//    "bytes_in":4194304,"bytes_out":4194304,
//    "memcpy_from":"in","memcpy_to":"out"}
//
// block_x x block_y is the block (block_y 1 for the 1D kernels), grid_x x
// grid_y the grid, shared_bytes each block's dynamic shared memory (only
// transpose_tiled takes any).
//
// bytes_NAME sizes the buffer the kernel calls NAME; memcpy_from names the
// buffer whose cudaMemcpy is the launch's ceiling and memcpy_to where it
// goes ("" for a scratch buffer). What the harness does check is what each
// kernel body needs not to fault: that its buffers hold what it touches
// and its vector accesses are aligned (the kKernels table, below).
//
// Modes:
//   (default)   time each launch: warm-up launches, then timed launches with
//               a CUDA event pair around each one, and the same for a
//               cudaMemcpy of the kernel's data, the ceiling a copy can reach.
//   --profile   launch each plan's kernel exactly once, untimed, so that the
//               i-th k_ kernel a profiler sees is the i-th plan that launched.
//   --info      print what the device is, one JSON line, and exit.
//   --calibrate measure the load latencies of DRAM and of the L2 by a
//               pointer chase, print them as one JSON line, and exit:
//               {"dram_latency_ns":..,"l2_latency_ns":..,"dram_chase_bytes":..,
//                "l2_chase_bytes":..,"chase_steps":..,"timed_chases":..}
//               (cuda.Latencies reads it; coalesce calibrate fits with it).
//
// Every result is checked before it is reported: the harness fills the
// buffers with known data, runs the kernel once, and compares what it wrote
// with what it should have written (on the GPU, by the check_ kernels). A
// kernel that computed the wrong thing gets an error line, never a time.
//
// Options: --input FILE (default stdin), --output FILE (default stdout),
// --warmup N (>= 3, default 3), --reps N (>= 9, default 20), --no-flush.
//
// Exit status (shared.cuh's Exit): 0 when every line was answered with a
// result, 1 when some line got an error (or the --calibrate chase failed),
// 2 on a usage error, 3 when there is no CUDA device, 4 when there is no
// usable driver.
#include "kernels.cuh"
#include "shared.cuh"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

// ===========================================================================
// Errors and the plan: Failure, ck, strf, jstr, JParser and Plan are the
// shared ones (shared.cuh), which a learner's kernel's program uses too.

using namespace coalesce_host;

#define CK(call) ck((call), #call)

// ===========================================================================
// Helper kernels: filling and checking (the L2 flush is shared.cuh's). None
// of their names starts with k_, so a profiler filtering on ^k_ never sees
// them.

// Result collects a check: how many elements were wrong, and the first.
struct Result {
    unsigned long long bad;
    unsigned long long first;
};

// mix is a 32-bit integer hash (Wellons' lowbias32): neighbouring words get
// unrelated values, so a kernel that reads the wrong element is caught.
__host__ __device__ inline uint32_t mix(unsigned long long k) {
    uint32_t x = (uint32_t)(k ^ (k >> 32));
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

// fill_float is the value the float kernels start from: a small whole
// number, so that +1 and sums of up to 256 of them are exact in float.
__host__ __device__ inline float fill_float(long long k) { return (float)(mix((unsigned long long)k) & 0x3FFF); }

// Bytes below 0x80 only: the poison written into outputs (0xA5) and the
// sentinel of strided_read (0xFF) can then never be loaded from an input.
__global__ void init_bytes(uint32_t* p, long long nwords) {
    for (long long k = thread_index(); k < nwords; k += (long long)gridDim.x * blockDim.x)
        p[k] = mix((unsigned long long)k) & 0x7F7F7F7Fu;
}

__global__ void init_floats(float* p, long long nwords) {
    for (long long k = thread_index(); k < nwords; k += (long long)gridDim.x * blockDim.x)
        p[k] = fill_float(k);
}

__device__ inline void record_bad(Result* r, long long j) {
    atomicAdd(&r->bad, 1ull);
    atomicMin(&r->first, (unsigned long long)j);
}

template <typename T> __host__ __device__ inline T poison() { return (T)0xA5A5A5A5A5A5A5A5ull; }
template <> __host__ __device__ inline uint4 poison<uint4>() {
    return make_uint4(0xA5A5A5A5u, 0xA5A5A5A5u, 0xA5A5A5A5u, 0xA5A5A5A5u);
}

enum CheckMode { FromInput = 0, FromIndex = 1, NothingWritten = 2 };

// check_elements compares every output element j with what the copy family
// must have left there: in[j+offset] where a thread wrote it (j a multiple of
// stride, j < count), the poison the harness wrote before the launch
// everywhere else. Untouched elements are checked too: a store to the wrong
// place is as wrong as a missing one.
template <typename T>
__global__ void check_elements(const T* in, const T* out, long long n, long long stride, long long offset,
                               long long count, int mode, Result* r) {
    for (long long j = thread_index(); j < n; j += (long long)gridDim.x * blockDim.x) {
        bool written = mode != NothingWritten && j % stride == 0 && j < count;
        T want = poison<T>();
        if (written) want = mode == FromIndex ? from_index<T>(j) : in[j + offset];
        if (!same(out[j], want)) record_bad(r, j);
    }
}

__global__ void check_gather(const uint32_t* in, const uint32_t* out, const int* idx, long long n, Result* r) {
    for (long long t = thread_index(); t < n; t += (long long)gridDim.x * blockDim.x)
        if (out[t] != in[idx[t]]) record_bad(r, t);
}

// check_update: after one launch, word k of the buffer is its fill value,
// plus exactly 1 when it is the x field of a struct.
__global__ void check_update(const float* p, long long nwords, int words_per_struct, int x_word, Result* r) {
    for (long long k = thread_index(); k < nwords; k += (long long)gridDim.x * blockDim.x) {
        float want = fill_float(k) + (k % words_per_struct == x_word ? 1.0f : 0.0f);
        if (p[k] != want) record_bad(r, k);
    }
}

// check_sum: the fields are whole numbers below 2^14 and at most 256 of
// them, so every partial sum is exact and the order of addition cannot
// matter: the sum must match exactly.
__global__ void check_sum(const float* out, long long n, int words_per_struct, Result* r) {
    for (long long t = thread_index(); t < n; t += (long long)gridDim.x * blockDim.x) {
        float want = 0.0f;
        for (int f = 0; f < words_per_struct; f++) want += fill_float(t * words_per_struct + f);
        if (out[t] != want) record_bad(r, t);
    }
}

// check_sum_soa: check_sum for the field-major layout, where field f of
// element t is word f*n+t.
__global__ void check_sum_soa(const float* out, long long n, int fields, Result* r) {
    for (long long t = thread_index(); t < n; t += (long long)gridDim.x * blockDim.x) {
        float want = 0.0f;
        for (int f = 0; f < fields; f++) want += fill_float((long long)f * n + t);
        if (out[t] != want) record_bad(r, t);
    }
}

// check_transpose: out is the cols x rows transpose of in, so word j of out
// (row c = j / rows, column r = j % rows) must be word r*cols + c of in.
// Every word of out is compared, and the fill gives neighbouring words
// unrelated values, so a missed or a misplaced element is caught.
__global__ void check_transpose(const uint32_t* in, const uint32_t* out, long long rows, long long cols, Result* r) {
    long long n = rows * cols;
    for (long long j = thread_index(); j < n; j += (long long)gridDim.x * blockDim.x) {
        long long c = j / rows, row = j % rows;
        if (out[j] != in[row * cols + c]) record_bad(r, j);
    }
}

// ===========================================================================
// The device and its buffers.

struct Device {
    cudaDeviceProp prop;
    int helper_blocks = 0;  // grid of the fill and check helpers
    L2Flush flush;          // allocated when a timed run or --calibrate flushes
    Result* result = nullptr;  // device memory for the checks
};
static Device dev;

// Buffer is one cudaMalloc'd allocation (256-byte aligned by cudaMalloc).
struct Buffer {
    void* p = nullptr;
    size_t bytes = 0;  // what the kernel uses
    Buffer() = default;
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    ~Buffer() {
        if (p) cudaFree(p);
    }
    void alloc(size_t b, const char* name) {
        bytes = b;
        // Round the allocation up to 16 bytes so the word-wise fill and the
        // 16-byte types never run past it; the kernel uses only `bytes`.
        cudaError_t e = cudaMalloc(&p, (b + 15) / 16 * 16);
        if (e != cudaSuccess) {
            p = nullptr;
            throw Failure(strf("cudaMalloc of %zu bytes for %s: %s", b, name, cudaGetErrorString(e)), e);
        }
    }
    template <typename T> T* as() const { return (T*)p; }
};

static void check_result(const char* what) {
    Result h;
    CK(cudaMemcpy(&h, dev.result, sizeof h, cudaMemcpyDeviceToHost));
    if (h.bad != 0)
        throw Failure(strf("verification failed: %llu %s wrong, the first at index %llu", h.bad, what, h.first));
}

static void reset_result() {
    Result h = {0, ULLONG_MAX};
    CK(cudaMemcpy(dev.result, &h, sizeof h, cudaMemcpyHostToDevice));
}

// ===========================================================================
// One plan, prepared: its buffers, its launch and its check.

struct Run {
    Plan p;
    std::string kernel;
    long long n = 0, threads = 0, blocks = 0, block = 0;
    // The launch's shape: 1D kernels have block_y = grid_y = 1.
    long long block_x = 0, block_y = 0, grid_x = 0, grid_y = 0;
    long long shared_bytes = 0;  // dynamic shared memory per block
    std::map<std::string, Buffer> bufs;
    Buffer scratch;
    Buffer* copy_src = nullptr;  // what the cudaMemcpy ceiling copies
    Buffer* copy_dst = nullptr;
    std::function<void()> launch;
    const void* fn = nullptr;  // the kernel launch runs, for its attributes
    std::function<void()> check;
    const char* checked = "output elements";  // what the check counts, for its message

    // buf returns the buffer the kernel calls name, allocated at the size
    // the plan gives it (bytes_NAME).
    Buffer& buf(const std::string& name) {
        auto it = bufs.find(name);
        if (it == bufs.end()) throw Failure("plan: no bytes_" + name + " for the buffer " + name + " of " + kernel);
        return it->second;
    }
    // need checks that buffer name holds at least bytes: the body would
    // otherwise read or write past it.
    void need(const std::string& name, long long bytes) {
        if ((long long)buf(name).bytes < bytes)
            throw Failure(strf("plan: %s touches %lld bytes of %s, but bytes_%s is %zu", kernel.c_str(), bytes,
                               name.c_str(), name.c_str(), buf(name).bytes));
    }
    dim3 grid() const { return dim3((unsigned)grid_x, (unsigned)grid_y); }
    dim3 blk() const { return dim3((unsigned)block_x, (unsigned)block_y); }
};

// set_kernel makes k, called with args, the run's launch, on the plan's
// grid and block with its dynamic shared memory, and the function whose
// attributes check_fits reads: one kernel for both, so the check is always
// about the body that runs.
template <typename... P, typename... A>
static void set_kernel(Run& r, void (*k)(P...), A... args) {
    dim3 g = r.grid(), b = r.blk();
    size_t shm = (size_t)r.shared_bytes;
    r.fn = (const void*)k;
    r.launch = [=] { k<<<g, b, shm>>>(args...); };
}

// allocate makes every buffer the plan sizes, and the memcpy scratch,
// after checking that they fit in free memory.
static void allocate(Run& r) {
    std::vector<std::pair<std::string, long long>> sizes;
    size_t total = 0;
    for (auto& kv : r.p.m) {
        if (kv.first.rfind("bytes_", 0) != 0) continue;
        long long b = r.p.integer(kv.first);
        if (b < 1) throw Failure(strf("plan: %s = %lld: want a positive size", kv.first.c_str(), b));
        sizes.push_back({kv.first.substr(6), b});
        total += ((size_t)b + 15) / 16 * 16;
    }
    if (sizes.empty()) throw Failure("plan: no bytes_NAME: a launch needs its buffers");
    std::string from = r.p.text("memcpy_from"), to = r.p.text("memcpy_to");
    long long copy_bytes = -1;
    for (auto& nb : sizes)
        if (nb.first == from) copy_bytes = nb.second;
    if (copy_bytes < 0) throw Failure("plan: memcpy_from \"" + from + "\" is not a buffer of the plan");
    if (to.empty()) total += ((size_t)copy_bytes + 15) / 16 * 16;
    size_t free_b = 0, total_b = 0;
    CK(cudaMemGetInfo(&free_b, &total_b));
    const size_t margin = 64ull << 20;  // room for the runtime's own allocations
    if (total + margin > free_b)
        throw Failure(strf("the launch needs %.3f GiB of device memory for its buffers, but only %.3f GiB of %.3f GiB is free: make n smaller",
                           total / 1073741824.0, free_b / 1073741824.0, total_b / 1073741824.0));
    for (auto& nb : sizes) r.bufs[nb.first].alloc((size_t)nb.second, nb.first.c_str());
    r.copy_src = &r.buf(from);
    if (to.empty()) {
        r.scratch.alloc(r.copy_src->bytes, "memcpy destination");
        r.copy_dst = &r.scratch;
    } else {
        r.copy_dst = &r.buf(to);
        if (r.copy_dst->bytes < r.copy_src->bytes) throw Failure("plan: memcpy_to \"" + to + "\" is smaller than memcpy_from");
    }
}

static std::vector<int> read_indices(const std::string& path, long long n) {
    FILE* f = fopen(path.c_str(), "rb");
    if (!f) throw Failure(strf("index_file %s: %s", path.c_str(), strerror(errno)));
    std::vector<int> idx;
    try {
        if (fseeko(f, 0, SEEK_END) != 0) throw Failure(strf("index_file %s: %s", path.c_str(), strerror(errno)));
        long long size = ftello(f);
        if (size != 4 * n)
            throw Failure(strf("index_file %s has %lld bytes, want exactly %lld (n = %lld little-endian int32 indices, one per thread)",
                               path.c_str(), size, 4 * n, n));
        rewind(f);
        idx.resize(n);
        // The file is little-endian, as is every machine CUDA runs on.
        if (fread(idx.data(), 4, n, f) != (size_t)n) throw Failure(strf("index_file %s: short read", path.c_str()));
    } catch (...) {
        fclose(f);
        throw;
    }
    fclose(f);
    for (long long t = 0; t < n; t++)
        if (idx[t] < 0 || idx[t] >= n)
            throw Failure(strf("index_file %s: idx[%lld] = %d is out of range, want 0 <= idx < n = %lld", path.c_str(), t, idx[t], n));
    return idx;
}

static void fill_bytes(Buffer& b) {
    init_bytes<<<dev.helper_blocks, 256>>>(b.as<uint32_t>(), (long long)((b.bytes + 15) / 16 * 4));
    CK(cudaGetLastError());
}

static void fill_floats(Buffer& b, long long nwords) {
    init_floats<<<dev.helper_blocks, 256>>>(b.as<float>(), nwords);
    CK(cudaGetLastError());
}

// The copy family: coalesced_copy, strided_copy, strided_read,
// strided_write, offset_copy, on elements of elem_bytes bytes.
template <typename T> static void prep_elem(Run& r) {
    const std::string& k = r.kernel;
    long long n = r.n, E = sizeof(T);
    long long stride = 1, offset = 0;
    if (k == "strided_copy" || k == "strided_read" || k == "strided_write") stride = r.p.integer("stride");
    if (k == "offset_copy") offset = r.p.integer("offset");
    // stride 0 would put every thread on element 0, a negative one before
    // the buffer; an offset outside 0..n-1 reads before it.
    if (stride < 1) throw Failure(strf("plan: stride %lld: the body needs at least 1", stride));
    if (offset < 0 || offset >= n) throw Failure(strf("plan: offset %lld: the body needs 0 <= offset < n = %lld", offset, n));
    r.need("out", n * E);
    T* out = r.buf("out").as<T>();
    T* in = nullptr;
    if (k != "strided_write") {
        r.need("in", n * E);
        fill_bytes(r.buf("in"));
        in = r.buf("in").as<T>();
    }
    int hb = dev.helper_blocks;
    Result* res = dev.result;
    if (k == "coalesced_copy") {
        set_kernel(r, k_coalesced_copy<T>, in, out, n);
        r.check = [=] { check_elements<T><<<hb, 256>>>(in, out, n, 1, 0, n, FromInput, res); };
    } else if (k == "strided_copy") {
        set_kernel(r, k_strided_copy<T>, in, out, n, stride);
        r.check = [=] { check_elements<T><<<hb, 256>>>(in, out, n, stride, 0, n, FromInput, res); };
    } else if (k == "strided_read") {
        T sentinel = all_ones<T>();
        set_kernel(r, k_strided_read<T>, in, out, n, stride, sentinel);
        r.check = [=] { check_elements<T><<<hb, 256>>>(in, out, n, stride, 0, n, NothingWritten, res); };
    } else if (k == "strided_write") {
        set_kernel(r, k_strided_write<T>, out, n, stride);
        r.check = [=] { check_elements<T><<<hb, 256>>>(out, out, n, stride, 0, n, FromIndex, res); };
    } else {
        set_kernel(r, k_offset_copy<T>, in, out, n, offset);
        r.check = [=] { check_elements<T><<<hb, 256>>>(in, out, n, 1, offset, n - offset, FromInput, res); };
    }
}

static void prep_copy_family(Run& r) {
    switch (r.p.integer("elem_bytes")) {
    case 1: prep_elem<uint8_t>(r); break;
    case 2: prep_elem<uint16_t>(r); break;
    case 4: prep_elem<uint32_t>(r); break;
    case 8: prep_elem<unsigned long long>(r); break;
    case 16: prep_elem<uint4>(r); break;
    default: throw Failure(strf("plan: elem_bytes %lld: the bodies are built for 1, 2, 4, 8 and 16", r.p.integer("elem_bytes")));
    }
}

// grid_stride_kernel returns the instance of k_grid_stride_copy whose
// unroll U equals the plan's, counting U up from 1 at compile time.
template <typename V, int U>
static auto grid_stride_kernel(int unroll) -> void (*)(const V*, V*, long long) {
    if (unroll == U) return k_grid_stride_copy<V, U>;
    if constexpr (U < 16) return grid_stride_kernel<V, U + 1>(unroll);
    return nullptr;
}

// The vector copies: vectorized_copy moves the n-offset floats from
// in[offset] on as (n-offset)/width vectors of width floats, grid_stride_copy
// n floats as n/width vectors.
template <typename V> static void prep_vectors(Run& r, long long offset, long long nvec) {
    V* out = r.buf("out").as<V>();
    if (r.kernel == "vectorized_copy") {
        const float* in = r.buf("in").as<float>();
        set_kernel(r, k_vectorized_copy<V>, in, out, nvec, offset);
    } else {
        const V* in = r.buf("in").as<V>();
        long long u = r.p.integer("unroll");
        if (u < 1 || u > 16) throw Failure(strf("plan: unroll %lld: the body is built for 1 to 16", u));
        set_kernel(r, grid_stride_kernel<V, 1>((int)u), in, out, nvec);
    }
}

static void prep_vector_family(Run& r) {
    long long n = r.n, w = r.p.integer("width"), offset = 0;
    if (r.kernel == "vectorized_copy") offset = r.p.integer("offset");
    // The loads start offset floats into in and must end inside it. An
    // offset that is not a multiple of width is NOT refused: the
    // misaligned loads fault, and that fault is what the lesson shows.
    if (w < 1) throw Failure(strf("plan: width %lld: want 1, 2 or 4", w));
    if (offset < 0 || n - offset < w)
        throw Failure(strf("plan: offset %lld with n = %lld and width %lld: the body needs 0 <= offset and at least one whole vector after it", offset, n, w));
    long long nvec = (n - offset) / w;
    r.need("in", 4 * n);
    r.need("out", 4 * n);
    fill_floats(r.buf("in"), n);
    const uint32_t* inw = r.buf("in").as<uint32_t>();
    const uint32_t* outw = r.buf("out").as<uint32_t>();
    int hb = dev.helper_blocks;
    Result* res = dev.result;
    long long count = nvec * w;
    r.check = [=] { check_elements<uint32_t><<<hb, 256>>>(inw, outw, n, 1, offset, count, FromInput, res); };
    // cudaMalloc's 256-byte alignment keeps every store aligned to its size,
    // and every load when offset is a multiple of width.
    if (w == 1 && r.kernel == "grid_stride_copy") prep_vectors<float>(r, offset, nvec);
    else if (w == 2) prep_vectors<float2>(r, offset, nvec);
    else if (w == 4) prep_vectors<float4>(r, offset, nvec);
    else throw Failure(strf("plan: width %lld: %s is built for %s floats", w, r.kernel.c_str(), r.kernel == "grid_stride_copy" ? "1, 2 and 4" : "2 and 4"));
}

static void prep_gather(Run& r) {
    long long n = r.n;
    std::vector<int> host_idx = read_indices(r.p.text("index_file"), n);
    r.need("in", 4 * n);
    r.need("out", 4 * n);
    r.need("idx", 4 * n);
    fill_floats(r.buf("in"), n);
    CK(cudaMemcpy(r.buf("idx").p, host_idx.data(), 4 * (size_t)n, cudaMemcpyHostToDevice));
    const float* in = r.buf("in").as<float>();
    float* out = r.buf("out").as<float>();
    const int* idx = r.buf("idx").as<int>();
    int hb = dev.helper_blocks;
    Result* res = dev.result;
    set_kernel(r, k_gather_copy, in, out, idx, n);
    r.check = [=] { check_gather<<<hb, 256>>>((const uint32_t*)in, (const uint32_t*)out, idx, n, res); };
}

// The updates: update_x_aos adds 1 to the float at field_offset of each of
// n structs of struct_bytes (the buffer p); update_x_soa to each of n
// floats (the buffer x).
static void prep_update(Run& r, const char* name, bool aos) {
    long long n = r.n, sb = 4, fo = 0;
    if (aos) {
        sb = r.p.integer("struct_bytes");
        fo = r.p.integer("field_offset");
        // x is a float: it must lie inside the struct, 4-byte aligned.
        if (sb < 4 || sb % 4 != 0 || fo < 0 || fo % 4 != 0 || fo + 4 > sb)
            throw Failure(strf("plan: field_offset %lld in a %lld-byte struct: the body reads an aligned float inside the struct", fo, sb));
    }
    r.need(name, n * sb);
    long long nwords = n * sb / 4;
    fill_floats(r.buf(name), nwords);
    float* p = r.buf(name).as<float>();
    if (aos) {
        int sbi = (int)sb, foi = (int)fo;
        char* base = r.buf(name).as<char>();
        set_kernel(r, k_update_x_aos, base, n, sbi, foi);
    } else {
        set_kernel(r, k_update_x_soa, p, n);
    }
    int wps = (int)(sb / 4), xw = (int)(fo / 4), hb = dev.helper_blocks;
    Result* res = dev.result;
    r.check = [=] { check_update<<<hb, 256>>>(p, nwords, wps, xw, res); };
    r.checked = "4-byte words of the buffer";
}

static void prep_update_aos(Run& r) { prep_update(r, "p", true); }
static void prep_update_soa(Run& r) { prep_update(r, "x", false); }

static void prep_sum_fields(Run& r) {
    long long n = r.n, sb = r.p.integer("struct_bytes");
    bool vec = r.p.flag("vector");
    if (sb < 4 || sb % 4 != 0) throw Failure(strf("plan: struct_bytes %lld: the body reads whole floats", sb));
    // Each float4 must be 16-byte aligned, or the load faults.
    if (vec && sb % 16 != 0) throw Failure(strf("plan: struct_bytes %lld with vector true: the body's 16-byte loads need a multiple of 16", sb));
    r.need("p", n * sb);
    r.need("out", 4 * n);
    fill_floats(r.buf("p"), n * sb / 4);
    const char* base = r.buf("p").as<char>();
    float* out = r.buf("out").as<float>();
    int sbi = (int)sb, wps = (int)(sb / 4), hb = dev.helper_blocks;
    Result* res = dev.result;
    if (vec) {
        set_kernel(r, k_sum_fields_aos<true>, base, out, n, sbi);
    } else {
        set_kernel(r, k_sum_fields_aos<false>, base, out, n, sbi);
    }
    r.check = [=] { check_sum<<<hb, 256>>>(out, n, wps, res); };
}

// sum_fields_soa: n elements of struct_bytes/4 float fields stored field by
// field in p (field f of element t at word f*n+t); thread t sums its fields.
static void prep_sum_fields_soa(Run& r) {
    long long n = r.n, sb = r.p.integer("struct_bytes");
    if (sb < 4 || sb % 4 != 0) throw Failure(strf("plan: struct_bytes %lld: the body reads whole floats", sb));
    r.need("p", n * sb);
    r.need("out", 4 * n);
    fill_floats(r.buf("p"), n * sb / 4);
    const float* p = r.buf("p").as<float>();
    float* out = r.buf("out").as<float>();
    int sbi = (int)sb, fields = (int)(sb / 4), hb = dev.helper_blocks;
    Result* res = dev.result;
    set_kernel(r, k_sum_fields_soa, p, out, n, sbi);
    r.check = [=] { check_sum_soa<<<hb, 256>>>(out, n, fields, res); };
}

// Matrix is what the matrix kernels' bodies take: a rows x cols matrix,
// walked by blocks of tile x block_rows threads, each covering a tile x tile
// square, and (transpose_tiled) the square's pad.
struct Matrix {
    long long rows, cols;
    int tile, block_rows, pad;
};

// matrix_of reads the matrix keys and checks what the bodies need not to
// fault or miss an element: n = rows*cols floats in each buffer, a block of
// exactly tile x block_rows threads (the body's loop steps by block_rows
// through tile rows, so it must divide tile, or a thread runs past its
// square and, in transpose_tiled, past the shared buffer), a grid that
// covers the matrix with one block a square (x along the dimension
// threadIdx.x walks), and, for transpose_tiled, pad >= 0 and shared_bytes
// holding the padded square (prepare refuses shared memory to the others).
static Matrix matrix_of(Run& r, bool x_walks_rows, bool tiled) {
    Matrix m;
    m.rows = r.p.integer("rows");
    m.cols = r.p.integer("cols");
    long long tile = r.p.integer("tile"), br = r.p.integer("block_rows"), pad = r.p.integer("pad");
    if (m.rows < 1 || m.cols < 1) throw Failure(strf("plan: rows %lld, cols %lld: want 1 or more each", m.rows, m.cols));
    if (m.rows > r.n / m.cols || m.rows * m.cols != r.n)
        throw Failure(strf("plan: rows %lld x cols %lld: want n = %lld elements", m.rows, m.cols, r.n));
    if (tile < 1 || tile > 32) throw Failure(strf("plan: tile %lld: the body is built for 1 to 32", tile));
    if (br < 1 || br > tile || tile % br != 0)
        throw Failure(strf("plan: block_rows %lld: the body needs a divisor of tile = %lld", br, tile));
    if (r.block_x != tile || r.block_y != br)
        throw Failure(strf("plan: a block of %lld x %lld threads: the body needs tile x block_rows = %lld x %lld", r.block_x, r.block_y, tile, br));
    long long along_x = x_walks_rows ? m.cols : m.rows, along_y = x_walks_rows ? m.rows : m.cols;
    long long gx = (along_x + tile - 1) / tile, gy = (along_y + tile - 1) / tile;
    if (r.grid_x != gx || r.grid_y != gy)
        throw Failure(strf("plan: a grid of %lld x %lld blocks: %s needs %lld x %lld to cover %lld x %lld with %lld x %lld squares",
                           r.grid_x, r.grid_y, r.kernel.c_str(), gx, gy, m.rows, m.cols, tile, tile));
    if (tiled) {
        if (pad < 0 || pad > tile) throw Failure(strf("plan: pad %lld: the body is built for 0 to tile = %lld", pad, tile));
        long long want = 4 * tile * (tile + pad);
        if (r.shared_bytes != want)
            throw Failure(strf("plan: shared_bytes %lld: the body's square of %lld x (%lld + %lld) floats needs %lld", r.shared_bytes, tile, tile, pad, want));
    }
    m.tile = (int)tile;
    m.block_rows = (int)br;
    m.pad = (int)pad;
    return m;
}

// prep_matrix fills in and sets the launch and the check of a matrix
// kernel: the copies must leave out equal to in, the transposes out equal
// to in's transpose, every element of it.
static void prep_matrix(Run& r) {
    const std::string& k = r.kernel;
    bool transpose = k.rfind("transpose_", 0) == 0;
    bool x_walks_rows = k == "copy_rows" || k == "transpose_coalesced_read" || k == "transpose_tiled";
    Matrix m = matrix_of(r, x_walks_rows, k == "transpose_tiled");
    long long n = r.n;
    r.need("in", 4 * n);
    r.need("out", 4 * n);
    fill_bytes(r.buf("in"));
    const float* in = r.buf("in").as<float>();
    float* out = r.buf("out").as<float>();
    long long rows = m.rows, cols = m.cols;
    int tile = m.tile, br = m.block_rows, pad = m.pad;
    if (k == "copy_rows") set_kernel(r, k_copy_rows, in, out, rows, cols, tile, br);
    else if (k == "copy_columns") set_kernel(r, k_copy_columns, in, out, rows, cols, tile, br);
    else if (k == "transpose_coalesced_read") set_kernel(r, k_transpose_coalesced_read, in, out, rows, cols, tile, br);
    else if (k == "transpose_coalesced_write") set_kernel(r, k_transpose_coalesced_write, in, out, rows, cols, tile, br);
    else set_kernel(r, k_transpose_tiled, in, out, rows, cols, tile, br, pad);
    const uint32_t* inw = (const uint32_t*)in;
    const uint32_t* outw = (const uint32_t*)out;
    int hb = dev.helper_blocks;
    Result* res = dev.result;
    if (transpose) {
        r.check = [=] { check_transpose<<<hb, 256>>>(inw, outw, rows, cols, res); };
    } else {
        r.check = [=] { check_elements<uint32_t><<<hb, 256>>>(inw, outw, n, 1, 0, n, FromInput, res); };
    }
}

// kKernels is the harness's kernel table: for each kernel of lessons/spec,
// the function that fills its buffers and sets its launch and its check.
// cuda's TestKernelTablesAgree holds it to the Go table.
static const std::map<std::string, void (*)(Run&)> kKernels = {
    {"coalesced_copy", prep_copy_family},
    {"strided_copy", prep_copy_family},
    {"strided_read", prep_copy_family},
    {"strided_write", prep_copy_family},
    {"offset_copy", prep_copy_family},
    {"vectorized_copy", prep_vector_family},
    {"grid_stride_copy", prep_vector_family},
    {"gather_copy", prep_gather},
    {"update_x_aos", prep_update_aos},
    {"update_x_soa", prep_update_soa},
    {"sum_fields_aos", prep_sum_fields},
    {"sum_fields_soa", prep_sum_fields_soa},
    {"copy_rows", prep_matrix},
    {"copy_columns", prep_matrix},
    {"transpose_coalesced_read", prep_matrix},
    {"transpose_coalesced_write", prep_matrix},
    {"transpose_tiled", prep_matrix},
};

// check_fits refuses a block the compiled kernel cannot start: a block's
// threads share the SM's registers, so a body that needs many (an unrolled
// grid_stride_copy holds U vectors in flight) launches only smaller blocks,
// and the launch would fail with cudaErrorLaunchOutOfResources. Likewise a
// block's dynamic shared memory above what the function may take (48 KiB
// unless raised, less what it declares statically) would fail the launch
// with cudaErrorInvalidValue. Refused here, before anything runs, the line
// gets a reason a learner can act on and a profiler's run goes on to the
// next line.
static void check_fits(const Run& r) {
    cudaFuncAttributes a;
    CK(cudaFuncGetAttributes(&a, r.fn));
    if (r.shared_bytes > a.maxDynamicSharedSizeBytes)
        throw Failure(strf("shared_bytes %lld: %s as compiled for this GPU takes at most %d bytes of dynamic shared memory a block: "
                           "want a smaller tile or pad",
                           r.shared_bytes, r.kernel.c_str(), a.maxDynamicSharedSizeBytes));
    if (r.block > a.maxThreadsPerBlock)
        throw Failure(strf("block %lld: %s as compiled for this GPU uses %d registers a thread, so a block holds at most %d threads: "
                           "want block <= %d%s",
                           r.block, r.kernel.c_str(), a.numRegs, a.maxThreadsPerBlock, a.maxThreadsPerBlock,
                           r.kernel == "grid_stride_copy" ? ", or a smaller unroll" : ""));
}

static void prepare(Run& r) {
    r.kernel = r.p.kernel();
    auto it = kKernels.find(r.kernel);
    if (it == kKernels.end()) throw Failure("plan: unknown kernel \"" + r.kernel + "\"");
    r.n = r.p.integer("n");
    r.block = r.p.integer("block");
    r.blocks = r.p.integer("blocks");
    r.threads = r.p.integer("threads");
    if (r.n < 1) throw Failure(strf("plan: n = %lld: want 1 or more", r.n));
    if (r.block < 1 || r.block > dev.prop.maxThreadsPerBlock)
        throw Failure(strf("plan: block = %lld: this GPU takes 1 to %d threads per block", r.block, dev.prop.maxThreadsPerBlock));
    if (r.blocks < 1 || r.blocks > dev.prop.maxGridSize[0])
        throw Failure(strf("plan: blocks = %lld: this GPU takes 1 to %d blocks in x", r.blocks, dev.prop.maxGridSize[0]));
    if (r.threads < 1 || r.threads > r.blocks * r.block || r.threads <= (r.blocks - 1) * r.block)
        throw Failure(strf("plan: %lld threads in %lld blocks of %lld: want the last block to hold some", r.threads, r.blocks, r.block));
    // The shape: blocks of block_x x block_y threads, a grid of grid_x x
    // grid_y blocks, each within the device's limits and multiplying out to
    // block and blocks.
    r.block_x = r.p.integer("block_x");
    r.block_y = r.p.integer("block_y");
    r.grid_x = r.p.integer("grid_x");
    r.grid_y = r.p.integer("grid_y");
    r.shared_bytes = r.p.integer("shared_bytes");
    if (r.block_x < 1 || r.block_x > dev.prop.maxThreadsDim[0] || r.block_y < 1 || r.block_y > dev.prop.maxThreadsDim[1] ||
        r.block_x * r.block_y != r.block)
        throw Failure(strf("plan: a block of %lld x %lld threads: want block = %lld, x in 1..%d, y in 1..%d", r.block_x, r.block_y,
                           r.block, dev.prop.maxThreadsDim[0], dev.prop.maxThreadsDim[1]));
    if (r.grid_x < 1 || r.grid_x > dev.prop.maxGridSize[0] || r.grid_y < 1 || r.grid_y > dev.prop.maxGridSize[1] ||
        r.grid_x * r.grid_y != r.blocks)
        throw Failure(strf("plan: a grid of %lld x %lld blocks: want blocks = %lld, x in 1..%d, y in 1..%d", r.grid_x, r.grid_y,
                           r.blocks, dev.prop.maxGridSize[0], dev.prop.maxGridSize[1]));
    if (r.shared_bytes < 0) throw Failure(strf("plan: shared_bytes %lld: want 0 or more", r.shared_bytes));
    // The 1D bodies number threads by blockIdx.x alone: a second dimension
    // would run each of them several times over.
    if ((r.block_y != 1 || r.grid_y != 1) && it->second != prep_matrix)
        throw Failure(strf("plan: block_y %lld, grid_y %lld: %s is a 1D kernel, want 1 and 1", r.block_y, r.grid_y, r.kernel.c_str()));
    if (r.shared_bytes != 0 && r.kernel != "transpose_tiled")
        throw Failure(strf("plan: shared_bytes %lld: %s uses no shared memory, want 0", r.shared_bytes, r.kernel.c_str()));
    allocate(r);
    it->second(r);
    if (!r.launch || !r.check || !r.fn) throw Failure("plan: " + r.kernel + " was not prepared");
    check_fits(r);
}

// poison_outputs writes 0xA5 into every buffer the kernel writes and does
// not read, so that the check can tell an element the kernel wrote from one
// it left alone.
static void poison_outputs(Run& r) {
    auto it = r.bufs.find("out");
    if (it != r.bufs.end()) CK(cudaMemset(it->second.p, 0xA5, it->second.bytes));
}

// launch_checked launches the kernel and reports a failed launch (bad
// configuration) or a failed execution (a fault) as a Failure.
static void launch_checked(Run& r) {
    r.launch();
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
}

static void run_check(Run& r) {
    reset_result();
    r.check();
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    check_result(r.checked);
}

// ===========================================================================
// Timing

struct Timing {
    double median = 0, min = 0, max = 0;
    int count = 0;
};

// time_it times fn as the shared timing loop does (time_launches: warm-up
// launches, then timed launches with a CUDA event pair around each, the L2
// flushed before every one when do_flush), and returns the median, the
// fastest and the slowest in milliseconds.
static Timing time_it(const std::function<void()>& fn, int warmup, int reps, bool do_flush) {
    std::vector<double> ms = time_launches(fn, warmup, reps, do_flush ? &dev.flush : nullptr);
    std::sort(ms.begin(), ms.end());
    Timing tm;
    tm.count = reps;
    tm.min = ms.front();
    tm.max = ms.back();
    tm.median = reps % 2 ? ms[reps / 2] : (ms[reps / 2 - 1] + ms[reps / 2]) / 2;
    return tm;
}

// ===========================================================================
// Output

static std::string jnum(double v) { return strf("%.9g", v); }

static FILE* out_file = stdout;

static void emit(const std::string& line) {
    fputs(line.c_str(), out_file);
    fputc('\n', out_file);
    fflush(out_file);
}

// ===========================================================================
// Modes

struct Options {
    bool profile = false;
    bool info = false;
    bool calibrate = false;
    bool flush = true;
    int warmup = 3;
    int reps = 20;
    std::string input, output;
};

// device_error_exit says on stderr why CUDA cannot reach the GPU, and
// returns the exit status for it (missing_exit).
static int device_error_exit(cudaError_t e, const char* what) {
    int code = missing_exit(e);
    fprintf(stderr, "{\"error\":%s,\"cuda_error\":%s}\n",
            jstr(strf("%s: %s", what, cudaGetErrorString(e))).c_str(), jstr(cudaGetErrorName(e)).c_str());
    return code;
}

static int info(int default_l2) {
    const cudaDeviceProp& p = dev.prop;
    int driver = 0, runtime = 0, mem_khz = -1, sm_khz = -1;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    if (cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, 0) != cudaSuccess) mem_khz = -1;
    if (cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, 0) != cudaSuccess) sm_khz = -1;
    cudaGetLastError();
    size_t free_b = 0, total_b = 0;
    CK(cudaMemGetInfo(&free_b, &total_b));
    std::string o = "{";
    o += "\"gpu\":" + jstr(p.name);
    o += strf(",\"compute_capability\":\"%d.%d\"", p.major, p.minor);
    o += strf(",\"sms\":%d", p.multiProcessorCount);
    o += strf(",\"l2_bytes\":%d", p.l2CacheSize);
    o += strf(",\"max_threads_per_sm\":%d", p.maxThreadsPerMultiProcessor);
    o += strf(",\"memory_clock_khz\":%d", mem_khz);
    o += strf(",\"sm_clock_khz\":%d", sm_khz);
    o += strf(",\"memory_bus_bits\":%d", p.memoryBusWidth);
    o += strf(",\"driver_version\":%d,\"runtime_version\":%d", driver, runtime);
    o += strf(",\"free_bytes\":%zu,\"total_bytes\":%zu", free_b, total_b);
    o += strf(",\"default_l2_fetch_granularity\":%d", default_l2);
    o += "}";
    emit(o);
    return ExitOK;
}

// chase follows steps links of a cycle in next, starting where *pos says,
// with one thread: each load's address is the value the one before
// returned, so no two loads overlap and the time per step is the latency of
// one load. __ldcg reads through the L2 but not L1, so an L1 hit never
// passes for an L2 one. It leaves where it stopped in *pos, so the next
// launch goes on to lines it has not touched yet. (Not named k_: no
// profiler run picks it up as a course kernel.)
__global__ void chase(const unsigned* next, unsigned* pos, long long steps) {
    unsigned i = *pos;
    for (long long s = 0; s < steps; s++) i = __ldcg(next + i);
    *pos = i;
}

// chase_ns returns the median time of one dependent load, in nanoseconds,
// over a random cycle through every 128-byte line of a buffer of bytes
// bytes: one link per line, so every step is a new line. warm walks the
// whole cycle once first, so that a buffer that fits in the L2 is in it;
// otherwise the L2 is flushed before each timed chase, and the chases,
// which go on from each other, touch fewer lines than the cycle has, so
// every load misses.
static double chase_ns(size_t bytes, long long steps, int reps, bool warm) {
    const size_t slot = 128 / sizeof(unsigned);
    const size_t lines = bytes / 128;
    if (lines < 2 || lines * slot > UINT_MAX) throw Failure(strf("chase over %zu bytes: want 256 B to 16 GiB", bytes));
    // A random order of the lines (Fisher-Yates, xorshift64), linked in
    // that order into one cycle.
    std::vector<unsigned> order(lines);
    for (size_t k = 0; k < lines; k++) order[k] = (unsigned)k;
    unsigned long long x = 0x9E3779B97F4A7C15ull;
    for (size_t k = lines - 1; k > 0; k--) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        std::swap(order[k], order[x % (k + 1)]);
    }
    std::vector<unsigned> next(lines * slot, 0);
    for (size_t k = 0; k < lines; k++) next[order[k] * slot] = (unsigned)(order[(k + 1) % lines] * slot);
    Buffer d_next, d_pos;
    d_next.alloc(next.size() * sizeof(unsigned), "the chase");
    d_pos.alloc(sizeof(unsigned), "the chase's position");
    CK(cudaMemcpy(d_next.p, next.data(), next.size() * sizeof(unsigned), cudaMemcpyHostToDevice));
    unsigned start = order[0] * (unsigned)slot;
    CK(cudaMemcpy(d_pos.p, &start, sizeof start, cudaMemcpyHostToDevice));
    const unsigned* nx = d_next.as<unsigned>();
    unsigned* ps = d_pos.as<unsigned>();
    if (warm) {
        chase<<<1, 1>>>(nx, ps, (long long)lines);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
    }
    Timing t = time_it([=] { chase<<<1, 1>>>(nx, ps, steps); }, 1, reps, !warm);
    return t.median * 1e6 / (double)steps;
}

// calibrate prints the load latencies coalesce calibrate fits the time
// model with: DRAM's, over a buffer four times the L2 (at least 256 MiB,
// at most a quarter of the free memory), and the L2's, over a quarter of it.
static int calibrate() {
    size_t free_b = 0, total_b = 0;
    CK(cudaMemGetInfo(&free_b, &total_b));
    size_t l2 = (size_t)std::max(dev.prop.l2CacheSize, 1 << 20);
    size_t dram_bytes = std::min(std::max(4 * l2, (size_t)256 << 20), free_b / 4) / 128 * 128;
    size_t l2_bytes = l2 / 4 / 128 * 128;
    const long long steps = 20000;
    const int reps = 9;
    double dram = chase_ns(dram_bytes, steps, reps, false);
    double hit = chase_ns(l2_bytes, std::min(steps, (long long)(l2_bytes / 128)), reps, true);
    std::string o = "{\"dram_latency_ns\":" + jnum(dram) + ",\"l2_latency_ns\":" + jnum(hit);
    o += strf(",\"dram_chase_bytes\":%zu,\"l2_chase_bytes\":%zu,\"chase_steps\":%lld,\"timed_chases\":%d}", dram_bytes, l2_bytes, steps, reps);
    emit(o);
    return ExitOK;
}

static std::string result_line(int line, const Run& r, long long l2_read, const Timing* kt, const Timing* mt) {
    std::string o = strf("{\"line\":%d", line);
    if (kt) {
        o += ",\"time_ms\":" + jnum(kt->median) + ",\"time_ms_min\":" + jnum(kt->min) + ",\"time_ms_max\":" + jnum(kt->max);
        o += strf(",\"timed_launches\":%d", kt->count);
    }
    if (mt) {
        o += ",\"memcpy_ms\":" + jnum(mt->median);
        o += strf(",\"memcpy_bytes\":%zu", r.copy_src->bytes);
    }
    o += strf(",\"threads\":%lld,\"grid_blocks\":%lld,\"block\":%lld", r.threads, r.blocks, r.block);
    o += strf(",\"l2_fetch_granularity\":%lld", l2_read);
    o += ",\"launched\":true,\"verified\":true}";
    return o;
}

static bool run_line(int line, const std::string& text, const Options& opt, bool& fatal) {
    bool launched = false;
    try {
        Run r;
        r.p = parse_plan(text);
        prepare(r);
        CK(cudaDeviceSynchronize());  // the fills are done before anything is timed
        // The L2 fetch granularity is a limit of the context: set it before
        // this launch and read back what the driver accepted.
        CK(cudaDeviceSetLimit(cudaLimitMaxL2FetchGranularity, (size_t)r.p.integer("l2_fetch_granularity")));
        size_t l2_read = 0;
        CK(cudaDeviceGetLimit(&l2_read, cudaLimitMaxL2FetchGranularity));
        poison_outputs(r);
        CK(cudaDeviceSynchronize());
        launched = true;
        launch_checked(r);
        run_check(r);
        if (opt.profile) {
            emit(result_line(line, r, (long long)l2_read, nullptr, nullptr));
            return true;
        }
        Timing kt = time_it(r.launch, opt.warmup, opt.reps, opt.flush);
        void* src = r.copy_src->p;
        void* dst = r.copy_dst->p;
        size_t bytes = r.copy_src->bytes;
        Timing mt = time_it([=] { cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice); }, opt.warmup, opt.reps, opt.flush);
        emit(result_line(line, r, (long long)l2_read, &kt, &mt));
        return true;
    } catch (const Failure& f) {
        // An error inside a kernel (a fault: a misaligned or out-of-bounds
        // access) leaves the context unusable: every later call fails too,
        // so the remaining lines are refused, and this line says so, for
        // the Go side to send them to a fresh process.
        cudaError_t sticky = cudaDeviceSynchronize();
        cudaGetLastError();
        if (sticky != cudaSuccess) fatal = true;
        std::string o = strf("{\"line\":%d,\"error\":%s", line, jstr(f.what()).c_str());
        if (launched) o += ",\"launched\":true";
        if (f.code != cudaSuccess) o += ",\"cuda_error\":" + jstr(cudaGetErrorName(f.code));
        if (fatal) o += ",\"context_failed\":true";
        o += "}";
        emit(o);
        return false;
    }
}

static int usage(const char* msg) {
    fprintf(stderr, "harness: %s\nusage: harness [--info] [--calibrate] [--profile] [--input FILE] [--output FILE] [--warmup N>=3] [--reps N>=9] [--no-flush]\n", msg);
    return ExitUsage;
}

int main(int argc, char** argv) {
    Options opt;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto next = [&](const char* name) -> std::string {
            if (i + 1 >= argc) throw std::runtime_error(std::string(name) + " needs a value");
            return argv[++i];
        };
        try {
            if (a == "--info") opt.info = true;
            else if (a == "--calibrate") opt.calibrate = true;
            else if (a == "--profile") opt.profile = true;
            else if (a == "--no-flush") opt.flush = false;
            else if (a == "--input") opt.input = next("--input");
            else if (a == "--output") opt.output = next("--output");
            else if (a == "--warmup") opt.warmup = std::stoi(next("--warmup"));
            else if (a == "--reps") opt.reps = std::stoi(next("--reps"));
            else return usage(("unknown argument " + a).c_str());
        } catch (const std::exception& e) {
            return usage(e.what());
        }
    }
    if (opt.warmup < 3) return usage("--warmup: want at least 3 warm-up launches");
    if (opt.reps < 9) return usage("--reps: want at least 9 timed launches");

    FILE* in = stdin;
    if (!opt.input.empty() && !(in = fopen(opt.input.c_str(), "r"))) {
        fprintf(stderr, "harness: %s: %s\n", opt.input.c_str(), strerror(errno));
        return ExitUsage;
    }
    if (!opt.output.empty() && !(out_file = fopen(opt.output.c_str(), "w"))) {
        fprintf(stderr, "harness: %s: %s\n", opt.output.c_str(), strerror(errno));
        return ExitUsage;
    }

    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) return device_error_exit(e, "no usable CUDA device");
    if (count == 0) return device_error_exit(cudaErrorNoDevice, "no CUDA device");
    if ((e = cudaSetDevice(0)) != cudaSuccess || (e = cudaGetDeviceProperties(&dev.prop, 0)) != cudaSuccess)
        return device_error_exit(e, "opening device 0");
    size_t default_l2 = 0;
    if ((e = cudaDeviceGetLimit(&default_l2, cudaLimitMaxL2FetchGranularity)) != cudaSuccess)
        return device_error_exit(e, "reading cudaLimitMaxL2FetchGranularity");
    if (opt.info) {
        try {
            return info((int)default_l2);
        } catch (const Failure& f) {
            return device_error_exit(f.code, f.what());
        }
    }
    dev.helper_blocks = dev.prop.multiProcessorCount * 8;
    try {
        CK(cudaMalloc(&dev.result, sizeof(Result)));
        if (opt.calibrate || !opt.profile && opt.flush) {
            dev.flush.alloc(dev.prop);
        }
    } catch (const Failure& f) {
        return device_error_exit(f.code, f.what());
    }
    if (opt.calibrate) {
        // A failed chase is not a missing device: status 1, the reason on stderr.
        try {
            return calibrate();
        } catch (const Failure& f) {
            fprintf(stderr, "{\"error\":%s,\"cuda_error\":%s}\n", jstr(f.what()).c_str(), jstr(cudaGetErrorName(f.code)).c_str());
            return ExitFailed;
        }
    }

    bool all_ok = true, fatal = false;
    std::string text;
    int line = 0;
    for (;;) {
        text.clear();
        int c;
        bool got = false;
        while ((c = fgetc(in)) != EOF) {
            got = true;
            if (c == '\n') break;
            text += (char)c;
        }
        if (!got) break;
        line++;
        if (!text.empty() && text.back() == '\r') text.pop_back();
        size_t first = text.find_first_not_of(" \t");
        if (first == std::string::npos || text[first] == '#') {
            // Blank and comment lines are answered too, so that answer N is
            // always line N: the Go side sends none.
            emit(strf("{\"line\":%d,\"error\":\"empty line: want one plan\"}", line));
            all_ok = false;
            continue;
        }
        if (fatal) {
            emit(strf("{\"line\":%d,\"error\":\"not run: the CUDA context failed on an earlier line\"}", line));
            all_ok = false;
            continue;
        }
        if (!run_line(line, text, opt, fatal)) all_ok = false;
    }
    if (out_file != stdout) fclose(out_file);
    return all_ok ? ExitOK : ExitFailed;
}
