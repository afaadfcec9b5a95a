#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/embedding.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/op_entry.hpp"
#include "kernels/cuda/storage.cuh"

namespace emb::cuda {

namespace {

template <class T>
__global__ void sinus_embedding_kernel(const float* t, int t_cols, T* out, int64_t rows, int n, bool cos_first,
                                       int freq_shift) {
  const int half = n / 2, cos_at = cos_first ? 0 : half, sin_at = cos_first ? half : 0;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < rows * half;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = e / half;
    const int k = int(e % half);
    const double ti = double(t[i * t_cols]) + (t_cols == 2 ? double(t[i * t_cols + 1]) : 0.0);
    const double angle = ti * exp(-log(10000.0) * k / (half - freq_shift));
    out[i * n + cos_at + k] = from_f32<T>(float(cos(angle)));
    out[i * n + sin_at + k] = from_f32<T>(float(sin(angle)));
  }
}

}  // namespace

template <class T>
void sinus_embedding(const float* t, int t_cols, T* out, int64_t rows, int n, bool cos_first, int freq_shift,
                     cudaStream_t stream) {
  EMB_CHECK(n > 0 && n % 2 == 0 && freq_shift >= 0 && freq_shift < n / 2, "sinus_embedding: width ", n,
            " must be positive and even, the frequency shift ", freq_shift, " in [0, width / 2)");
  EMB_LAUNCH(sinus_embedding_kernel, grid_for(rows * (n / 2), 256), 256, 0, stream)(t, t_cols, out, rows, n, cos_first,
                                                                                   freq_shift);
  check_launch("sinus_embedding");
}

#define EMB_INSTANTIATE(T) \
  template void sinus_embedding<T>(const float*, int, T*, int64_t, int, bool, int, cudaStream_t);
EMB_CUDA_FOR_STORAGE(EMB_INSTANTIATE)
#undef EMB_INSTANTIATE

}  // namespace emb::cuda

// ---- CudaOps entries (kernels/ops.hpp) ----

namespace emb {

void CudaOps::sinus_embedding(const View& t, const View& out, const SinusConfig& cfg) {
  const OpCheck c = check_sinus_embedding(t, out, cfg);
  fp32_views(c, {{"t", &t}});
  c.contiguous();
  dispatch(storage(c, {&out}), [&](auto tag) {
    using T = decltype(tag);
    cuda::sinus_embedding(fp(t), int(t.cols), ptr<T>(out), out.rows, int(out.cols), cfg.cos_first, cfg.freq_shift,
                          stream_);
  });
}

}  // namespace emb
