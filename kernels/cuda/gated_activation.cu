#include "kernels/cuda/activation_math.cuh"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/gated_activation.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/op_entry.hpp"
#include "kernels/cuda/storage.cuh"

namespace emb::cuda {

namespace {

template <class T>
__global__ void gated_forward_kernel(Activation act, const T* gate, int64_t ld_gate, const T* up, int64_t ld_up, T* y,
                                     int64_t ld_y, int64_t N, int64_t C) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < N * C; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = e / C, c = e % C;
    y[r * ld_y + c] = from_f32<T>(activation_value(act, to_f32(gate[r * ld_gate + c])) * to_f32(up[r * ld_up + c]));
  }
}

template <class T>
__global__ void gated_backward_kernel(Activation act, const T* gate, int64_t ld_gate, const T* up, int64_t ld_up,
                                      const T* dy, int64_t ld_dy, T* dgate, int64_t ld_dgate, T* dup, int64_t ld_dup,
                                      int64_t N, int64_t C) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < N * C; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = e / C, c = e % C;
    const float g = to_f32(gate[r * ld_gate + c]), d = to_f32(dy[r * ld_dy + c]);
    if (dgate) add_to(dgate + r * ld_dgate + c, activation_derivative(act, g) * (d * to_f32(up[r * ld_up + c])));
    if (dup) add_to(dup + r * ld_dup + c, d * activation_value(act, g));
  }
}

}  // namespace

template <class T>
void gated_activation_forward(Activation act, const T* gate, int64_t ld_gate, const T* up, int64_t ld_up, T* y,
                              int64_t ld_y, int64_t N, int64_t C, cudaStream_t stream) {
  if (N * C == 0) return;
  EMB_LAUNCH(gated_forward_kernel, grid_for(N * C, 256), 256, 0, stream)(act, gate, ld_gate, up, ld_up, y, ld_y, N, C);
  check_launch("gated_activation_forward");
}

template <class T>
void gated_activation_backward(Activation act, const T* gate, int64_t ld_gate, const T* up, int64_t ld_up, const T* dy,
                               int64_t ld_dy, T* dgate, int64_t ld_dgate, T* dup, int64_t ld_dup, int64_t N, int64_t C,
                               cudaStream_t stream) {
  if (N * C == 0) return;
  EMB_LAUNCH(gated_backward_kernel, grid_for(N * C, 256), 256, 0, stream)(act, gate, ld_gate, up, ld_up, dy, ld_dy,
                                                                          dgate, ld_dgate, dup, ld_dup, N, C);
  check_launch("gated_activation_backward");
}

#define EMB_INSTANTIATE(T)                                                                                        \
  template void gated_activation_forward<T>(Activation, const T*, int64_t, const T*, int64_t, T*, int64_t, int64_t, \
                                            int64_t, cudaStream_t);                                               \
  template void gated_activation_backward<T>(Activation, const T*, int64_t, const T*, int64_t, const T*, int64_t,   \
                                             T*, int64_t, T*, int64_t, int64_t, int64_t, cudaStream_t);
EMB_CUDA_FOR_STORAGE(EMB_INSTANTIATE)
#undef EMB_INSTANTIATE

}  // namespace emb::cuda

// ---- CudaOps entries (kernels/ops.hpp) ----

namespace emb {

void CudaOps::gated_activation_forward(Activation act, const View& gate, const View& up, const View& y) {
  const OpCheck c = check_gated_activation("gated_activation_forward", act, gate, up, y, View{}, View{});
  dispatch(storage(c, {&gate, &up, &y}), [&](auto t) {
    using T = decltype(t);
    cuda::gated_activation_forward(act, ptr<const T>(gate), gate.ld, ptr<const T>(up), up.ld, ptr<T>(y), y.ld,
                                   gate.rows, gate.cols, stream_);
  });
}

void CudaOps::gated_activation_backward(Activation act, const View& gate, const View& up, const View& dy,
                                        const View& dgate, const View& dup) {
  const OpCheck c = check_gated_activation("gated_activation_backward", act, gate, up, dy, dgate, dup);
  dispatch(storage(c, {&gate, &up, &dy, &dgate, &dup}), [&](auto t) {
    using T = decltype(t);
    cuda::gated_activation_backward(act, ptr<const T>(gate), gate.ld, ptr<const T>(up), up.ld, ptr<const T>(dy),
                                    dy.ld, ptr<T>(dgate), dgate.ld, ptr<T>(dup), dup.ld, gate.rows, gate.cols, stream_);
  });
}

}  // namespace emb
