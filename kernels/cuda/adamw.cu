#include <algorithm>
#include <cmath>

#include "kernels/cuda/adamw.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/op_entry.hpp"
#include "kernels/cuda/reduce.cuh"
#include "kernels/cuda/storage.cuh"
#include "kernels/cuda/vector_access.cuh"

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

// One element's update (cpu::adamw_step's formula); g is the raw gradient, scale = grad_scale·clip.
__device__ __forceinline__ float adamw_update(const StepScalars& s, float scale, float decay, float g_raw, float p,
                                              float& m, float& v) {
  const float g = g_raw * scale;
  m = s.beta1 * m + (1.0f - s.beta1) * g;
  v = s.beta2 * v + (1.0f - s.beta2) * g * g;
  const float m_hat = m / s.bc1, v_hat = v / s.bc2;
  return p - s.lr * (m_hat / (sqrtf(v_hat) + s.eps) + decay * p);
}

constexpr int kAdamWVector = 4;  // fp32 ×4 = 16 bytes (param, m, v); bf16 ×4 = 8 bytes (grad, copy)

// The element index from which every operand of t is aligned for kAdamWVector-wide access: the
// elements before param's first 16-byte boundary, or t.n when the operands' alignments differ
// (a bf16 gradient at another offset): then the whole tensor takes the scalar path.
template <class G>
__device__ int64_t vector_start(const AdamWTensor<G>& t) {
  const int64_t head = int64_t((16 - reinterpret_cast<uintptr_t>(t.param) % 16) % 16 / sizeof(float));
  if (head >= t.n) return t.n;
  const bool aligned = vector_aligned(t.m + head) && vector_aligned(t.v + head) &&
                       vector_aligned(t.grad + head, kAdamWVector * sizeof(G)) &&
                       (!t.param_bf16 || vector_aligned(t.param_bf16 + head, kAdamWVector * 2));
  return aligned ? head : t.n;
}

// blockIdx.y picks the tensor; a scalar head up to the first aligned element, vectors of
// kAdamWVector, a scalar tail.
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
  const int64_t first = blockIdx.x * int64_t(kThreads) + threadIdx.x, stride = int64_t(gridDim.x) * kThreads;
  auto scalar = [&](int64_t e) {
    float m = t.m[e], v = t.v[e];
    const float p = adamw_update(s, scale, decay, to_f32(t.grad[e]), t.param[e], m, v);
    t.m[e] = m;
    t.v[e] = v;
    t.param[e] = p;
    if (t.param_bf16) t.param_bf16[e] = __float2bfloat16_rn(p);
  };
  constexpr int V = kAdamWVector;
  const int64_t head = vector_start(t), vectors = (t.n - head) / V, tail = head + vectors * V;
  for (int64_t e = first; e < head; e += stride) scalar(e);
  for (int64_t q = first; q < vectors; q += stride) {
    const int64_t e = head + q * V;
    float p[V], g[V], m[V], v[V];
    load_vector<V>(t.param + e, p);
    load_vector<V>(t.grad + e, g);
    load_vector<V>(t.m + e, m);
    load_vector<V>(t.v + e, v);
#pragma unroll
    for (int j = 0; j < V; ++j) p[j] = adamw_update(s, scale, decay, g[j], p[j], m[j], v[j]);
    store_vector<V>(t.m + e, m);
    store_vector<V>(t.v + e, v);
    store_vector<V>(t.param + e, p);
    if (t.param_bf16) store_vector<V>(t.param_bf16 + e, p);
  }
  for (int64_t e = tail + first; e < t.n; e += stride) scalar(e);
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
    const int64_t per_block = int64_t(kThreads) * kAdamWVector;
    const unsigned blocks_x = unsigned(std::clamp<int64_t>((max_n + per_block - 1) / per_block, 1, 1024));
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

// ---- CudaOps entries (kernels/ops.hpp) ----

namespace emb {

void CudaOps::sum_squares(const View& g, double* out) {
  const OpCheck c = check_sum_squares(g, out);
  c.contiguous();
  dispatch(storage(c, {&g}), [&](auto tag) {
    using G = decltype(tag);
    cuda::AdamWTensor<G> tensor;
    tensor.grad = ptr<const G>(g);
    tensor.n = g.size();
    auto* ws = static_cast<double*>(workspace_.get(cuda::kSumSquaresWorkspace * sizeof(double), stream_));
    cuda::global_sum_squares(&tensor, 1, ws, stream_);
    check_cuda(cudaMemcpyAsync(out, ws, sizeof(double), cudaMemcpyDeviceToDevice, stream_), "sum_squares");
  });
}

void CudaOps::adamw_step(const View& param, const View& grad, const View& m, const View& v, const AdamWConfig& cfg,
                         int64_t step, float grad_scale, float decay_mult) {
  const OpCheck c = check_adamw_step(param, grad, m, v);
  fp32_views(c, {{"param", &param}, {"m", &m}, {"v", &v}});
  c.contiguous();
  dispatch(storage(c, {&grad}), [&](auto tag) {
    using G = decltype(tag);
    cuda::AdamWTensor<G> tensor;
    tensor.param = f(param);
    tensor.grad = ptr<const G>(grad);
    tensor.m = f(m);
    tensor.v = f(v);
    tensor.n = param.size();
    tensor.decay_mult = decay_mult;
    cuda::adamw_step(&tensor, 1, cfg, step, grad_scale, 0.0f, nullptr, stream_);  // no clipping here
  });
}

}  // namespace emb
