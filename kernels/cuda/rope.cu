#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/op_entry.hpp"
#include "kernels/cuda/rope.hpp"
#include "kernels/cuda/storage.cuh"

namespace emb::cuda {

namespace {

// One thread per (token, pair): the angle once, then the pair in every head.
template <class T>
__global__ void rope_kernel(T* x, const int32_t* pos, int64_t n_tokens, int H, int hd, RopeMode mode,
                            const int32_t* token_modes, double direction) {
  const int pairs = hd / 2;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n_tokens * pairs;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t t = e / pairs;
    const int k = int(e % pairs);
    const RopeMode m = token_modes ? RopeMode(token_modes[t]) : mode;
    if (m == RopeMode::none) continue;
    const int c_hw = m == RopeMode::d3 ? pairs / 3 : 0;
    const int c_f = pairs - 2 * c_hw;
    const int axis = k < c_f ? 0 : (k < c_f + c_hw ? 1 : 2);
    const int k_axis = axis == 0 ? k : k - c_f - (axis - 1) * c_hw;
    const int c = axis == 0 ? c_f : c_hw;
    const double phi = pos[t * 3 + axis] * pow(10000.0, -double(k_axis) / c);
    const float cos_phi = float(cos(phi)), sin_phi = float(direction * sin(phi));
    for (int h = 0; h < H; ++h) {
      T* p = x + (t * H + h) * hd + 2 * k;
      const float x0 = to_f32(p[0]), x1 = to_f32(p[1]);
      p[0] = from_f32<T>(x0 * cos_phi - x1 * sin_phi);
      p[1] = from_f32<T>(x0 * sin_phi + x1 * cos_phi);
    }
  }
}

template <class T>
void rotate(T* x, const int32_t* pos, int64_t n_tokens, int H, int hd, RopeMode mode, const int32_t* token_modes,
            double direction, cudaStream_t stream) {
  if ((mode == RopeMode::none && !token_modes) || n_tokens == 0) return;
  EMB_CHECK(hd % 2 == 0, "rope: head dim ", hd, " must be even");
  EMB_LAUNCH(rope_kernel, grid_for(n_tokens * (hd / 2), 128), 128, 0, stream)(x, pos, n_tokens, H, hd, mode,
                                                                              token_modes, direction);
  check_launch("rope");
}

}  // namespace

template <class T>
void rope_forward(T* x, const int32_t* pos, int64_t T_, int H, int hd, RopeMode mode, const int32_t* token_modes,
                  cudaStream_t stream) {
  rotate(x, pos, T_, H, hd, mode, token_modes, 1.0, stream);
}

template <class T>
void rope_backward(T* dx, const int32_t* pos, int64_t T_, int H, int hd, RopeMode mode, const int32_t* token_modes,
                   cudaStream_t stream) {
  rotate(dx, pos, T_, H, hd, mode, token_modes, -1.0, stream);
}

#define EMB_INSTANTIATE(T)                                                                                            \
  template void rope_forward<T>(T*, const int32_t*, int64_t, int, int, RopeMode, const int32_t*, cudaStream_t); \
  template void rope_backward<T>(T*, const int32_t*, int64_t, int, int, RopeMode, const int32_t*, cudaStream_t);
EMB_CUDA_FOR_STORAGE(EMB_INSTANTIATE)
#undef EMB_INSTANTIATE

}  // namespace emb::cuda

// ---- CudaOps entries (kernels/ops.hpp) ----

namespace emb {

namespace {
// Both directions check and dispatch alike: rotate(p) runs the kernel on x's pointer p.
template <class Rotate>
void rope_entry(const char* op, const View& x, const int32_t* pos, const RopeConfig& cfg, Rotate rotate) {
  const OpCheck c = check_rope(op, x, pos, cfg);
  c.contiguous();
  dispatch(storage(c, {&x}), [&](auto t) { rotate(ptr<decltype(t)>(x)); });
}
}  // namespace

void CudaOps::rope_forward(const View& x, const int32_t* pos, const RopeConfig& cfg) {
  rope_entry("rope_forward", x, pos, cfg,
             [&](auto* p) {
               cuda::rope_forward(p, pos, x.rows, cfg.heads, cfg.head_dim, cfg.mode, cfg.token_modes, stream_);
             });
}

void CudaOps::rope_backward(const View& dx, const int32_t* pos, const RopeConfig& cfg) {
  rope_entry("rope_backward", dx, pos, cfg,
             [&](auto* p) {
               cuda::rope_backward(p, pos, dx.rows, cfg.heads, cfg.head_dim, cfg.mode, cfg.token_modes, stream_);
             });
}

}  // namespace emb
