#include <algorithm>
#include <type_traits>

#include "kernels/cuda/activation.hpp"

#include "kernels/cuda/column_sum.cuh"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/linear.hpp"
#include "kernels/cuda/mixed_storage.cuh"
#include "kernels/cuda/op_entry.hpp"
#include "kernels/cuda/rows.hpp"
#include "kernels/cuda/storage.cuh"

namespace emb::cuda {

namespace {

// Column-major D[m, n] = op(A)·op(B) + beta·D with an epilogue, fp32 accumulation (blas.hpp).
// A is stored [m, k] (or [k, m] when trans_a), B [k, n] (or [n, k] when trans_b); D (and aux) of
// type O, A's type or fp32 beside bf16. False when cuBLASLt offers no algorithm for the epilogue
// (the caller runs its separate pass).
template <class T, class O>
bool gemm(const Blas& blas, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* A, int64_t lda,
          const T* B, int64_t ldb, float beta, O* D, int64_t ldd, cublasLtEpilogue_t epilogue, const void* bias,
          O* aux, cudaStream_t stream) {
  if (m == 0 || n == 0 || k == 0) return true;  // k = 0 only arises for empty row groups (beta = 1)
  GemmShape s;
  s.type = data_type<T>();
  s.out_type = data_type<O>();
  s.trans_a = trans_a, s.trans_b = trans_b;
  s.m = m, s.n = n, s.k = k, s.lda = lda, s.ldb = ldb, s.ldd = ldd;
  s.epilogue = epilogue;
  s.aux_ld = aux ? m : 0;
  GemmOperands o;
  o.A = A, o.B = B, o.beta = beta, o.D = D, o.bias = const_cast<void*>(bias), o.aux = aux;
  return blas.gemm(s, o, stream);
}

// dst[r] = src[perm[r]] (rows of C elements).
template <class T>
__global__ void gather_rows_kernel(const T* src, const int32_t* perm, T* dst, int64_t N, int C) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < N * C; e += int64_t(gridDim.x) * blockDim.x)
    dst[e] = src[int64_t(perm[e / C]) * C + e % C];
}

// dst[perm[r]] = src[r], or += when accumulate.
template <class T>
__global__ void scatter_rows_kernel(const T* src, const int32_t* perm, T* dst, int64_t N, int C, bool accumulate) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < N * C; e += int64_t(gridDim.x) * blockDim.x) {
    T* d = dst + int64_t(perm[e / C]) * C + e % C;
    if (accumulate)
      add_to(d, to_f32(src[e]));
    else
      *d = src[e];
  }
}

template <class T>
void gather_rows(const T* src, const int32_t* perm, T* dst, int64_t N, int C, cudaStream_t stream) {
  EMB_LAUNCH(gather_rows_kernel, grid_for(N * C, 256), 256, 0, stream)(src, perm, dst, N, C);
  check_launch("gather_rows");
}

template <class T>
void scatter_rows(const T* src, const int32_t* perm, T* dst, int64_t N, int C, bool accumulate, cudaStream_t stream) {
  EMB_LAUNCH(scatter_rows_kernel, grid_for(N * C, 256), 256, 0, stream)(src, perm, dst, N, C, accumulate);
  check_launch("scatter_rows");
}

}  // namespace

template <class T>
void linear_forward(const Blas& blas, const T* x, const T* W, const T* b, T* y, int64_t N, int in, int out,
                    cudaStream_t stream) {
  // yᵀ[out, N] = Wᵀ[out, in] · xᵀ[in, N] in column-major terms; BIAS is always offered.
  gemm(blas, false, false, out, N, in, W, out, x, in, 0.0f, y, out,
       b ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT, b, static_cast<T*>(nullptr), stream);
}

template <class T>
void linear_gelu_forward(const Blas& blas, const T* x, const T* W, const T* b, T* pre, T* y, int64_t N, int in,
                         int out, cudaStream_t stream) {
  // GELU_AUX(_BIAS) writes pre as its aux matrix, whose leading dimension (out) must be a
  // multiple of 8 (cublasLt.h).
  const bool fused = out % 8 == 0 &&
                     gemm(blas, false, false, out, N, in, W, out, x, in, 0.0f, y, out,
                          b ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS : CUBLASLT_EPILOGUE_GELU_AUX, b, pre, stream);
  if (fused) return;
  linear_forward(blas, x, W, b, pre, N, in, out, stream);
  activation_forward(Activation::gelu_tanh, static_cast<const T*>(pre), y, N * out, stream);
}

template <class T, class G>
void linear_backward(const Blas& blas, const T* x, const T* W, const T* dy, T* dx, G* dW, G* db, int64_t N, int in,
                     int out, cudaStream_t stream) {
  const T* none = nullptr;
  // dxᵀ[in, N] += W[in, out] · dyᵀ[out, N]
  if (dx) gemm(blas, true, false, in, N, out, W, out, dy, out, 1.0f, dx, in, CUBLASLT_EPILOGUE_DEFAULT, none,
               static_cast<T*>(nullptr), stream);
  // dWᵀ[out, in] += dyᵀ[out, N] · x[N, in]; A = dyᵀ, so BGRADA (reduction over k = N) is Σ_rows dy.
  // bf16 dy takes it from the epilogue into scratch (it overwrites; in dW's type) and adds it to
  // db; fp32 keeps the column sum in double, which matches the CPU to 1e-5 in a fixed order.
  const bool bias_epilogue = dW && db && N > 0 && std::is_same_v<T, __nv_bfloat16> &&
                             size_t(out) * sizeof(G) <= Blas::kBiasGradScratchBytes;
  G* bias_grad = bias_epilogue ? static_cast<G*>(blas.bias_grad_scratch(stream)) : nullptr;
  bool db_done = false;
  if (dW) {
    db_done = bias_epilogue && gemm(blas, false, true, out, in, N, dy, out, x, in, 1.0f, dW, out,
                                    CUBLASLT_EPILOGUE_BGRADA, bias_grad, static_cast<G*>(nullptr), stream);
    if (!db_done)
      gemm(blas, false, true, out, in, N, dy, out, x, in, 1.0f, dW, out, CUBLASLT_EPILOGUE_DEFAULT, none,
           static_cast<G*>(nullptr), stream);
  }
  if (db_done) add(db, 0, static_cast<const G*>(bias_grad), 0, db, 0, 1, out, stream);
  if (db && !db_done) column_sum(N, out, db, MatrixEntry<T>{dy, out}, blas.column_sum_scratch(stream), stream);
}

// Layout of the scratch: gathered x [N, in], gathered dy or y [N, out], gathered dx [N, in],
// each slice rounded up to 256 bytes so every group's GEMM operands stay aligned.
namespace {
size_t round_up(size_t bytes) { return (bytes + 255) / 256 * 256; }
}  // namespace

size_t linear_emb_scratch_bytes(int64_t N, int in, int out, size_t elem_bytes) {
  return 2 * round_up(size_t(N) * in * elem_bytes) + round_up(size_t(N) * out * elem_bytes);
}

template <class T>
void linear_emb_forward(const Blas& blas, const T* x, const T* W, const T* b, const int32_t* perm,
                        const int64_t* offsets, T* y, int64_t N, int in, int out, int E, void* scratch,
                        cudaStream_t stream) {
  T* xs = static_cast<T*>(scratch);
  T* ys = reinterpret_cast<T*>(static_cast<char*>(scratch) + round_up(size_t(N) * in * sizeof(T)));
  gather_rows(x, perm, xs, N, in, stream);
  for (int e = 0; e < E; ++e) {
    const int64_t r0 = offsets[e], rows = offsets[e + 1] - offsets[e];
    linear_forward(blas, xs + r0 * in, W + int64_t(e) * in * out, b ? b + int64_t(e) * out : nullptr, ys + r0 * out,
                   rows, in, out, stream);
  }
  scatter_rows(ys, perm, y, N, out, false, stream);
}

template <class T, class G>
void linear_emb_backward(const Blas& blas, const T* x, const T* W, const int32_t* perm, const int64_t* offsets,
                         const T* dy, T* dx, G* dW, G* db, int64_t N, int in, int out, int E, void* scratch,
                         cudaStream_t stream) {
  char* base = static_cast<char*>(scratch);
  T* xs = reinterpret_cast<T*>(base);
  T* dys = reinterpret_cast<T*>(base + round_up(size_t(N) * in * sizeof(T)));
  T* dxs = reinterpret_cast<T*>(base + round_up(size_t(N) * in * sizeof(T)) + round_up(size_t(N) * out * sizeof(T)));
  gather_rows(x, perm, xs, N, in, stream);
  gather_rows(dy, perm, dys, N, out, stream);
  if (dx) check_cuda(cudaMemsetAsync(dxs, 0, size_t(N) * in * sizeof(T), stream), "memset");
  for (int e = 0; e < E; ++e) {
    const int64_t r0 = offsets[e], rows = offsets[e + 1] - offsets[e];
    if (rows == 0) continue;
    linear_backward(blas, xs + r0 * in, W + int64_t(e) * in * out, dys + r0 * out, dx ? dxs + r0 * in : nullptr,
                    dW ? dW + int64_t(e) * in * out : nullptr, db ? db + int64_t(e) * out : nullptr, rows, in, out,
                    stream);
  }
  if (dx) scatter_rows(dxs, perm, dx, N, in, true, stream);
}

#define EMB_INSTANTIATE(T)                                                                                            \
  template void linear_forward<T>(const Blas&, const T*, const T*, const T*, T*, int64_t, int, int, cudaStream_t);    \
  template void linear_gelu_forward<T>(const Blas&, const T*, const T*, const T*, T*, T*, int64_t, int, int,          \
                                       cudaStream_t);                                                                 \
  template void linear_emb_forward<T>(const Blas&, const T*, const T*, const T*, const int32_t*, const int64_t*, T*, \
                                      int64_t, int, int, int, void*, cudaStream_t);
EMB_CUDA_FOR_STORAGE(EMB_INSTANTIATE)
#undef EMB_INSTANTIATE

#define EMB_INSTANTIATE(T, G)                                                                                         \
  template void linear_backward<T, G>(const Blas&, const T*, const T*, const T*, T*, G*, G*, int64_t, int, int,       \
                                      cudaStream_t);                                                                  \
  template void linear_emb_backward<T, G>(const Blas&, const T*, const T*, const int32_t*, const int64_t*, const T*, \
                                          T*, G*, G*, int64_t, int, int, int, void*, cudaStream_t);
EMB_CUDA_FOR_STORAGE_AND_WIDE(EMB_INSTANTIATE)
#undef EMB_INSTANTIATE

}  // namespace emb::cuda

// ---- CudaOps entries (kernels/ops.hpp) ----

namespace emb {

void CudaOps::linear_forward(const View& x, const View& W, const View& b, Activation act, const View& pre,
                             const View& y) {
  linear_forward_frame(check_linear_forward(x, W, b, act, pre, y), x, W, b, act, pre, y, [&](auto o) {
    if (act == Activation::gelu_tanh) {  // one GEMM with cuBLASLt's GELU epilogue (linear.hpp): pre and y
      cuda::linear_gelu_forward(*blas_, o.x, o.W, o.b, o.out, static_cast<decltype(o.out)>(y.data), x.rows,
                                int(x.cols), int(W.cols), stream_);
      return true;
    }
    cuda::linear_forward(*blas_, o.x, o.W, o.b, o.out, x.rows, int(x.cols), int(W.cols), stream_);
    return false;
  });
}

void CudaOps::linear_backward(const View& x, const View& W, Activation act, const View& pre, const View& dy,
                              const View& dx, const View& dW, const View& db) {
  linear_backward_frame(check_linear_backward(x, W, act, pre, dy, dx, dW, db), x, W, act, pre, dy, dx, dW, db,
                        [&](auto o) {
                          cuda::linear_backward(*blas_, o.x, o.W, o.dpre, o.dx, o.dW, o.db, x.rows, int(x.cols),
                                                int(W.cols), stream_);
                        });
}

namespace {
// The per-embodiment GEMMs read the grouping of the rows by embodiment.
void check_emb_grouping(const OpCheck& c, const EmbRows& emb) {
  c.expect(emb.perm && emb.offsets, "CUDA needs the embodiment grouping (EmbRows perm and offsets)");
}
}  // namespace

void CudaOps::linear_emb_forward(const View& x, const View& W, const View& b, const EmbRows& emb, Activation act,
                                 const View& pre, const View& y) {
  const OpCheck c = check_linear_emb_forward(x, W, b, emb, act, pre, y);
  check_emb_grouping(c, emb);
  linear_forward_frame(c, x, W, b, act, pre, y, [&](auto o) {
    void* scratch =
        workspace_.get(cuda::linear_emb_scratch_bytes(x.rows, int(x.cols), int(W.cols), sizeof(*o.x)), stream_);
    cuda::linear_emb_forward(*blas_, o.x, o.W, o.b, emb.perm, emb.offsets, o.out, x.rows, int(x.cols), int(W.cols),
                             emb.n_emb, scratch, stream_);
    return false;
  });
}

void CudaOps::linear_emb_backward(const View& x, const View& W, const EmbRows& emb, Activation act, const View& pre,
                                  const View& dy, const View& dx, const View& dW, const View& db) {
  const OpCheck c = check_linear_emb_backward(x, W, emb, act, pre, dy, dx, dW, db);
  check_emb_grouping(c, emb);
  linear_backward_frame(c, x, W, act, pre, dy, dx, dW, db, [&](auto o) {
    void* scratch =
        workspace_.get(cuda::linear_emb_scratch_bytes(x.rows, int(x.cols), int(W.cols), sizeof(*o.x)), stream_);
    cuda::linear_emb_backward(*blas_, o.x, o.W, emb.perm, emb.offsets, o.dpre, o.dx, o.dW, o.db, x.rows, int(x.cols),
                              int(W.cols), emb.n_emb, scratch, stream_);
  });
}

}  // namespace emb
