#include "kernels/cuda/fp8_linear.hpp"

#include <algorithm>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/fp8_gemm.hpp"
#include "kernels/cuda/fp8_quantize.hpp"
#include "kernels/cuda/linear.hpp"
#include "kernels/cuda/mixed_storage.cuh"
#include "kernels/cuda/op_entry.hpp"
#include "kernels/cuda/rows.hpp"
#include "kernels/cuda/storage.cuh"

namespace emb::cuda {

namespace {

using fp8 = __nv_fp8_e4m3;

int64_t padded_rows(int64_t N) { return (N + 3) / 4 * 4; }
bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// The scratch of one call, in 256-byte aligned pieces: W's 128×128 blocks as stored [in, out]
// (the dgrad operand) and transposed [out, in] (the forward operand), the left operand's 1×128
// tiles [Np, K], and, for a call that needs padding, the zero-padded operand [Np, K] and output
// [Np, O] (K, O: in or out, whichever the product reads and writes).
struct Fp8Scratch {
  fp8 *w_codes = nullptr, *wt_codes = nullptr, *a_codes = nullptr;
  float *w_scales = nullptr, *wt_scales = nullptr, *a_scales = nullptr;
  void *a_padded = nullptr, *out_padded = nullptr;
  size_t bytes = 0;
};

// Lays the pieces out from base (null: only measures).
Fp8Scratch carve(void* base, int64_t N, int64_t in, int64_t out, size_t elem) {
  Fp8Scratch s;
  char* p = static_cast<char*>(base);
  auto take = [&](size_t bytes) -> void* {
    void* at = p ? p + s.bytes : nullptr;
    s.bytes += (bytes + 255) & ~size_t(255);
    return at;
  };
  const int64_t Np = padded_rows(N), wide = std::max(in, out);
  s.w_codes = static_cast<fp8*>(take(size_t(in * out)));
  s.w_scales = static_cast<float*>(take(sizeof(float) * size_t(fp8_block_scale_count(in, out))));
  s.wt_codes = static_cast<fp8*>(take(size_t(in * out)));
  s.wt_scales = static_cast<float*>(take(sizeof(float) * size_t(fp8_block_scale_count(out, in))));
  s.a_codes = static_cast<fp8*>(take(size_t(Np * wide)));
  s.a_scales = static_cast<float*>(take(sizeof(float) * size_t(fp8_tile_scale_count(Np, wide))));
  s.a_padded = take(elem * size_t(Np * wide));
  s.out_padded = take(elem * size_t(Np * wide));
  return s;
}

// out[N, O] = (accumulate ? out : 0) + Q₁ₓ₁₂₈(a[N, K]) · Wᵀ, W [O, K] given by its block codes.
template <class T>
void fp8_product(const Blas& blas, const T* a, int64_t N, int64_t K, const fp8* w_codes, const float* w_scales,
                 T* out, int64_t O, bool accumulate, const Fp8Scratch& s, cudaStream_t stream) {
  const int64_t Np = padded_rows(N);
  const bool direct = Np == N && aligned16(a) && aligned16(out);
  const T* operand = a;
  if (!direct) {
    T* padded = static_cast<T*>(s.a_padded);
    check_cuda(cudaMemcpyAsync(padded, a, sizeof(T) * size_t(N * K), cudaMemcpyDeviceToDevice, stream),
               "fp8 linear: stage the operand");
    if (Np > N)
      check_cuda(cudaMemsetAsync(padded + N * K, 0, sizeof(T) * size_t((Np - N) * K), stream),
                 "fp8 linear: zero the padding rows");
    operand = padded;
  }
  fp8_quantize_tiles(operand, Np, K, s.a_codes, s.a_scales, stream);
  if (direct)
    return fp8_gemm(blas, s.a_codes, s.a_scales, w_codes, w_scales, out, N, O, K, accumulate ? 1.0f : 0.0f, stream);
  T* staged = static_cast<T*>(s.out_padded);
  fp8_gemm(blas, s.a_codes, s.a_scales, w_codes, w_scales, staged, Np, O, K, 0.0f, stream);
  if (accumulate)
    add(static_cast<const T*>(out), O, static_cast<const T*>(staged), O, out, O, N, O, stream);
  else
    check_cuda(cudaMemcpyAsync(out, staged, sizeof(T) * size_t(N * O), cudaMemcpyDeviceToDevice, stream),
               "fp8 linear: copy the output rows");
}

}  // namespace

size_t fp8_linear_scratch_bytes(int64_t N, int64_t in, int64_t out, size_t elem_bytes) {
  return carve(nullptr, N, in, out, elem_bytes).bytes;
}

template <class T>
void fp8_linear_forward(const Blas& blas, const T* x, const T* W, const T* b, T* y, int64_t N, int64_t in,
                        int64_t out, void* scratch, cudaStream_t stream) {
  if (N == 0) return;
  const Fp8Scratch s = carve(scratch, N, in, out, sizeof(T));
  fp8_quantize_blocks(W, in, out, s.w_codes, s.w_scales, stream);
  fp8_transpose_blocks(s.w_codes, s.w_scales, in, out, s.wt_codes, s.wt_scales, stream);
  fp8_product(blas, x, N, in, s.wt_codes, s.wt_scales, y, out, false, s, stream);
  if (b) add_bias(y, out, b, N, out, stream);
}

template <class T, class G>
void fp8_linear_backward(const Blas& blas, const T* x, const T* W, const T* dy, T* dx, G* dW, G* db, int64_t N,
                         int64_t in, int64_t out, void* scratch, cudaStream_t stream) {
  if (dx && N > 0) {
    const Fp8Scratch s = carve(scratch, N, in, out, sizeof(T));
    fp8_quantize_blocks(W, in, out, s.w_codes, s.w_scales, stream);
    fp8_product(blas, dy, N, out, s.w_codes, s.w_scales, dx, in, true, s, stream);
  }
  // Without dx the linear backward never reads W.
  linear_backward(blas, x, static_cast<const T*>(nullptr), dy, static_cast<T*>(nullptr), dW, db, N, int(in),
                  int(out), stream);
}

#define EMB_INSTANTIATE(T)                                                                                      \
  template void fp8_linear_forward<T>(const Blas&, const T*, const T*, const T*, T*, int64_t, int64_t, int64_t, \
                                      void*, cudaStream_t);
EMB_CUDA_FOR_STORAGE(EMB_INSTANTIATE)
#undef EMB_INSTANTIATE

#define EMB_INSTANTIATE(T, G)                                                                                      \
  template void fp8_linear_backward<T, G>(const Blas&, const T*, const T*, const T*, T*, G*, G*, int64_t, int64_t, \
                                          int64_t, void*, cudaStream_t);
EMB_CUDA_FOR_STORAGE_AND_WIDE(EMB_INSTANTIATE)
#undef EMB_INSTANTIATE

}  // namespace emb::cuda

// ---- CudaOps entries (kernels/ops.hpp) ----

namespace emb {

// The FP8 recipe (fp8_linear.hpp); the activation composed as in linear_forward/backward.
void CudaOps::fp8_linear_forward(const View& x, const View& W, const View& b, Activation act, const View& pre,
                                 const View& y) {
  linear_forward_frame(check_fp8_linear_forward(x, W, b, act, pre, y), x, W, b, act, pre, y, [&](auto o) {
    void* scratch = workspace_.get(cuda::fp8_linear_scratch_bytes(x.rows, x.cols, W.cols, sizeof(*o.x)), stream_);
    cuda::fp8_linear_forward(*blas_, o.x, o.W, o.b, o.out, x.rows, x.cols, W.cols, scratch, stream_);
    return false;
  });
}

void CudaOps::fp8_linear_backward(const View& x, const View& W, Activation act, const View& pre, const View& dy,
                                  const View& dx, const View& dW, const View& db) {
  linear_backward_frame(check_fp8_linear_backward(x, W, act, pre, dy, dx, dW, db), x, W, act, pre, dy, dx, dW, db,
                        [&](auto o) {
                          void* scratch = workspace_.get(
                              cuda::fp8_linear_scratch_bytes(x.rows, x.cols, W.cols, sizeof(*o.x)), stream_);
                          cuda::fp8_linear_backward(*blas_, o.x, o.W, o.dpre, o.dx, o.dW, o.db, x.rows, x.cols,
                                                    W.cols, scratch, stream_);
                        });
}

}  // namespace emb
