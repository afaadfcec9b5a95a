// Linear layers y = x W + b through cuBLASLt, W stored [in, out] row-major (MODEL.md), as in
// kernels/cpu/linear.hpp. Storage fp32 or bf16, accumulation always fp32: the compute type is
// CUBLAS_COMPUTE_32F, never the fast-TF32 variant, so fp32 results match the CPU reference.
// Row-major handling: a row-major [r, c] matrix is a column-major [c, r] one, so
// yᵀ = Wᵀ·xᵀ is an ordinary column-major GEMM with no copies.
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/blas.hpp"

namespace emb::cuda {

// y[N, out] = x[N, in] · W[in, out] + b[out]   (b may be null; the bias is a GEMM epilogue)
template <class T>
void linear_forward(const Blas& blas, const T* x, const T* W, const T* b, T* y, int64_t N, int in, int out,
                    cudaStream_t stream);
// pre = x · W + b, y = gelu_tanh(pre) (b may be null): one GEMM with cuBLASLt's GELU_AUX(_BIAS)
// epilogue (pre is its aux output; cuBLASLt's GELU is the tanh approximation, as PyTorch's
// addmm_activation fallback assumes) when out is a multiple of 8 and cuBLASLt offers it, else
// the GEMM and activation.hpp's kernel. The epilogue applies gelu to the fp32 accumulator, the
// fallback to pre as stored (bf16: one more rounding, inside the bf16 tolerance).
// cuBLASLt has no SiLU epilogue: SiLU stays a separate pass (activation.hpp).
template <class T>
void linear_gelu_forward(const Blas& blas, const T* x, const T* W, const T* b, T* pre, T* y, int64_t N, int in,
                         int out, cudaStream_t stream);
// dx += dy · Wᵀ ; dW += xᵀ · dy ; db += Σ_rows dy   (any of dx, dW, db may be null)
// G, the parameter gradients' type, is T or fp32 beside bf16 T (fp32 accumulation either way;
// fp32 dW and db keep the small per-step contributions bf16 would round away).
// bf16 with dW: db comes from the dW GEMM's BGRADA epilogue (Σ over the GEMM's k = rows, in the
// GEMM's fp32 accumulation), written to Blas scratch since the epilogue overwrites, then added
// to db. fp32, or db without dW: a deterministic column sum in double (matches the CPU to 1e-5).
template <class T, class G>
void linear_backward(const Blas& blas, const T* x, const T* W, const T* dy, T* dx, G* dW, G* db, int64_t N, int in,
                     int out, cudaStream_t stream);

// Per-embodiment linear: row i uses W[emb[i]] [in, out] and b[emb[i]] [out]. Rows are gathered
// embodiment by embodiment into scratch, each group is one GEMM, and results are scattered back.
// The grouping is made on the host when the batch is packed (group_rows_by_embodiment,
// kernels/ops.hpp): perm, row indices with embodiment 0's first, in device memory; offsets [E + 1]
// in host memory, embodiment e owning perm[offsets[e] .. offsets[e + 1]).
// Scratch bytes linear_emb_forward/backward need for N rows of element size elem_bytes.
size_t linear_emb_scratch_bytes(int64_t N, int in, int out, size_t elem_bytes);

template <class T>
void linear_emb_forward(const Blas& blas, const T* x, const T* W, const T* b, const int32_t* perm,
                        const int64_t* offsets, T* y, int64_t N, int in, int out, int E, void* scratch,
                        cudaStream_t stream);
template <class T, class G>
void linear_emb_backward(const Blas& blas, const T* x, const T* W, const int32_t* perm, const int64_t* offsets,
                         const T* dy, T* dx, G* dW, G* db, int64_t N, int in, int out, int E, void* scratch,
                         cudaStream_t stream);

}  // namespace emb::cuda
