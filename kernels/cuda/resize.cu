#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/op_entry.hpp"
#include "kernels/cuda/resize.hpp"
#include "kernels/cuda/storage.cuh"
#include "kernels/resize_taps.hpp"

namespace emb::cuda {

namespace {

template <class T>
__global__ void resize_kernel(const T* x, T* y, ResizeConfig r, int64_t C, int64_t n) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = e % C, cell = e / C;
    const int64_t xo = cell % r.out_width, yo = cell / r.out_width % r.out_height, image = cell / (int64_t(r.out_width) * r.out_height);
    const bool cubic = r.mode == ResizeMode::bicubic;
    const ResizeTaps rows = cubic ? bicubic_taps(r.in_height, r.out_height, yo) : bilinear_taps(r.in_height, r.out_height, yo);
    const ResizeTaps cols = cubic ? bicubic_taps(r.in_width, r.out_width, xo) : bilinear_taps(r.in_width, r.out_width, xo);
    const T* src = x + image * r.in_height * r.in_width * C + c;
    float out = 0.0f;
    for (int i = 0; i < rows.n; ++i) {
      const T* line = src + rows.index[i] * r.in_width * C;
      float mid = __fmul_rn(to_f32(line[cols.index[0] * C]), cols.weight[0]);
      for (int j = 1; j < cols.n; ++j) mid = __fadd_rn(mid, __fmul_rn(to_f32(line[cols.index[j] * C]), cols.weight[j]));
      out = i == 0 ? __fmul_rn(mid, rows.weight[0]) : __fadd_rn(out, __fmul_rn(mid, rows.weight[i]));
    }
    y[e] = from_f32<T>(out);
  }
}

}  // namespace

template <class T>
void resize_forward(const T* x, int64_t C, T* y, const ResizeConfig& cfg, cudaStream_t stream) {
  const int64_t n = int64_t(cfg.batch) * cfg.out_height * cfg.out_width * C;
  if (n == 0) return;
  EMB_LAUNCH(resize_kernel<T>, grid_for(n, 256), 256, 0, stream)(x, y, cfg, C, n);
  check_launch("resize_forward");
}

#define EMB_INSTANTIATE(T) template void resize_forward<T>(const T*, int64_t, T*, const ResizeConfig&, cudaStream_t);
EMB_CUDA_FOR_STORAGE(EMB_INSTANTIATE)
#undef EMB_INSTANTIATE

}  // namespace emb::cuda

// ---- CudaOps entry (kernels/ops.hpp) ----

namespace emb {

void CudaOps::resize_forward(const View& x, const View& y, const ResizeConfig& cfg) {
  const OpCheck c = check_resize(x, y, cfg);
  dispatch(storage(c, {&x, &y}), [&](auto t) {
    using T = decltype(t);
    cuda::resize_forward(ptr<const T>(x), x.cols, ptr<T>(y), cfg, stream_);
  });
}

}  // namespace emb
