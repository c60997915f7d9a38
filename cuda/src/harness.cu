// harness.cu: runs experiment specs on the GPU at hand.
//
// It reads one spec per line (the flat JSON objects lessons/spec writes) and
// answers each with one JSON line, in order:
//
//   {"line":N, "time_ms":..., ..., "verified":true}   the kernel ran, was right
//   {"line":N, "error":"..."}                          it did not, and why
//
// Modes:
//   (default)   time each spec: warm-up launches, then timed launches with a
//               CUDA event pair around each one, and the same for a
//               cudaMemcpy of the kernel's data, the ceiling a copy can reach.
//   --profile   launch each spec's kernel exactly once, untimed, so that the
//               i-th k_ kernel a profiler sees is the i-th spec that launched.
//   --info      print what the device is, one JSON line, and exit.
//
// Every result is checked before it is reported: the harness fills the
// buffers with known data, runs the kernel once, and compares what it wrote
// with what it should have written (on the GPU, by the check_ kernels). A
// kernel that computed the wrong thing gets an error line, never a time.
//
// Options: --input FILE (default stdin), --output FILE (default stdout),
// --warmup N (>= 3, default 3), --reps N (>= 9, default 20), --no-flush.
//
// Exit status: 0 when every line was answered with a result, 1 when some
// line got an error, 2 on a usage error, 3 when there is no CUDA device, 4
// when there is no usable driver.
#include "kernels.cuh"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

// ===========================================================================
// Errors

// Failure is what every check of this file throws: a message for the JSON
// error line, and whether the kernel had already been launched (so that the
// Go side can still pair profiled kernels with specs).
struct Failure : std::runtime_error {
    cudaError_t code;
    explicit Failure(const std::string& msg, cudaError_t c = cudaSuccess)
        : std::runtime_error(msg), code(c) {}
};

static std::string strf(const char* fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return buf;
}

// ck turns a failed CUDA call into a Failure naming the call and the error.
static void ck(cudaError_t e, const char* what) {
    if (e != cudaSuccess) {
        throw Failure(strf("%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e)), e);
    }
}
#define CK(call) ck((call), #call)

// ===========================================================================
// A flat JSON object: string keys, values that are strings, integers or
// booleans. That is all a spec is, so that is all this parser reads; anything
// else is refused with a message rather than guessed at.

struct JValue {
    enum Kind { Int, Str, Bool } kind;
    long long i = 0;
    std::string s;
    bool b = false;
};

struct JParser {
    const std::string& t;
    size_t p = 0;
    explicit JParser(const std::string& text) : t(text) {}

    [[noreturn]] void fail(const std::string& msg) {
        throw Failure(strf("invalid JSON at byte %zu: %s", p + 1, msg.c_str()));
    }
    void ws() {
        while (p < t.size() && (t[p] == ' ' || t[p] == '\t' || t[p] == '\r' || t[p] == '\n')) p++;
    }
    void expect(char c) {
        ws();
        if (p >= t.size() || t[p] != c) fail(strf("want '%c'", c));
        p++;
    }
    static void put_utf8(std::string& out, unsigned cp) {
        if (cp < 0x80) {
            out += (char)cp;
        } else if (cp < 0x800) {
            out += (char)(0xC0 | (cp >> 6));
            out += (char)(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += (char)(0xE0 | (cp >> 12));
            out += (char)(0x80 | ((cp >> 6) & 0x3F));
            out += (char)(0x80 | (cp & 0x3F));
        } else {
            out += (char)(0xF0 | (cp >> 18));
            out += (char)(0x80 | ((cp >> 12) & 0x3F));
            out += (char)(0x80 | ((cp >> 6) & 0x3F));
            out += (char)(0x80 | (cp & 0x3F));
        }
    }
    unsigned hex4() {
        if (p + 4 > t.size()) fail("short \\u escape");
        unsigned v = 0;
        for (int k = 0; k < 4; k++) {
            char c = t[p++];
            v <<= 4;
            if (c >= '0' && c <= '9') v |= c - '0';
            else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
            else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
            else fail("bad \\u escape");
        }
        return v;
    }
    std::string str() {
        ws();
        if (p >= t.size() || t[p] != '"') fail("want a string");
        p++;
        std::string out;
        for (;;) {
            if (p >= t.size()) fail("unterminated string");
            char c = t[p++];
            if (c == '"') return out;
            if ((unsigned char)c < 0x20) fail("control character in string");
            if (c != '\\') {
                out += c;
                continue;
            }
            if (p >= t.size()) fail("unterminated escape");
            char e = t[p++];
            switch (e) {
            case '"': out += '"'; break;
            case '\\': out += '\\'; break;
            case '/': out += '/'; break;
            case 'b': out += '\b'; break;
            case 'f': out += '\f'; break;
            case 'n': out += '\n'; break;
            case 'r': out += '\r'; break;
            case 't': out += '\t'; break;
            case 'u': {
                unsigned cp = hex4();
                if (cp >= 0xD800 && cp < 0xDC00) {
                    if (p + 2 > t.size() || t[p] != '\\' || t[p + 1] != 'u') fail("lone surrogate");
                    p += 2;
                    unsigned lo = hex4();
                    if (lo < 0xDC00 || lo >= 0xE000) fail("bad surrogate pair");
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                } else if (cp >= 0xDC00 && cp < 0xE000) {
                    fail("lone surrogate");
                }
                put_utf8(out, cp);
                break;
            }
            default: fail("bad escape");
            }
        }
    }
    JValue value() {
        ws();
        if (p >= t.size()) fail("want a value");
        char c = t[p];
        JValue v;
        if (c == '"') {
            v.kind = JValue::Str;
            v.s = str();
            return v;
        }
        if (t.compare(p, 4, "true") == 0) {
            p += 4;
            v.kind = JValue::Bool;
            v.b = true;
            return v;
        }
        if (t.compare(p, 5, "false") == 0) {
            p += 5;
            v.kind = JValue::Bool;
            return v;
        }
        if (c == '-' || (c >= '0' && c <= '9')) {
            size_t start = p;
            if (t[p] == '-') p++;
            size_t digits = p;
            while (p < t.size() && t[p] >= '0' && t[p] <= '9') p++;
            if (p == digits) fail("want digits");
            if (p < t.size() && (t[p] == '.' || t[p] == 'e' || t[p] == 'E'))
                fail("want an integer (the harness reads normalized specs)");
            std::string num = t.substr(start, p - start);
            errno = 0;
            char* end = nullptr;
            long long x = strtoll(num.c_str(), &end, 10);
            if (errno == ERANGE) fail("integer out of range");
            v.kind = JValue::Int;
            v.i = x;
            return v;
        }
        if (c == '{' || c == '[') fail("nested objects and arrays are not part of a spec");
        if (t.compare(p, 4, "null") == 0) fail("null is not a spec value");
        fail("want a string, an integer, true or false");
    }
    std::map<std::string, JValue> object() {
        std::map<std::string, JValue> m;
        expect('{');
        ws();
        if (p < t.size() && t[p] == '}') {
            p++;
        } else {
            for (;;) {
                std::string key = str();
                expect(':');
                JValue v = value();
                if (m.count(key)) fail("duplicate key \"" + key + "\"");
                m[key] = v;
                ws();
                if (p < t.size() && t[p] == ',') {
                    p++;
                    continue;
                }
                expect('}');
                break;
            }
        }
        ws();
        if (p != t.size()) fail("trailing data after the object");
        return m;
    }
};

// ===========================================================================
// The spec, as the harness needs it. Defaults are lessons/spec's; the Go
// side always sends every field, so they matter only to a person typing.

struct Spec {
    std::string kernel;
    long long n = 0;
    long long block = 256;
    long long elem_bytes = 4;
    long long stride = 1;
    long long offset = 0;
    long long width = 4;
    long long unroll = 4;
    long long grid = 0;
    long long struct_bytes = 16;
    long long field_offset = 0;
    bool vector = false;
    std::string index_file;
    long long l2_fetch = 64;
};

static const std::map<std::string, std::vector<std::string>> kFields = {
    {"coalesced_copy", {"elem_bytes"}},
    {"strided_copy", {"elem_bytes", "stride"}},
    {"strided_read", {"elem_bytes", "stride"}},
    {"strided_write", {"elem_bytes", "stride"}},
    {"offset_copy", {"elem_bytes", "offset"}},
    {"vectorized_copy", {"width"}},
    {"grid_stride_copy", {"width", "unroll", "grid"}},
    {"gather_copy", {"index_file"}},
    {"update_x_aos", {"struct_bytes", "field_offset"}},
    {"update_x_soa", {}},
    {"sum_fields_aos", {"struct_bytes", "vector"}},
};

static const long long kMaxN = 2147483647LL;

static Spec parse_spec(const std::string& line) {
    JParser jp(line);
    std::map<std::string, JValue> m = jp.object();
    auto kit = m.find("kernel");
    if (kit == m.end() || kit->second.kind != JValue::Str) throw Failure("spec: want \"kernel\", a string");
    Spec s;
    s.kernel = kit->second.s;
    auto fit = kFields.find(s.kernel);
    if (fit == kFields.end()) throw Failure("spec: unknown kernel \"" + s.kernel + "\"");
    const std::vector<std::string>& own = fit->second;
    for (auto& kv : m) {
        const std::string& k = kv.first;
        if (k == "kernel" || k == "n" || k == "block" || k == "l2_fetch_granularity" || k == "device") continue;
        if (std::find(own.begin(), own.end(), k) != own.end()) continue;
        if (s.kernel == "gather_copy" && (k == "index_pattern" || k == "seed"))
            throw Failure("spec: the harness reads gather indices only from an index_file; "
                          "`coalesce run` writes one for an index_pattern");
        throw Failure("spec: field \"" + k + "\" does not apply to " + s.kernel);
    }
    auto geti = [&](const char* key, long long& dst) {
        auto it = m.find(key);
        if (it == m.end()) return;
        if (it->second.kind != JValue::Int) throw Failure(strf("spec: field \"%s\": want an integer", key));
        dst = it->second.i;
    };
    if (!m.count("n")) throw Failure("spec: required field missing \"n\"");
    geti("n", s.n);
    geti("block", s.block);
    geti("elem_bytes", s.elem_bytes);
    geti("stride", s.stride);
    geti("offset", s.offset);
    geti("width", s.width);
    geti("unroll", s.unroll);
    geti("grid", s.grid);
    geti("struct_bytes", s.struct_bytes);
    geti("field_offset", s.field_offset);
    geti("l2_fetch_granularity", s.l2_fetch);
    if (m.count("vector")) {
        if (m["vector"].kind != JValue::Bool) throw Failure("spec: field \"vector\": want true or false");
        s.vector = m["vector"].b;
    }
    if (m.count("index_file")) {
        if (m["index_file"].kind != JValue::Str) throw Failure("spec: field \"index_file\": want a string");
        s.index_file = m["index_file"].s;
    }
    if (m.count("device") && m["device"].kind != JValue::Str) throw Failure("spec: field \"device\": want a string");
    return s;
}

static bool has(const Spec& s, const char* field) {
    const std::vector<std::string>& own = kFields.at(s.kernel);
    return std::find(own.begin(), own.end(), field) != own.end();
}

// validate re-checks what lessons/spec checks, so that nothing impossible is
// launched even when the harness is fed by hand: a stride of 0 would run
// every thread on element 0, a misaligned vector access faults.
static void validate(const Spec& s) {
    if (s.n < 1 || s.n > kMaxN) throw Failure(strf("spec: n = %lld: want 1 to %lld", s.n, kMaxN));
    if (s.block < 1 || s.block > 1024) throw Failure(strf("spec: block = %lld: want 1 to 1024 threads", s.block));
    if (s.l2_fetch != 32 && s.l2_fetch != 64 && s.l2_fetch != 128)
        throw Failure(strf("spec: l2_fetch_granularity = %lld: want 32, 64 or 128", s.l2_fetch));
    if (has(s, "elem_bytes")) {
        long long e = s.elem_bytes;
        if (e != 1 && e != 2 && e != 4 && e != 8 && e != 16)
            throw Failure(strf("spec: elem_bytes = %lld: want 1, 2, 4, 8 or 16", e));
    }
    if (has(s, "stride") && (s.stride < 1 || s.stride > kMaxN))
        throw Failure(strf("spec: stride = %lld: want 1 to %lld elements (stride 0 would put every thread on element 0)", s.stride, kMaxN));
    if (has(s, "offset") && (s.offset < 0 || s.offset >= s.n))
        throw Failure(strf("spec: offset = %lld: want 0 <= offset < n = %lld", s.offset, s.n));
    if (s.kernel == "vectorized_copy" && s.width != 2 && s.width != 4)
        throw Failure(strf("spec: width = %lld: want 2 or 4 floats", s.width));
    if (s.kernel == "grid_stride_copy") {
        if (s.width != 1 && s.width != 2 && s.width != 4) throw Failure(strf("spec: width = %lld: want 1, 2 or 4 floats", s.width));
        if (s.unroll < 1 || s.unroll > 16) throw Failure(strf("spec: unroll = %lld: want 1 to 16", s.unroll));
        if (s.grid < 0 || s.grid > kMaxN) throw Failure(strf("spec: grid = %lld: want 0 or 1 to %lld blocks", s.grid, kMaxN));
    }
    if (has(s, "width") && s.n % s.width != 0)
        throw Failure(strf("spec: n = %lld is not a multiple of width = %lld: the last vector would run past the buffer", s.n, s.width));
    if (has(s, "struct_bytes")) {
        if (s.struct_bytes < 4 || s.struct_bytes > 1024 || s.struct_bytes % 4 != 0)
            throw Failure(strf("spec: struct_bytes = %lld: want a multiple of 4 from 4 to 1024", s.struct_bytes));
    }
    if (has(s, "field_offset") &&
        (s.field_offset < 0 || s.field_offset % 4 != 0 || s.field_offset + 4 > s.struct_bytes))
        throw Failure(strf("spec: field_offset = %lld: want a multiple of 4 from 0 to struct_bytes-4 = %lld (x must be a 4-byte-aligned float inside the struct)",
                           s.field_offset, s.struct_bytes - 4));
    if (s.kernel == "sum_fields_aos" && s.vector && s.struct_bytes % 16 != 0)
        throw Failure(strf("spec: struct_bytes = %lld with vector true: want a multiple of 16, or each 16-byte load would be misaligned", s.struct_bytes));
    if (s.kernel == "gather_copy" && s.index_file.empty())
        throw Failure("spec: gather_copy needs an index_file (little-endian int32, one per thread)");
}

// ===========================================================================
// Helper kernels: filling, checking and flushing. None of their names starts
// with k_, so a profiler filtering on ^k_ never sees them.

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
// stride, j+offset < n), the poison the harness wrote before the launch
// everywhere else. Untouched elements are checked too: a store to the wrong
// place is as wrong as a missing one.
template <typename T>
__global__ void check_elements(const T* in, const T* out, long long n, long long stride, long long offset,
                               int mode, Result* r) {
    for (long long j = thread_index(); j < n; j += (long long)gridDim.x * blockDim.x) {
        bool written = mode != NothingWritten && j % stride == 0 && j + offset < n;
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

// flush_l2 reads a buffer twice the L2's size so that, before each timed
// launch, the L2 holds none of the kernel's data and no dirty lines waiting
// to be written back: every timed launch starts as cold as the first, as
// Nsight Compute's default cache control also makes it. The store never
// executes (the buffer is zeros); it only keeps the loads alive.
__global__ void flush_l2(const uint4* buf, long long n, uint4* sink) {
    uint4 acc = make_uint4(0, 0, 0, 0);
    for (long long k = thread_index(); k < n; k += (long long)gridDim.x * blockDim.x) {
        uint4 v = buf[k];
        acc.x ^= v.x;
        acc.y ^= v.y;
        acc.z ^= v.z;
        acc.w ^= v.w;
    }
    if (acc.x == 0xFFFFFFFFu && acc.y == 0x12345678u) *sink = acc;
}

// ===========================================================================
// The device and its buffers.

struct Device {
    cudaDeviceProp prop;
    int helper_blocks = 0;  // grid of the fill/check/flush helpers
    uint4* flush_buf = nullptr;
    long long flush_words = 0;
    Result* result = nullptr;  // device memory for the checks
};
static Device dev;

// Buffer is one cudaMalloc'd allocation (256-byte aligned by cudaMalloc).
struct Buffer {
    void* p = nullptr;
    size_t bytes = 0;  // what the kernel uses
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
// One spec, prepared: its buffers, its launch and its check.

static long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

struct Run {
    Spec s;
    long long threads = 0, blocks = 0;
    long long useful_bytes = 0;
    Buffer in, out, idx, scratch;
    Buffer* copy_src = nullptr;  // the kernel's data buffer, what cudaMemcpy copies
    Buffer* copy_dst = nullptr;
    std::function<void()> launch;
    std::function<void()> check;
};

static void sizes(Run& r) {
    const Spec& s = r.s;
    const std::string& k = s.kernel;
    if (k == "strided_copy" || k == "strided_read" || k == "strided_write") r.threads = ceil_div(s.n, s.stride);
    else if (k == "vectorized_copy") r.threads = s.n / s.width;
    else if (k == "grid_stride_copy") r.threads = -1;  // below, from the grid
    else r.threads = s.n;
    if (k == "grid_stride_copy") {
        // grid 0 means one full wave: as many blocks as the SMs hold at once.
        long long per_sm = std::max(1LL, (long long)dev.prop.maxThreadsPerMultiProcessor / s.block);
        r.blocks = s.grid > 0 ? s.grid : (long long)dev.prop.multiProcessorCount * per_sm;
        r.threads = r.blocks * s.block;
    } else {
        r.blocks = ceil_div(r.threads, s.block);
    }
    if (r.blocks > INT_MAX) throw Failure(strf("spec: %lld blocks: more than a grid can hold", r.blocks));
    // The bytes the kernel must move, as lessons/spec's UsefulBytes counts them.
    long long E = s.elem_bytes;
    if (k == "coalesced_copy") r.useful_bytes = 2 * s.n * E;
    else if (k == "strided_copy") r.useful_bytes = 2 * ceil_div(s.n, s.stride) * E;
    else if (k == "strided_read" || k == "strided_write") r.useful_bytes = ceil_div(s.n, s.stride) * E;
    else if (k == "offset_copy") r.useful_bytes = 2 * (s.n - s.offset) * E;
    else if (k == "vectorized_copy" || k == "grid_stride_copy" || k == "update_x_soa" || k == "update_x_aos") r.useful_bytes = 2 * s.n * 4;
    else if (k == "gather_copy") r.useful_bytes = 3 * s.n * 4;
    else if (k == "sum_fields_aos") r.useful_bytes = s.n * s.struct_bytes + s.n * 4;
}

// Need lists the allocations a spec makes, so they can be checked against
// free memory before the first one.
static std::vector<std::pair<const char*, size_t>> needs(const Spec& s) {
    const std::string& k = s.kernel;
    size_t n = (size_t)s.n;
    if (k == "coalesced_copy" || k == "strided_copy" || k == "strided_read" || k == "offset_copy")
        return {{"in", n * s.elem_bytes}, {"out", n * s.elem_bytes}};
    if (k == "strided_write") return {{"out", n * s.elem_bytes}, {"memcpy destination", n * s.elem_bytes}};
    if (k == "vectorized_copy" || k == "grid_stride_copy") return {{"in", n * 4}, {"out", n * 4}};
    if (k == "gather_copy") return {{"in", n * 4}, {"out", n * 4}, {"idx", n * 4}};
    if (k == "update_x_aos") return {{"structs", n * s.struct_bytes}, {"memcpy destination", n * s.struct_bytes}};
    if (k == "update_x_soa") return {{"x", n * 4}, {"memcpy destination", n * 4}};
    if (k == "sum_fields_aos") return {{"structs", n * s.struct_bytes}, {"out", n * 4}, {"memcpy destination", n * s.struct_bytes}};
    return {};
}

static void check_memory(const Spec& s) {
    size_t total = 0;
    for (auto& nb : needs(s)) total += (nb.second + 15) / 16 * 16;
    size_t free_b = 0, total_b = 0;
    CK(cudaMemGetInfo(&free_b, &total_b));
    const size_t margin = 64ull << 20;  // room for the runtime's own allocations
    if (total + margin > free_b)
        throw Failure(strf("spec needs %.3f GiB of device memory for its buffers, but only %.3f GiB of %.3f GiB is free: make n smaller",
                           total / 1073741824.0, free_b / 1073741824.0, total_b / 1073741824.0));
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

template <typename T> static void prepare_elem(Run& r) {
    const Spec& s = r.s;
    const std::string& k = s.kernel;
    dim3 g((unsigned)r.blocks), b((unsigned)s.block);
    long long n = s.n;
    T* in = r.in.as<T>();
    T* out = r.out.as<T>();
    long long stride = s.stride, offset = s.offset;
    if (k == "coalesced_copy") {
        r.launch = [=] { k_coalesced_copy<T><<<g, b>>>(in, out, n); };
        r.check = [=] { check_elements<T><<<dev.helper_blocks, 256>>>(in, out, n, 1, 0, FromInput, dev.result); };
    } else if (k == "strided_copy") {
        r.launch = [=] { k_strided_copy<T><<<g, b>>>(in, out, n, stride); };
        r.check = [=] { check_elements<T><<<dev.helper_blocks, 256>>>(in, out, n, stride, 0, FromInput, dev.result); };
    } else if (k == "strided_read") {
        T sentinel = all_ones<T>();
        r.launch = [=] { k_strided_read<T><<<g, b>>>(in, out, n, stride, sentinel); };
        r.check = [=] { check_elements<T><<<dev.helper_blocks, 256>>>(in, out, n, stride, 0, NothingWritten, dev.result); };
    } else if (k == "strided_write") {
        r.launch = [=] { k_strided_write<T><<<g, b>>>(out, n, stride); };
        r.check = [=] { check_elements<T><<<dev.helper_blocks, 256>>>(out, out, n, stride, 0, FromIndex, dev.result); };
    } else if (k == "offset_copy") {
        r.launch = [=] { k_offset_copy<T><<<g, b>>>(in, out, n, offset); };
        r.check = [=] { check_elements<T><<<dev.helper_blocks, 256>>>(in, out, n, 1, offset, FromInput, dev.result); };
    }
}

// launch_grid_stride picks the instance of k_grid_stride_copy whose unroll
// U equals the spec's, counting U up from 1 at compile time.
template <typename V, int U>
static void launch_grid_stride(int unroll, dim3 g, dim3 b, const V* in, V* out, long long nvec) {
    if (unroll == U) {
        k_grid_stride_copy<V, U><<<g, b>>>(in, out, nvec);
    } else if constexpr (U < 16) {
        launch_grid_stride<V, U + 1>(unroll, g, b, in, out, nvec);
    }
}

static void prepare(Run& r) {
    Spec& s = r.s;
    const std::string& k = s.kernel;
    sizes(r);
    check_memory(s);
    size_t n = (size_t)s.n;
    dim3 g((unsigned)r.blocks), b((unsigned)s.block);
    int hb = dev.helper_blocks;
    Result* res = dev.result;
    bool bytes_data = k == "coalesced_copy" || k == "strided_copy" || k == "strided_read" ||
                      k == "strided_write" || k == "offset_copy";
    std::vector<int> host_idx;
    if (k == "gather_copy") host_idx = read_indices(s.index_file, s.n);  // before any allocation

    if (bytes_data) {
        size_t bytes = n * s.elem_bytes;
        if (k != "strided_write") r.in.alloc(bytes, "in");
        r.out.alloc(bytes, "out");
        if (k == "strided_write") {
            r.scratch.alloc(bytes, "memcpy destination");
            r.copy_src = &r.out;
            r.copy_dst = &r.scratch;
        } else {
            init_bytes<<<hb, 256>>>(r.in.as<uint32_t>(), (long long)((bytes + 15) / 16 * 4));
            CK(cudaGetLastError());
            r.copy_src = &r.in;
            r.copy_dst = &r.out;
        }
        switch (s.elem_bytes) {
        case 1: prepare_elem<uint8_t>(r); break;
        case 2: prepare_elem<uint16_t>(r); break;
        case 4: prepare_elem<uint32_t>(r); break;
        case 8: prepare_elem<unsigned long long>(r); break;
        case 16: prepare_elem<uint4>(r); break;
        }
        // The check needs the poison freshly in place, so writing it is part
        // of every check's launch sequence (see run_check).
        return;
    }
    if (k == "vectorized_copy" || k == "grid_stride_copy") {
        r.in.alloc(n * 4, "in");
        r.out.alloc(n * 4, "out");
        init_floats<<<hb, 256>>>(r.in.as<float>(), s.n);
        CK(cudaGetLastError());
        r.copy_src = &r.in;
        r.copy_dst = &r.out;
        const uint32_t* inw = r.in.as<uint32_t>();
        const uint32_t* outw = r.out.as<uint32_t>();
        long long nn = s.n;
        r.check = [=] { check_elements<uint32_t><<<hb, 256>>>(inw, outw, nn, 1, 0, FromInput, res); };
        long long nvec = s.n / s.width;
        if (k == "vectorized_copy") {
            if (s.width == 2) {
                const float2* in = r.in.as<float2>();
                float2* out = r.out.as<float2>();
                r.launch = [=] { k_vectorized_copy<float2><<<g, b>>>(in, out, nvec); };
            } else {
                const float4* in = r.in.as<float4>();
                float4* out = r.out.as<float4>();
                r.launch = [=] { k_vectorized_copy<float4><<<g, b>>>(in, out, nvec); };
            }
        } else {
            int u = (int)s.unroll;
            if (s.width == 1) {
                const float* in = r.in.as<float>();
                float* out = r.out.as<float>();
                r.launch = [=] { launch_grid_stride<float, 1>(u, g, b, in, out, nvec); };
            } else if (s.width == 2) {
                const float2* in = r.in.as<float2>();
                float2* out = r.out.as<float2>();
                r.launch = [=] { launch_grid_stride<float2, 1>(u, g, b, in, out, nvec); };
            } else {
                const float4* in = r.in.as<float4>();
                float4* out = r.out.as<float4>();
                r.launch = [=] { launch_grid_stride<float4, 1>(u, g, b, in, out, nvec); };
            }
        }
        return;
    }
    if (k == "gather_copy") {
        r.in.alloc(n * 4, "in");
        r.out.alloc(n * 4, "out");
        r.idx.alloc(n * 4, "idx");
        init_floats<<<hb, 256>>>(r.in.as<float>(), s.n);
        CK(cudaGetLastError());
        CK(cudaMemcpy(r.idx.p, host_idx.data(), n * 4, cudaMemcpyHostToDevice));
        r.copy_src = &r.in;
        r.copy_dst = &r.out;
        const float* in = r.in.as<float>();
        float* out = r.out.as<float>();
        const int* idx = r.idx.as<int>();
        long long nn = s.n;
        r.launch = [=] { k_gather_copy<<<g, b>>>(in, out, idx, nn); };
        r.check = [=] { check_gather<<<hb, 256>>>((const uint32_t*)in, (const uint32_t*)out, idx, nn, res); };
        return;
    }
    if (k == "update_x_aos" || k == "update_x_soa") {
        long long sb = k == "update_x_aos" ? s.struct_bytes : 4;
        long long fo = k == "update_x_aos" ? s.field_offset : 0;
        r.in.alloc(n * sb, k == "update_x_aos" ? "structs" : "x");
        r.scratch.alloc(n * sb, "memcpy destination");
        r.copy_src = &r.in;
        r.copy_dst = &r.scratch;
        long long nwords = s.n * sb / 4;
        float* p = r.in.as<float>();
        init_floats<<<hb, 256>>>(p, nwords);
        CK(cudaGetLastError());
        long long nn = s.n;
        if (k == "update_x_aos") {
            int sbi = (int)sb, foi = (int)fo;
            char* base = r.in.as<char>();
            r.launch = [=] { k_update_x_aos<<<g, b>>>(base, nn, sbi, foi); };
        } else {
            r.launch = [=] { k_update_x_soa<<<g, b>>>(p, nn); };
        }
        int wps = (int)(sb / 4), xw = (int)(fo / 4);
        r.check = [=] { check_update<<<hb, 256>>>(p, nwords, wps, xw, res); };
        return;
    }
    if (k == "sum_fields_aos") {
        long long sb = s.struct_bytes;
        r.in.alloc(n * sb, "structs");
        r.out.alloc(n * 4, "out");
        r.scratch.alloc(n * sb, "memcpy destination");
        r.copy_src = &r.in;
        r.copy_dst = &r.scratch;
        float* p = r.in.as<float>();
        init_floats<<<hb, 256>>>(p, s.n * sb / 4);
        CK(cudaGetLastError());
        const char* base = r.in.as<char>();
        float* out = r.out.as<float>();
        long long nn = s.n;
        int sbi = (int)sb, wps = (int)(sb / 4);
        if (s.vector) r.launch = [=] { k_sum_fields_aos<true><<<g, b>>>(base, out, nn, sbi); };
        else r.launch = [=] { k_sum_fields_aos<false><<<g, b>>>(base, out, nn, sbi); };
        r.check = [=] { check_sum<<<hb, 256>>>(out, nn, wps, res); };
        return;
    }
    throw Failure("spec: unknown kernel \"" + k + "\"");
}

// poison_outputs writes 0xA5 into every output, so that the check can tell
// an element the kernel wrote from one it left alone.
static void poison_outputs(Run& r) {
    if (r.out.p) CK(cudaMemset(r.out.p, 0xA5, r.out.bytes));
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
    const std::string& k = r.s.kernel;
    check_result(k == "update_x_aos" || k == "update_x_soa" ? "4-byte words of the buffer" : "output elements");
}

// ===========================================================================
// Timing

struct Timing {
    double median = 0, min = 0, max = 0;
    int count = 0;
};

static void flush() {
    flush_l2<<<dev.helper_blocks, 256>>>(dev.flush_buf, dev.flush_words, dev.flush_buf);
}

// time_it runs fn warmup times, then reps times with an event pair around
// each, and returns the median, the fastest and the slowest in milliseconds.
static Timing time_it(const std::function<void()>& fn, int warmup, int reps, bool do_flush) {
    for (int i = 0; i < warmup; i++) {
        if (do_flush) flush();
        fn();
    }
    CK(cudaGetLastError());
    std::vector<cudaEvent_t> ev(2 * reps);
    for (auto& e : ev) CK(cudaEventCreate(&e));
    for (int i = 0; i < reps; i++) {
        if (do_flush) flush();
        CK(cudaEventRecord(ev[2 * i]));
        fn();
        CK(cudaEventRecord(ev[2 * i + 1]));
    }
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<double> ms(reps);
    for (int i = 0; i < reps; i++) {
        float t = 0;
        CK(cudaEventElapsedTime(&t, ev[2 * i], ev[2 * i + 1]));
        ms[i] = t;
    }
    for (auto& e : ev) cudaEventDestroy(e);
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

static std::string jstr(const std::string& s) {
    std::string o = "\"";
    for (unsigned char c : s) {
        switch (c) {
        case '"': o += "\\\""; break;
        case '\\': o += "\\\\"; break;
        case '\n': o += "\\n"; break;
        case '\r': o += "\\r"; break;
        case '\t': o += "\\t"; break;
        default:
            if (c < 0x20) o += strf("\\u%04x", c);
            else o += (char)c;
        }
    }
    return o + "\"";
}

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
    bool flush = true;
    int warmup = 3;
    int reps = 20;
    std::string input, output;
};

static int device_error_exit(cudaError_t e, const char* what) {
    int code = 3;
    if (e == cudaErrorInsufficientDriver || e == cudaErrorSystemDriverMismatch || e == cudaErrorCompatNotSupportedOnDevice ||
        e == cudaErrorInitializationError || e == cudaErrorSystemNotReady)
        code = 4;
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
    return 0;
}

static std::string result_line(int line, const Run& r, long long l2_read, const Timing* kt, const Timing* mt) {
    std::string o = strf("{\"line\":%d", line);
    if (kt) {
        o += ",\"time_ms\":" + jnum(kt->median) + ",\"time_ms_min\":" + jnum(kt->min) + ",\"time_ms_max\":" + jnum(kt->max);
        o += strf(",\"timed_launches\":%d", kt->count);
    }
    o += strf(",\"useful_bytes\":%lld", r.useful_bytes);
    if (kt) o += ",\"useful_gbps\":" + jnum(r.useful_bytes / (kt->median * 1e-3) / 1e9);
    if (mt) {
        o += ",\"memcpy_ms\":" + jnum(mt->median);
        // A copy reads and writes every byte: count both, as useful_bytes does.
        o += ",\"memcpy_gbps\":" + jnum(2.0 * r.copy_src->bytes / (mt->median * 1e-3) / 1e9);
        o += strf(",\"memcpy_bytes\":%zu", r.copy_src->bytes);
    }
    o += strf(",\"threads\":%lld,\"grid_blocks\":%lld,\"block\":%lld", r.threads, r.blocks, r.s.block);
    o += strf(",\"l2_fetch_granularity\":%lld", l2_read);
    o += ",\"launched\":true,\"verified\":true}";
    return o;
}

static bool run_line(int line, const std::string& text, const Options& opt, bool& fatal) {
    bool launched = false;
    try {
        Run r;
        r.s = parse_spec(text);
        validate(r.s);
        prepare(r);
        CK(cudaDeviceSynchronize());  // the fills are done before anything is timed
        // The L2 fetch granularity is a limit of the context: set it before
        // this spec's launches and read back what the driver accepted.
        CK(cudaDeviceSetLimit(cudaLimitMaxL2FetchGranularity, (size_t)r.s.l2_fetch));
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
        std::string o = strf("{\"line\":%d,\"error\":%s", line, jstr(f.what()).c_str());
        if (launched) o += ",\"launched\":true";
        if (f.code != cudaSuccess) o += ",\"cuda_error\":" + jstr(cudaGetErrorName(f.code));
        o += "}";
        emit(o);
        // An error inside a kernel (a fault) leaves the context unusable:
        // every later call fails too, so the remaining lines are refused.
        cudaError_t sticky = cudaDeviceSynchronize();
        cudaGetLastError();
        if (sticky != cudaSuccess) fatal = true;
        return false;
    }
}

static int usage(const char* msg) {
    fprintf(stderr, "harness: %s\nusage: harness [--info] [--profile] [--input FILE] [--output FILE] [--warmup N>=3] [--reps N>=9] [--no-flush]\n", msg);
    return 2;
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
        return 2;
    }
    if (!opt.output.empty() && !(out_file = fopen(opt.output.c_str(), "w"))) {
        fprintf(stderr, "harness: %s: %s\n", opt.output.c_str(), strerror(errno));
        return 2;
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
        if (!opt.profile && opt.flush) {
            size_t fb = 2 * (size_t)std::max(dev.prop.l2CacheSize, 1 << 20);
            CK(cudaMalloc(&dev.flush_buf, fb));
            CK(cudaMemset(dev.flush_buf, 0, fb));
            dev.flush_words = (long long)(fb / 16);
        }
    } catch (const Failure& f) {
        return device_error_exit(f.code, f.what());
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
            emit(strf("{\"line\":%d,\"error\":\"empty line: want one spec\"}", line));
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
    return all_ok ? 0 : 1;
}
