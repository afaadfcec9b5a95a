// Row copies and sums between the packed token stream and per-kind tensors, the GPU twin of
// kernels/cpu/rows.hpp: row-major matrices with a row stride (ld) each, so a column chunk of a
// wider tensor is read or written in place; a null index pointer is the identity. Storage fp32
// or bf16 (math fp32); add_rows may sum bf16 rows into fp32 ones (R: the source's type, or fp32
// beside bf16, mixed_storage.cuh: the blocks' bf16 gradients into the fp32 ones outside them).
// add_rows keeps the CPU's row order per column (one thread per column walks the rows), so
// repeated destination rows give the same result on both.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace emb::cuda {

// dst[dst_rows[r]] = src[src_rows[r]] for r < n (C columns)
template <class T>
void copy_rows(const T* src, int64_t ld_src, const int32_t* src_rows, T* dst, int64_t ld_dst, const int32_t* dst_rows,
               int64_t n, int64_t C, cudaStream_t stream);
// dst[dst_rows[r]] += src[src_rows[r]], in row order (a destination row may repeat)
template <class T, class R>
void add_rows(const T* src, int64_t ld_src, const int32_t* src_rows, R* dst, int64_t ld_dst, const int32_t* dst_rows,
              int64_t n, int64_t C, cudaStream_t stream);
// y = a + b over [N, C] (each with its row stride)
template <class T>
void add(const T* a, int64_t ld_a, const T* b, int64_t ld_b, T* y, int64_t ld_y, int64_t N, int64_t C,
         cudaStream_t stream);
// y[r] += b for every row r < N (b [C])
template <class T>
void add_bias(T* y, int64_t ld_y, const T* b, int64_t N, int64_t C, cudaStream_t stream);
// y = 0 over [N, C]
template <class T>
void zero_rows(T* y, int64_t ld_y, int64_t N, int64_t C, cudaStream_t stream);
// y[i] = x[i] in y's storage type (round to nearest even), i < n: the mixed-precision copies
template <class S, class D>
void convert(const S* x, D* y, int64_t n, cudaStream_t stream);

}  // namespace emb::cuda
