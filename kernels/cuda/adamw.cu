#include <algorithm>
#include <cmath>

#include "kernels/cuda/adamw.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/reduce.cuh"
#include "kernels/cuda/storage.cuh"

namespace emb::cuda {

namespace {

constexpr int kThreads = 256;

template <class G>
struct TensorList {
  AdamWTensor<G> t[kAdamWTensorsPerLaunch];
};

// blockIdx.y picks the tensor; blockIdx.x a strided share of it. partials[y·gridDim.x + x] +=.
template <class G>
__global__ void __launch_bounds__(kThreads) sum_squares_kernel(TensorList<G> list, double* partials) {
  __shared__ double scratch[32];
  const AdamWTensor<G>& t = list.t[blockIdx.y];
  double s = 0.0;
  for (int64_t e = blockIdx.x * int64_t(kThreads) + threadIdx.x; e < t.n; e += int64_t(gridDim.x) * kThreads) {
    const double g = to_f32(t.grad[e]);
    s += g * g;
  }
  s = block_sum(s, scratch);
  if (threadIdx.x == 0) partials[blockIdx.y * gridDim.x + blockIdx.x] += s;
}

__global__ void __launch_bounds__(kThreads) sum_partials_kernel(const double* partials, int64_t n, double* total) {
  __shared__ double scratch[32];
  double s = 0.0;
  for (int64_t e = threadIdx.x; e < n; e += kThreads) s += partials[e];
  s = block_sum(s, scratch);
  if (threadIdx.x == 0) *total = s;
}

struct StepScalars {
  float lr, beta1, beta2, eps, weight_decay, bc1, bc2, grad_scale, max_norm;
};

template <class G>
__global__ void __launch_bounds__(kThreads)
    adamw_kernel(TensorList<G> list, StepScalars s, const double* sum_squares) {
  const AdamWTensor<G>& t = list.t[blockIdx.y];
  float clip = 1.0f;
  if (sum_squares && s.max_norm > 0.0f) {
    const double norm = sqrt(*sum_squares) * s.grad_scale;
    clip = float(fmin(1.0, double(s.max_norm) / (norm + 1e-6)));
  }
  const float scale = s.grad_scale * clip;
  const float decay = s.weight_decay * t.decay_mult;
  for (int64_t e = blockIdx.x * int64_t(kThreads) + threadIdx.x; e < t.n; e += int64_t(gridDim.x) * kThreads) {
    const float g = to_f32(t.grad[e]) * scale;
    const float m = s.beta1 * t.m[e] + (1.0f - s.beta1) * g;
    const float v = s.beta2 * t.v[e] + (1.0f - s.beta2) * g * g;
    t.m[e] = m;
    t.v[e] = v;
    const float m_hat = m / s.bc1, v_hat = v / s.bc2;
    const float p = t.param[e] - s.lr * (m_hat / (sqrtf(v_hat) + s.eps) + decay * t.param[e]);
    t.param[e] = p;
    if (t.param_bf16) t.param_bf16[e] = __float2bfloat16_rn(p);
  }
}

// Calls launch(list, tensors_in_list, max_n) once per group of up to kAdamWTensorsPerLaunch.
template <class G, class Launch>
void for_each_launch(const AdamWTensor<G>* tensors, int count, Launch launch) {
  for (int first = 0; first < count; first += kAdamWTensorsPerLaunch) {
    TensorList<G> list{};
    const int k = std::min(kAdamWTensorsPerLaunch, count - first);
    int64_t max_n = 0;
    for (int j = 0; j < k; ++j) {
      list.t[j] = tensors[first + j];
      max_n = std::max(max_n, list.t[j].n);
    }
    launch(list, k, max_n);
  }
}

}  // namespace

template <class G>
void global_sum_squares(const AdamWTensor<G>* tensors, int count, double* workspace, cudaStream_t stream) {
  double* partials = workspace + 1;
  const int64_t n_partials = kSumSquaresWorkspace - 1;
  check_cuda(cudaMemsetAsync(partials, 0, size_t(n_partials) * sizeof(double), stream), "memset");
  for_each_launch(tensors, count, [&](const TensorList<G>& list, int k, int64_t) {
    EMB_LAUNCH(sum_squares_kernel, dim3(kSumSquaresBlocksPerTensor, k), kThreads, 0, stream)(list, partials);
    check_launch("sum_squares");
  });
  EMB_LAUNCH(sum_partials_kernel, 1, kThreads, 0, stream)(partials, n_partials, workspace);
  check_launch("sum_partials");
}

template <class G>
void adamw_step(const AdamWTensor<G>* tensors, int count, const AdamWConfig& cfg, int64_t step, float grad_scale,
                float max_norm, const double* sum_squares, cudaStream_t stream) {
  // Bias corrections in double then rounded, as the CPU step does.
  const StepScalars s{cfg.lr,
                      cfg.beta1,
                      cfg.beta2,
                      cfg.eps,
                      cfg.weight_decay,
                      static_cast<float>(1.0 - std::pow(double(cfg.beta1), double(step))),
                      static_cast<float>(1.0 - std::pow(double(cfg.beta2), double(step))),
                      grad_scale,
                      max_norm};
  for_each_launch(tensors, count, [&](const TensorList<G>& list, int k, int64_t max_n) {
    const unsigned blocks_x = unsigned(std::clamp<int64_t>((max_n + kThreads - 1) / kThreads, 1, 1024));
    EMB_LAUNCH(adamw_kernel, dim3(blocks_x, k), kThreads, 0, stream)(list, s, sum_squares);
    check_launch("adamw");
  });
}

#define EMB_INSTANTIATE(G)                                                                                 \
  template void global_sum_squares<G>(const AdamWTensor<G>*, int, double*, cudaStream_t);                \
  template void adamw_step<G>(const AdamWTensor<G>*, int, const AdamWConfig&, int64_t, float, float, \
                              const double*, cudaStream_t);
EMB_CUDA_FOR_STORAGE(EMB_INSTANTIATE)
#undef EMB_INSTANTIATE

}  // namespace emb::cuda
