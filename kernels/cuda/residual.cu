#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/residual.hpp"
#include "kernels/cuda/storage.cuh"

namespace emb::cuda {

namespace {

template <class T>
__global__ void gated_residual_forward_kernel(T* x, const T* gate, int64_t ld_gate, const T* y, int64_t N, int C) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < N * C; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = e / C, c = e % C;
    const float g = gate ? to_f32(gate[i * ld_gate + c]) : 1.0f;
    add_to(x + e, g * to_f32(y[e]));
  }
}

template <class T>
__global__ void gated_residual_backward_kernel(const T* gate, int64_t ld_gate, const T* y, const T* dx, T* dy,
                                               T* dgate, int64_t N, int C) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < N * C; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = e / C, c = e % C;
    const float d = to_f32(dx[e]);
    if (dy) add_to(dy + e, gate ? d * to_f32(gate[i * ld_gate + c]) : d);
    if (dgate) add_to(dgate + i * ld_gate + c, d * to_f32(y[e]));
  }
}

}  // namespace

template <class T>
void gated_residual_forward(T* x, const T* gate, int64_t ld_gate, const T* y, int64_t N, int C, cudaStream_t stream) {
  EMB_LAUNCH(gated_residual_forward_kernel, grid_for(N * C, 256), 256, 0, stream)(x, gate, ld_gate, y, N, C);
  check_launch("gated_residual_forward");
}

template <class T>
void gated_residual_backward(const T* gate, int64_t ld_gate, const T* y, const T* dx, T* dy, T* dgate, int64_t N,
                             int C, cudaStream_t stream) {
  EMB_LAUNCH(gated_residual_backward_kernel, grid_for(N * C, 256), 256, 0, stream)(
      gate, ld_gate, y, dx, dy, dgate, N, C);
  check_launch("gated_residual_backward");
}

#define EMB_INSTANTIATE(T)                                                                                \
  template void gated_residual_forward<T>(T*, const T*, int64_t, const T*, int64_t, int, cudaStream_t); \
  template void gated_residual_backward<T>(const T*, int64_t, const T*, const T*, T*, T*, int64_t, int, cudaStream_t);
EMB_CUDA_FOR_STORAGE(EMB_INSTANTIATE)
#undef EMB_INSTANTIATE

}  // namespace emb::cuda
