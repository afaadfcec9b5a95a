#include <vector>

#include "kernels/rope_half_inv_freq.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/op_entry.hpp"
#include "kernels/cuda/rope_half.hpp"
#include "kernels/cuda/storage.cuh"

namespace emb::cuda {

namespace {

// One thread per (token, pair i): the angle once, then the pair in every head.
template <class T>
__global__ void rope_half_kernel(T* x, const int32_t* pos, const float* inv_freq, int64_t n_tokens, int H, int hd,
                                 float direction) {
  const int half = hd / 2;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n_tokens * half;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t t = e / half;
    const int i = int(e % half);
    const float angle = float(pos[t]) * inv_freq[i];
    const float c = float(cos(double(angle))), s = direction * float(sin(double(angle)));
    for (int h = 0; h < H; ++h) {
      T* p = x + (t * H + h) * hd;
      const float a = to_f32(p[i]), b = to_f32(p[i + half]);
      p[i] = from_f32<T>(a * c - b * s);
      p[i + half] = from_f32<T>(b * c + a * s);
    }
  }
}

}  // namespace

size_t rope_half_workspace_bytes(int hd) { return size_t(hd / 2) * sizeof(float); }

template <class T>
void rope_half(T* x, const int32_t* pos, int64_t T_, int H, int hd, float theta, float direction, void* workspace,
               cudaStream_t stream) {
  if (T_ == 0) return;
  const std::vector<float> inv = rope_half_inv_freq(hd, theta);
  // From pageable memory: staged before the call returns.
  check_cuda(cudaMemcpyAsync(workspace, inv.data(), inv.size() * sizeof(float), cudaMemcpyHostToDevice, stream),
             "rope_half: inv_freq");
  EMB_LAUNCH(rope_half_kernel, grid_for(T_ * (hd / 2), 128), 128, 0, stream)(
      x, pos, static_cast<const float*>(workspace), T_, H, hd, direction);
  check_launch("rope_half");
}

#define EMB_INSTANTIATE(T) \
  template void rope_half<T>(T*, const int32_t*, int64_t, int, int, float, float, void*, cudaStream_t);
EMB_CUDA_FOR_STORAGE(EMB_INSTANTIATE)
#undef EMB_INSTANTIATE

}  // namespace emb::cuda

// ---- CudaOps entries (kernels/ops.hpp) ----

namespace emb {

void CudaOps::rope_half_forward(const View& x, const int32_t* pos, const RopeHalfConfig& cfg) {
  const OpCheck c = check_rope_half("rope_half_forward", x, pos, cfg);
  dispatch(storage(c, {&x}), [&](auto t) {
    cuda::rope_half(ptr<decltype(t)>(x), pos, x.rows, cfg.heads, cfg.head_dim, cfg.theta, 1.0f,
                    workspace_.get(cuda::rope_half_workspace_bytes(cfg.head_dim), stream_), stream_);
  });
}

void CudaOps::rope_half_backward(const View& dx, const int32_t* pos, const RopeHalfConfig& cfg) {
  const OpCheck c = check_rope_half("rope_half_backward", dx, pos, cfg);
  dispatch(storage(c, {&dx}), [&](auto t) {
    cuda::rope_half(ptr<decltype(t)>(dx), pos, dx.rows, cfg.heads, cfg.head_dim, cfg.theta, -1.0f,
                    workspace_.get(cuda::rope_half_workspace_bytes(cfg.head_dim), stream_), stream_);
  });
}

}  // namespace emb
