// shared.cuh: what the course's two CUDA programs share on the host side,
// the harness (harness.cu) and the program around a learner's kernel
// (package cuda/usercuda: kernelsrc/host.cu, which Kernel.Source compiles
// with this file inlined before it). One copy of each, so that a learner's
// kernel is launched, timed and reported exactly as the course's kernels
// are:
//
//   * the exit statuses, which the Go side reads (cuda.ExitNoDevice ...;
//     cuda's TestExitStatusesAgree holds the two to each other);
//   * Failure and COALESCE_CK: a failed CUDA call as an exception that
//     names the call and the error;
//   * the plan: one flat JSON object of string, integer and boolean values
//     (JParser reads it, Plan looks its keys up), the one input format of
//     both programs, which the Go side writes with cuda.PlanWriter;
//   * jstr: a string as JSON, for the answers both programs write;
//   * the L2 flush and the timing loop (time_launches): warm-up launches,
//     then timed launches with a CUDA event pair around each, the L2
//     flushed before every one of them.
//
// Everything is in namespace coalesce_host, and the one macro is named
// COALESCE_CK: a learner's program has the learner's kernel and argument
// names in the global namespace, and usercuda refuses a learner's name
// that starts with coalesce_.
#ifndef COALESCE_SHARED_CUH
#define COALESCE_SHARED_CUH

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_runtime.h>

namespace coalesce_host {

// ===========================================================================
// Exit statuses

// Exit is how both programs end: ExitFailed after a launch that failed (a
// harness line answered with an error; a learner's kernel that faulted),
// ExitUsage on arguments or a plan they cannot read, ExitNoDevice and
// ExitNoDriver when CUDA cannot reach a GPU (missing_exit says which).
enum Exit {
    ExitOK = 0,
    ExitFailed = 1,
    ExitUsage = 2,
    ExitNoDevice = 3,
    ExitNoDriver = 4,
};

// missing_exit is the status for the error e that CUDA gave opening the
// device: the errors of a driver that is absent, too old or not ready are
// ExitNoDriver, anything else ExitNoDevice.
inline int missing_exit(cudaError_t e) {
    if (e == cudaErrorInsufficientDriver || e == cudaErrorSystemDriverMismatch || e == cudaErrorCompatNotSupportedOnDevice ||
        e == cudaErrorInitializationError || e == cudaErrorSystemNotReady)
        return ExitNoDriver;
    return ExitNoDevice;
}

// ===========================================================================
// Errors

// strf is snprintf into a std::string (at most 1023 bytes).
inline std::string strf(const char* fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return buf;
}

// Failure is what every check throws: a message for the answer (the
// harness's error line, the learner program's result.json), the CUDA
// error when a CUDA call failed, and that call as written (call, "" for a
// failure of no call), so that the answer can name it.
struct Failure : std::runtime_error {
    cudaError_t code;
    std::string call;
    explicit Failure(const std::string& msg, cudaError_t c = cudaSuccess, const std::string& call_text = "")
        : std::runtime_error(msg), code(c), call(call_text) {}
};

// ck turns a failed CUDA call into a Failure naming the call and the error.
inline void ck(cudaError_t e, const char* what) {
    if (e != cudaSuccess) {
        throw Failure(strf("%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e)), e, what);
    }
}

// COALESCE_CK checks a CUDA call, naming it as written.
#define COALESCE_CK(call) ::coalesce_host::ck((call), #call)

// ===========================================================================
// JSON

// jstr writes s as a JSON string.
inline std::string jstr(const std::string& s) {
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

// A flat JSON object: string keys, values that are strings, integers or
// booleans. That is all a plan is, so that is all this parser reads;
// anything else is refused with a message rather than guessed at.

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
                fail("want an integer (the harness reads plans, which hold whole numbers)");
            std::string num = t.substr(start, p - start);
            errno = 0;
            char* end = nullptr;
            long long x = strtoll(num.c_str(), &end, 10);
            if (errno == ERANGE) fail("integer out of range");
            v.kind = JValue::Int;
            v.i = x;
            return v;
        }
        if (c == '{' || c == '[') fail("nested objects and arrays are not part of a plan");
        if (t.compare(p, 4, "null") == 0) fail("null is not a plan value");
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
// The plan, as the Go side writes it (cuda.PlanWriter: cuda/plan.go for the
// harness, usercuda's writePlan for a learner's kernel).

struct Plan {
    std::map<std::string, JValue> m;

    const JValue* find(const std::string& key) const {
        auto it = m.find(key);
        return it == m.end() ? nullptr : &it->second;
    }
    // integer returns the plan's integer key, which must be there.
    long long integer(const std::string& key) const {
        const JValue* v = find(key);
        if (!v) throw Failure("plan: no \"" + key + "\"");
        if (v->kind != JValue::Int) throw Failure("plan: \"" + key + "\": want an integer");
        return v->i;
    }
    std::string text(const std::string& key) const {
        const JValue* v = find(key);
        if (!v) throw Failure("plan: no \"" + key + "\"");
        if (v->kind != JValue::Str) throw Failure("plan: \"" + key + "\": want a string");
        return v->s;
    }
    bool flag(const std::string& key) const {
        const JValue* v = find(key);
        if (!v) throw Failure("plan: no \"" + key + "\"");
        if (v->kind != JValue::Bool) throw Failure("plan: \"" + key + "\": want true or false");
        return v->b;
    }
    std::string kernel() const { return text("kernel"); }
};

// parse_plan reads one plan: a flat JSON object naming its kernel.
inline Plan parse_plan(const std::string& line) {
    JParser jp(line);
    Plan p;
    p.m = jp.object();
    if (p.kernel().empty()) throw Failure("plan: empty \"kernel\"");
    return p;
}

// ===========================================================================
// The L2 flush and the timing loop

// flush_l2 reads a buffer twice the L2's size so that, before each timed
// launch, the L2 holds none of the kernel's data and no dirty lines waiting
// to be written back: every timed launch starts as cold as the first, as
// Nsight Compute's default cache control also makes it. The store never
// executes (the buffer is zeros); it only keeps the loads alive. Its name
// does not start with k_, so a profiler filtering on ^k_ never sees it.
__global__ void flush_l2(const uint4* buf, long long n, uint4* sink) {
    uint4 acc = make_uint4(0, 0, 0, 0);
    for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += (long long)gridDim.x * blockDim.x) {
        uint4 v = buf[k];
        acc.x ^= v.x;
        acc.y ^= v.y;
        acc.z ^= v.z;
        acc.w ^= v.w;
    }
    if (acc.x == 0xFFFFFFFFu && acc.y == 0x12345678u) *sink = acc;
}

// L2Flush is the buffer flush_l2 reads and the grid it reads it with: 8
// blocks of 256 threads an SM.
struct L2Flush {
    uint4* buf = nullptr;
    long long words = 0;  // 16-byte words in buf
    int blocks = 0;

    // bytes_for is the size of the buffer on the device p: twice its L2
    // (twice 1 MiB when the driver names none).
    static size_t bytes_for(const cudaDeviceProp& p) { return 2 * (size_t)std::max(p.l2CacheSize, 1 << 20); }

    // alloc makes the buffer, zeroed, for the device p.
    void alloc(const cudaDeviceProp& p) {
        size_t fb = bytes_for(p);
        COALESCE_CK(cudaMalloc(&buf, fb));
        COALESCE_CK(cudaMemset(buf, 0, fb));
        words = (long long)(fb / 16);
        blocks = p.multiProcessorCount * 8;
    }

    // run launches one flush on the default stream.
    void run() const { flush_l2<<<blocks, 256>>>(buf, words, buf); }
};

// time_launches launches fn warmup times, then reps times with a pair of
// CUDA events around each, and returns the reps' times in milliseconds, in
// launch order. Before every launch, warm-up or timed, it calls before
// (when given: the learner's program restores its buffers there) and then,
// when flush is given, flushes the L2; neither is timed.
inline std::vector<double> time_launches(const std::function<void()>& fn, int warmup, int reps, const L2Flush* flush,
                                         const std::function<void()>& before = nullptr) {
    for (int i = 0; i < warmup; i++) {
        if (before) before();
        if (flush) flush->run();
        fn();
    }
    COALESCE_CK(cudaGetLastError());
    std::vector<cudaEvent_t> ev(2 * reps);
    for (auto& e : ev) COALESCE_CK(cudaEventCreate(&e));
    for (int i = 0; i < reps; i++) {
        if (before) before();
        if (flush) flush->run();
        COALESCE_CK(cudaEventRecord(ev[2 * i]));
        fn();
        COALESCE_CK(cudaEventRecord(ev[2 * i + 1]));
    }
    COALESCE_CK(cudaGetLastError());
    COALESCE_CK(cudaDeviceSynchronize());
    std::vector<double> ms(reps);
    for (int i = 0; i < reps; i++) {
        float t = 0;
        COALESCE_CK(cudaEventElapsedTime(&t, ev[2 * i], ev[2 * i + 1]));
        ms[i] = t;
    }
    for (auto& e : ev) cudaEventDestroy(e);
    return ms;
}

}  // namespace coalesce_host

#endif  // COALESCE_SHARED_CUH
