// kernels.cuh: the course's kernels, one per kernel of the experiment spec
// (lessons/spec). Read each one beside its lesson: what a thread does here
// is exactly what the sector model assumes it does, so that the counts Nsight
// Compute reads from these kernels can be laid beside the model's.
//
// Rules every kernel follows, and why:
//
//   * Thread t = blockIdx.x*blockDim.x + threadIdx.x, computed in 64 bits
//     (the matrix kernels: a row and a column, each in 64 bits). With n up
//     to 2^31-1 and a stride, a struct size or a row length multiplying
//     it, an element's byte offset can pass 2^31; a 32-bit index would
//     wrap and touch the wrong address (or none at all).
//   * Every size the spec lets vary at run time (n, stride, offset,
//     struct_bytes, field_offset, rows, cols, tile, block_rows, pad) is a
//     kernel argument, never a template constant. If the compiler knew
//     struct_bytes = 16 it could fuse four 4-byte loads into one 16-byte
//     load, and the kernel would no longer do what the model counts. Only what must be known when compiling is a
//     template parameter: the element type (its size picks the load width)
//     and grid_stride_copy's unroll (it sizes an array that must live in
//     registers).
//   * Every kernel name starts with k_, and nothing else the harness
//     launches does, so that `ncu --kernel-name regex:^k_` profiles exactly
//     the kernels of the spec and none of the harness's own helpers.
//   * No __restrict__ and no __ldg: each load is a plain global load (LDG),
//     the instruction the model and the metrics l1tex__t_*_pipe_lsu_mem_global_*
//     describe.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

// thread_index returns t, the thread's position in the whole grid, as a
// 64-bit integer so that t*stride and t*struct_bytes cannot overflow.
__device__ __forceinline__ long long thread_index() {
    return (long long)blockIdx.x * blockDim.x + threadIdx.x;
}

// ---------------------------------------------------------------------------
// Element types. elem_bytes = 1, 2, 4, 8 or 16 picks one of these; the
// element's size is the width of every load and store the kernel issues.
// uint4 is CUDA's 16-byte-aligned four-word type: loading one is one 16-byte
// access per thread (LDG.E.128), the widest a thread can make.

// same reports whether two elements hold the same bytes.
__host__ __device__ inline bool same(uint8_t a, uint8_t b) { return a == b; }
__host__ __device__ inline bool same(uint16_t a, uint16_t b) { return a == b; }
__host__ __device__ inline bool same(uint32_t a, uint32_t b) { return a == b; }
__host__ __device__ inline bool same(unsigned long long a, unsigned long long b) { return a == b; }
__host__ __device__ inline bool same(uint4 a, uint4 b) {
    return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w;
}

// from_index makes an element out of an index: what strided_write stores,
// since a kernel that only writes has nothing loaded to store.
template <typename T> __host__ __device__ inline T from_index(long long i) { return (T)i; }
template <> __host__ __device__ inline uint4 from_index<uint4>(long long i) {
    unsigned lo = (unsigned)i, hi = (unsigned)((unsigned long long)i >> 32);
    return make_uint4(lo, hi, ~lo, ~hi);
}

// all_ones is an element with every bit set. The harness fills input
// buffers with bytes below 0x80, so no loaded element ever equals it.
template <typename T> __host__ __device__ inline T all_ones() { return (T)~0ull; }
template <> __host__ __device__ inline uint4 all_ones<uint4>() {
    return make_uint4(~0u, ~0u, ~0u, ~0u);
}

// ---------------------------------------------------------------------------
// coalesced_copy: n threads; thread t copies element t. Neighbouring lanes
// touch neighbouring elements, so a warp's 32 accesses cover 32*elem_bytes
// contiguous bytes: the fewest sectors that can hold them.
template <typename T>
__global__ void k_coalesced_copy(const T* in, T* out, long long n) {
    long long t = thread_index();
    if (t < n) {
        out[t] = in[t];
    }
}

// strided_copy: ceil(n/stride) threads; thread t copies element t*stride.
// Lanes are stride*elem_bytes apart, so once that passes 32 bytes each lane
// needs a sector of its own and most of every fetched sector is wasted.
template <typename T>
__global__ void k_strided_copy(const T* in, T* out, long long n, long long stride) {
    long long i = thread_index() * stride;
    if (i < n) {
        out[i] = in[i];
    }
}

// strided_read: the load of strided_copy alone. A load whose value is never
// used would be deleted by the compiler, so the value is compared with a
// sentinel passed at run time. The harness's data never equals it, so the
// store below never executes: the kernel issues loads and no stores, yet
// the compiler, which cannot know that, must keep every load.
template <typename T>
__global__ void k_strided_read(const T* in, T* out, long long n, long long stride, T sentinel) {
    long long i = thread_index() * stride;
    if (i < n) {
        T v = in[i];
        if (same(v, sentinel)) {
            out[i] = v;
        }
    }
}

// strided_write: the store of strided_copy alone; each thread writes a value
// made from its index, so no load is issued at all.
template <typename T>
__global__ void k_strided_write(T* out, long long n, long long stride) {
    long long i = thread_index() * stride;
    if (i < n) {
        out[i] = from_index<T>(i);
    }
}

// offset_copy: n threads; thread t reads element t+offset and writes element
// t. The writes stay aligned; the reads start offset elements into the
// buffer, so unless offset*elem_bytes is a multiple of 32 a warp's reads
// straddle one sector more than they need.
template <typename T>
__global__ void k_offset_copy(const T* in, T* out, long long n, long long offset) {
    long long t = thread_index();
    if (t + offset < n) {
        out[t] = in[t + offset];
    }
}

// ---------------------------------------------------------------------------
// vectorized_copy: the n-offset floats from in[offset] on, moved as nvec =
// (n-offset)/width vectors of width floats (V is float2 or float4), one
// vector per thread: one 8- or 16-byte load and one store where
// coalesced_copy would issue two or four 4-byte ones. Fewer instructions
// move the same sectors. The stores start at out, which cudaMalloc aligns
// to 256 bytes; the loads start offset floats into in, a run-time float
// pointer cast to V* only here, so that an offset that is not a multiple of
// width makes every load misaligned. That is the lesson's point: the GPU
// does not split a misaligned vector access, it faults
// (cudaErrorMisalignedAddress), and the harness launches it to show so.
template <typename V>
__global__ void k_vectorized_copy(const float* in, V* out, long long nvec, long long offset) {
    long long t = thread_index();
    if (t < nvec) {
        const V* src = (const V*)(in + offset);
        out[t] = src[t];
    }
}

// grid_stride_copy: a fixed grid (by default one full wave of the device)
// walks all nvec = n/width vectors. T threads in all; thread t starts at
// vector t and, each round, handles vectors base, base+T, ..., base+(U-1)*T.
// It issues all U loads before the first store: the loads do not depend on
// one another, so U of them are in flight at once, which is how one thread
// keeps enough bytes moving to cover the latency of DRAM. Lanes of a warp
// still touch neighbouring vectors in every load, so each load is coalesced.
// U is a template constant because v[] must be indexed by constants to stay
// in registers; the loop bound nvec stays a run-time argument.
//
// The loop runs while any lane of the warp has work (a vote), the same
// number of rounds for all its lanes; the lanes past nvec are masked. Were
// each thread to loop on its own base, the lanes of the one warp that
// straddles the end would disagree on the trip count, and ptxas, which peels
// an odd trip and unrolls the loop by two, would run lanes of different
// rounds in one instruction: measured on the H200 (cuda/NOTES.md, check run
// 2), up to U-1 extra requests, each touching two places at once. The vote,
// and comparing u*T with the vectors left rather than each index with nvec,
// also keep the registers low enough for a block of 1024 threads at every
// unroll of float and float2 (runs/gridstride.sh prints them).
template <typename V, int U>
__global__ void k_grid_stride_copy(const V* in, V* out, long long nvec) {
    const long long T = (long long)gridDim.x * blockDim.x;
    const unsigned lanes = __activemask();  // the warp's lanes, before any branch
    for (long long base = thread_index(); __any_sync(lanes, base < nvec); base += T * U) {
        const long long left = nvec - base;  // this lane's vectors from base on
        const V* src = in + base;            // dereferenced only where u*T < left
        V* dst = out + base;
        V v[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (u * T < left) {
                v[u] = src[u * T];
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (u * T < left) {
                dst[u * T] = v[u];
            }
        }
    }
}

// ---------------------------------------------------------------------------
// gather_copy: n threads; thread t reads the index idx[t] (coalesced), then
// the element in[idx[t]] (wherever the index points) and writes out[t]
// (coalesced). Only the middle access depends on the data; how many sectors
// it costs is decided by how close together a warp's 32 indices are.
__global__ void k_gather_copy(const float* in, float* out, const int* idx, long long n) {
    long long t = thread_index();
    if (t < n) {
        out[t] = in[idx[t]];
    }
}

// ---------------------------------------------------------------------------
// update_x_aos: an array of n structs of struct_bytes each, the 4-byte float
// x at field_offset inside it. Thread t adds 1 to struct t's x: one 4-byte
// load and one 4-byte store, struct_bytes apart from the next lane's. The
// struct's layout is a run-time argument so that the same kernel serves
// every struct the lesson tries.
__global__ void k_update_x_aos(char* base, long long n, int struct_bytes, int field_offset) {
    long long t = thread_index();
    if (t < n) {
        float* x = (float*)(base + t * struct_bytes + field_offset);
        *x += 1.0f;
    }
}

// update_x_soa: the same update with the x fields in an array of their own,
// so neighbouring lanes touch neighbouring floats.
__global__ void k_update_x_soa(float* x, long long n) {
    long long t = thread_index();
    if (t < n) {
        x[t] += 1.0f;
    }
}

// sum_fields_soa: the structs of sum_fields_aos stored field by field:
// field f of element t is float f*n+t of one buffer. Thread t sums its
// fields in order, one 4-byte load each; in every load the warp's lanes
// touch neighbouring floats, so each request touches the fewest sectors,
// where the AoS layout spreads one field's request over 32*struct_bytes
// bytes. With every field used both layouts fetch the same sectors in the
// end; they differ in how many each request touches. The field count is a
// run-time argument, and the loads are n floats apart, so the
// compiler cannot fuse them.
__global__ void k_sum_fields_soa(const float* p, float* out, long long n, int struct_bytes) {
    long long t = thread_index();
    if (t < n) {
        float sum = 0.0f;
        for (int f = 0; f < struct_bytes / 4; f++) {
            sum += p[(long long)f * n + t];
        }
        out[t] = sum;
    }
}

// sum_fields_aos: thread t sums every 4-byte field of struct t. With Vector
// false it issues struct_bytes/4 loads of 4 bytes; with Vector true,
// struct_bytes/16 loads of 16 bytes (float4), which needs struct_bytes to be
// a multiple of 16 so that each float4 is 16-byte aligned. Across a warp the
// loads of one field are struct_bytes apart, but together the loads of all
// the fields touch every byte of the warp's structs: AoS costs nothing when
// a thread uses the whole struct.
template <bool Vector>
__global__ void k_sum_fields_aos(const char* base, float* out, long long n, int struct_bytes) {
    long long t = thread_index();
    if (t < n) {
        const char* s = base + t * struct_bytes;
        float sum = 0.0f;
        if (Vector) {
            const float4* v = (const float4*)s;
            for (int f = 0; f < struct_bytes / 16; f++) {
                float4 q = v[f];
                sum += q.x;
                sum += q.y;
                sum += q.z;
                sum += q.w;
            }
        } else {
            const float* x = (const float*)s;
            for (int f = 0; f < struct_bytes / 4; f++) {
                sum += x[f];
            }
        }
        out[t] = sum;
    }
}

// ---------------------------------------------------------------------------
// The matrix kernels: a rows x cols matrix of floats, row-major (element
// (r, c) at r*cols + c). A block is tile x block_rows threads and covers a
// tile x tile square: thread (tx, ty) handles rows ty, ty+block_rows, ...
// of the square, so that a block of fewer threads than the square has
// elements still reuses each thread. The hardware numbers a block's
// threads ty*tile + tx, so a warp is 32/tile rows of the square (a tile of
// 32: one row). tile and block_rows are run-time arguments (the harness
// launches dim3(tile, block_rows) blocks), so the loop's trip count is the
// same for every lane of a warp and each round is one instruction per
// access, the instructions the model counts. The bounds check masks the
// lanes past the matrix's edge when tile does not divide rows or cols.

// copy_rows: threadIdx.x walks a row, so a warp's lanes touch neighbouring
// floats of one row on both sides: the coalesced baseline of the lesson.
__global__ void k_copy_rows(const float* in, float* out, long long rows, long long cols, int tile, int block_rows) {
    long long c = (long long)blockIdx.x * tile + threadIdx.x;
    for (int j = 0; j < tile; j += block_rows) {
        long long r = (long long)blockIdx.y * tile + threadIdx.y + j;
        if (r < rows && c < cols) {
            out[r * cols + c] = in[r * cols + c];
        }
    }
}

// copy_columns: the same copy with the roles of x and y swapped, so that
// threadIdx.x walks down a column: neighbouring lanes are cols floats
// apart, and every lane of a load or a store needs a sector of its own.
// Same bytes, same result, only the mapping of threads to elements differs.
__global__ void k_copy_columns(const float* in, float* out, long long rows, long long cols, int tile, int block_rows) {
    long long r = (long long)blockIdx.x * tile + threadIdx.x;
    for (int j = 0; j < tile; j += block_rows) {
        long long c = (long long)blockIdx.y * tile + threadIdx.y + j;
        if (r < rows && c < cols) {
            out[r * cols + c] = in[r * cols + c];
        }
    }
}

// transpose_coalesced_read: out (cols x rows) gets out[c*rows + r] =
// in[r*cols + c] with threadIdx.x walking a row of in. The read is
// coalesced; the lanes' writes land rows floats apart, one sector each.
// A naive transpose cannot make both sides coalesced.
__global__ void k_transpose_coalesced_read(const float* in, float* out, long long rows, long long cols, int tile,
                                           int block_rows) {
    long long c = (long long)blockIdx.x * tile + threadIdx.x;
    for (int j = 0; j < tile; j += block_rows) {
        long long r = (long long)blockIdx.y * tile + threadIdx.y + j;
        if (r < rows && c < cols) {
            out[c * rows + r] = in[r * cols + c];
        }
    }
}

// transpose_coalesced_write: the same transpose with threadIdx.x walking a
// column of in, which is a row of out: the write is coalesced, the read
// strided. Beside transpose_coalesced_read it asks which side's waste
// costs more time.
__global__ void k_transpose_coalesced_write(const float* in, float* out, long long rows, long long cols, int tile,
                                            int block_rows) {
    long long r = (long long)blockIdx.x * tile + threadIdx.x;
    for (int j = 0; j < tile; j += block_rows) {
        long long c = (long long)blockIdx.y * tile + threadIdx.y + j;
        if (r < rows && c < cols) {
            out[c * rows + r] = in[r * cols + c];
        }
    }
}

// transpose_tiled: the block reads its square of in row by row (coalesced)
// into shared memory, waits for the whole square, then writes it to out
// row by row of out (coalesced), reading shared memory down a column. The
// reorder happens in shared memory, where a strided access costs bank
// conflicts rather than sectors: with a pitch of tile floats a column's 32
// floats are tile*4 bytes apart, so (for tile 32) all in one bank, 32
// wavefronts for one request. pad extra floats per row shift each row by
// pad banks and spread the column over the banks. The pitch, like the
// tile, is a run-time argument and the buffer dynamic shared memory, so
// the compiler cannot prove which bank an access uses, nor reshape it.
__global__ void k_transpose_tiled(const float* in, float* out, long long rows, long long cols, int tile, int block_rows,
                                  int pad) {
    extern __shared__ float s[];
    const int pitch = tile + pad;
    const int tx = threadIdx.x, ty = threadIdx.y;
    long long c = (long long)blockIdx.x * tile + tx;
    for (int j = 0; j < tile; j += block_rows) {
        long long r = (long long)blockIdx.y * tile + ty + j;
        if (r < rows && c < cols) {
            s[(ty + j) * pitch + tx] = in[r * cols + c];
        }
    }
    // Phase 2 reads what other threads wrote in phase 1.
    __syncthreads();
    long long r = (long long)blockIdx.y * tile + tx;
    for (int j = 0; j < tile; j += block_rows) {
        long long oc = (long long)blockIdx.x * tile + ty + j;
        if (r < rows && oc < cols) {
            out[oc * rows + r] = s[tx * pitch + ty + j];
        }
    }
}
