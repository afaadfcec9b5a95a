#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/op_entry.hpp"
#include "kernels/cuda/pixel_unshuffle.hpp"
#include "kernels/cuda/storage.cuh"
#include "kernels/unshuffle_rows.hpp"

namespace emb::cuda {

namespace {

// One thread per output element (n of them) of the cells' out_cols channels; To output frames.
template <class T>
__global__ void pixel_unshuffle_kernel(const T* x, int64_t C, T* y, UnshuffleConfig u, int To, int64_t out_cols,
                                       int64_t n) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t cell = e / out_cols, o = e % out_cols;
    float sum = 0.0f;
    for (int64_t k = 0; k < u.group; ++k) {
      const UnshuffleSource src = unshuffle_source(o * u.group + k, u.ft, u.fs, u.columns_first);
      const int64_t row = unshuffle_input_row(u, To, cell, src);
      if (row >= 0) sum += to_f32(x[row * C + src.c]);
    }
    y[e] = from_f32<T>(u.group == 1 ? sum : sum / float(u.group));
  }
}

}  // namespace

template <class T>
void pixel_unshuffle_forward(const T* x, int64_t C, T* y, const UnshuffleConfig& u, cudaStream_t stream) {
  const int To = u.out_frames(), Ho = u.height / u.fs, Wo = u.width / u.fs;
  const int64_t out_cols = C * u.ft * u.fs * u.fs / u.group, n = int64_t(u.batch) * To * Ho * Wo * out_cols;
  if (n == 0) return;
  EMB_LAUNCH(pixel_unshuffle_kernel<T>, grid_for(n, 256), 256, 0, stream)(x, C, y, u, To, out_cols, n);
  check_launch("pixel_unshuffle_forward");
}

#define EMB_INSTANTIATE(T) \
  template void pixel_unshuffle_forward<T>(const T*, int64_t, T*, const UnshuffleConfig&, cudaStream_t);
EMB_CUDA_FOR_STORAGE(EMB_INSTANTIATE)
#undef EMB_INSTANTIATE

}  // namespace emb::cuda

// ---- CudaOps entry (kernels/ops.hpp) ----

namespace emb {

void CudaOps::pixel_unshuffle_forward(const View& x, const View& y, const UnshuffleConfig& cfg) {
  const OpCheck c = check_pixel_unshuffle(x, y, cfg);
  dispatch(storage(c, {&x, &y}), [&](auto t) {
    using T = decltype(t);
    cuda::pixel_unshuffle_forward(ptr<const T>(x), x.cols, ptr<T>(y), cfg, stream_);
  });
}

}  // namespace emb
