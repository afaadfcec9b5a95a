#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/op_entry.hpp"
#include "kernels/cuda/pixel_unshuffle.hpp"
#include "kernels/cuda/storage.cuh"

namespace emb::cuda {

namespace {

struct Shape {
  int frames, height, width, ft, fs, pad_front, group, To, Ho, Wo;
  bool columns_first;
  int64_t C, out_cols, n;  // n: output elements
};

template <class T>
__global__ void pixel_unshuffle_kernel(const T* x, T* y, Shape s) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < s.n; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t cell = e / s.out_cols, o = e % s.out_cols;
    const int64_t clip = cell / (int64_t(s.To) * s.Ho * s.Wo);
    const int t = int(cell / (int64_t(s.Ho) * s.Wo) % s.To), h = int(cell / s.Wo % s.Ho), w = int(cell % s.Wo);
    float sum = 0.0f;
    for (int64_t k = 0; k < s.group; ++k) {
      const UnshuffleSource src = unshuffle_source(o * s.group + k, s.ft, s.fs, s.columns_first);
      const int ti = t * s.ft + src.dt - s.pad_front;
      if (ti < 0) continue;  // a zero frame in front
      const int64_t row = ((clip * s.frames + ti) * s.height + h * s.fs + src.dh) * s.width + w * s.fs + src.dw;
      sum += to_f32(x[row * s.C + src.c]);
    }
    y[e] = from_f32<T>(s.group == 1 ? sum : sum / float(s.group));
  }
}

}  // namespace

template <class T>
void pixel_unshuffle_forward(const T* x, int64_t C, T* y, const UnshuffleConfig& u, cudaStream_t stream) {
  const int To = u.out_frames(), Ho = u.height / u.fs, Wo = u.width / u.fs;
  const int64_t out_cols = C * u.ft * u.fs * u.fs / u.group;
  const Shape s{u.frames, u.height,  u.width, u.ft,          u.fs,     u.pad_front,
                u.group,  To,        Ho,      Wo,            u.columns_first, C,
                out_cols, int64_t(u.batch) * To * Ho * Wo * out_cols};
  if (s.n == 0) return;
  EMB_LAUNCH(pixel_unshuffle_kernel<T>, grid_for(s.n, 256), 256, 0, stream)(x, y, s);
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
