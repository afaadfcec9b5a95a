#include <cmath>

#include "kernels/cuda/activation_math.cuh"
#include "kernels/cuda/channel_rmsnorm.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/op_entry.hpp"
#include "kernels/cuda/reduce.cuh"
#include "kernels/cuda/storage.cuh"

namespace emb::cuda {

namespace {

constexpr int kThreads = 256;

// Warp w of the grid takes rows w, w + warps, ...; its lanes read the row's channels lane,
// lane + 32, ... (all lanes of a warp share the row, so the shuffles are uniform).
template <class T>
__global__ void __launch_bounds__(kThreads)
    channel_rmsnorm_kernel(const T* x, const T* gamma, bool silu, T* y, int64_t N, int64_t C, double root_c) {
  const int lane = int(threadIdx.x % 32);
  const int64_t warps = int64_t(gridDim.x) * (kThreads / 32);
  for (int64_t r = (int64_t(blockIdx.x) * kThreads + threadIdx.x) / 32; r < N; r += warps) {
    const T* xr = x + r * C;
    double ss = 0;
    for (int64_t c = lane; c < C; c += 32) {
      const double v = to_f32(xr[c]);
      ss += v * v;
    }
    ss = warp_sum(ss);
    const float scale = float(root_c / fmax(sqrt(ss), 1e-12));
    for (int64_t c = lane; c < C; c += 32) {
      const float v = to_f32(xr[c]) * scale * to_f32(gamma[c]);
      y[r * C + c] = from_f32<T>(silu ? v * sigmoid(v) : v);
    }
  }
}

}  // namespace

template <class T>
void channel_rmsnorm_forward(const T* x, const T* gamma, bool silu, T* y, int64_t N, int64_t C, cudaStream_t stream) {
  if (N == 0 || C == 0) return;
  EMB_LAUNCH(channel_rmsnorm_kernel<T>, grid_for(N * 32, kThreads), kThreads, 0, stream)(x, gamma, silu, y, N, C,
                                                                                         std::sqrt(double(C)));
  check_launch("channel_rmsnorm_forward");
}

#define EMB_INSTANTIATE(T) \
  template void channel_rmsnorm_forward<T>(const T*, const T*, bool, T*, int64_t, int64_t, cudaStream_t);
EMB_CUDA_FOR_STORAGE(EMB_INSTANTIATE)
#undef EMB_INSTANTIATE

}  // namespace emb::cuda

// ---- CudaOps entry (kernels/ops.hpp) ----

namespace emb {

void CudaOps::channel_rmsnorm_forward(const View& x, const View& gamma, Activation act, const View& y) {
  const OpCheck c = check_channel_rmsnorm(x, gamma, act, y);
  dispatch(storage(c, {&x, &gamma, &y}), [&](auto t) {
    using T = decltype(t);
    cuda::channel_rmsnorm_forward(ptr<const T>(x), ptr<const T>(gamma), act == Activation::silu, ptr<T>(y), x.rows,
                                  x.cols, stream_);
  });
}

}  // namespace emb
