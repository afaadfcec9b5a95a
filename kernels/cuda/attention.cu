#include <cmath>

#include "kernels/cuda/attention.hpp"
#include "kernels/cuda/attention_mma.hpp"
#include "kernels/cuda/attention_passes.cuh"
#include "kernels/cuda/attention_wgmma.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/op_entry.hpp"
#include "kernels/cuda/storage.cuh"

namespace emb::cuda {

namespace {

constexpr int kLanes = 4;                     // threads per query (or key) row
constexpr int kThreads = kAttnTile * kLanes;  // one block: 32 rows

// Sum over the four threads of one row (lanes 4r .. 4r+3 of a warp).
__device__ __forceinline__ float row_sum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  v += __shfl_xor_sync(0xffffffffu, v, 2);
  return v;
}

// tile[r][d] = src[(row0 + r)·ld + col0 + d] in fp32 (0 beyond T).
template <class T, int HD>
__device__ void load_tile(const T* src, float (*tile)[HD], int64_t row0, int64_t T_, int64_t ld, int64_t col0) {
  for (int e = threadIdx.x; e < kAttnTile * HD; e += kThreads) {
    const int r = e / HD, d = e % HD;
    tile[r][d] = row0 + r < T_ ? to_f32(src[(row0 + r) * ld + col0 + d]) : 0.0f;
  }
}

// This thread's dims (lane, lane+4, ...) of row i, times mul (0 beyond T).
template <class T, int HD>
__device__ void load_row(const T* src, float (&dst)[HD / kLanes], int64_t i, int64_t T_, int64_t ld, int64_t col0,
                         int lane, float mul) {
#pragma unroll
  for (int t = 0; t < HD / kLanes; ++t) dst[t] = i < T_ ? to_f32(src[i * ld + col0 + lane + kLanes * t]) * mul : 0.0f;
}

template <int HD>
__device__ __forceinline__ float dot_row(const float (&a)[HD / kLanes], const float* row, int lane) {
  float s = 0.0f;
#pragma unroll
  for (int t = 0; t < HD / kLanes; ++t) s += a[t] * row[lane + kLanes * t];
  return row_sum(s);
}

// Grid (query tiles, heads). Thread (row, lane) owns query i and dims lane + 4t.
template <class T, int HD>
__global__ void __launch_bounds__(kThreads)
    attention_forward_kernel(const T* q, const T* k, const T* v, T* out, float* lse, Params p) {
  constexpr int S = HD / kLanes;
  __shared__ float ks[kAttnTile][HD], vs[kAttnTile][HD];
  __shared__ TokenIndex k_idx[kAttnTile];
  const int row = threadIdx.x / kLanes, lane = threadIdx.x % kLanes, h = blockIdx.y;
  const int64_t ld = int64_t(p.H) * HD, i = int64_t(blockIdx.x) * kAttnTile + row;
  const TokenIndex qi = p.q_side.at(i);
  float qr[S], acc[S];
  load_row<T, HD>(q, qr, i, p.Tq, ld, int64_t(h) * HD, lane, p.scale);
#pragma unroll
  for (int t = 0; t < S; ++t) acc[t] = 0.0f;
  float m = -INFINITY, l = 0.0f;
  bool allowed = false;  // some key is allowed, whatever its score
  const TileSummary q_tile = p.q_tiles[blockIdx.x];
  for (int64_t kt = 0; kt < tiles_of(p.Tk); ++kt) {
    if (!tiles_may_attend(p.mask, q_tile, p.k_tiles[kt])) continue;  // uniform over the block
    const int64_t j0 = kt * kAttnTile;
    __syncthreads();  // the previous tile is no longer read
    load_tile<T, HD>(k, ks, j0, p.Tk, ld, int64_t(h) * HD);
    load_tile<T, HD>(v, vs, j0, p.Tk, ld, int64_t(h) * HD);
    if (threadIdx.x < kAttnTile) k_idx[threadIdx.x] = p.k_side.at(j0 + threadIdx.x);
    __syncthreads();
    float s[kAttnTile];
    float tile_max = -INFINITY;
#pragma unroll
    for (int j = 0; j < kAttnTile; ++j) {
      const float d = dot_row<HD>(qr, ks[j], lane);
      const bool attends = tokens_attend(p.mask, qi, k_idx[j]);
      allowed = allowed || attends;
      s[j] = attends ? d : -INFINITY;
      tile_max = nan_max(tile_max, s[j]);
    }
    if (tile_max == -INFINITY) continue;
    const float m_new = nan_max(m, tile_max);
    const float correction = expf(m - m_new);
    l *= correction;
#pragma unroll
    for (int t = 0; t < S; ++t) acc[t] *= correction;
#pragma unroll
    for (int j = 0; j < kAttnTile; ++j) {
      const float pj = expf(s[j] - m_new);
      l += pj;
#pragma unroll
      for (int t = 0; t < S; ++t) acc[t] += pj * vs[j][lane + kLanes * t];
    }
    m = m_new;
  }
  if (i >= p.Tq) return;
  // NaN stays NaN; l = 0: empty_row_*.
  const float inv_l = l != 0.0f ? 1.0f / l : empty_row_inverse_sum(allowed);
#pragma unroll
  for (int t = 0; t < S; ++t) out[i * ld + int64_t(h) * HD + lane + kLanes * t] = from_f32<T>(acc[t] * inv_l);
  if (lane == 0) lse[i * p.H + h] = l != 0.0f ? m + logf(l) : empty_row_lse(allowed);
}

// P = exp(s − lse), dP = dout·v, dS = P∘(dP − D). Query-major: dq += scale·Σ_j dS·k.
template <class T, int HD>
__global__ void __launch_bounds__(kThreads)
    attention_dq_kernel(const T* q, const T* k, const T* v, const float* lse, const T* dout, const float* D, T* dq,
                        Params p) {
  constexpr int S = HD / kLanes;
  __shared__ float ks[kAttnTile][HD], vs[kAttnTile][HD];
  __shared__ TokenIndex k_idx[kAttnTile];
  const int row = threadIdx.x / kLanes, lane = threadIdx.x % kLanes, h = blockIdx.y;
  const int64_t ld = int64_t(p.H) * HD, i = int64_t(blockIdx.x) * kAttnTile + row;
  const TokenIndex qi = p.q_side.at(i);
  float qr[S], dor[S], acc[S];
  load_row<T, HD>(q, qr, i, p.Tq, ld, int64_t(h) * HD, lane, p.scale);
  load_row<T, HD>(dout, dor, i, p.Tq, ld, int64_t(h) * HD, lane, 1.0f);
#pragma unroll
  for (int t = 0; t < S; ++t) acc[t] = 0.0f;
  const float lse_i = i < p.Tq ? lse[i * p.H + h] : 0.0f, D_i = i < p.Tq ? D[i * p.H + h] : 0.0f;
  const TileSummary q_tile = p.q_tiles[blockIdx.x];
  for (int64_t kt = 0; kt < tiles_of(p.Tk); ++kt) {
    if (!tiles_may_attend(p.mask, q_tile, p.k_tiles[kt])) continue;
    const int64_t j0 = kt * kAttnTile;
    __syncthreads();
    load_tile<T, HD>(k, ks, j0, p.Tk, ld, int64_t(h) * HD);
    load_tile<T, HD>(v, vs, j0, p.Tk, ld, int64_t(h) * HD);
    if (threadIdx.x < kAttnTile) k_idx[threadIdx.x] = p.k_side.at(j0 + threadIdx.x);
    __syncthreads();
#pragma unroll 4
    for (int j = 0; j < kAttnTile; ++j) {
      const float s = dot_row<HD>(qr, ks[j], lane);
      const float dp = dot_row<HD>(dor, vs[j], lane);
      const float pj = tokens_attend(p.mask, qi, k_idx[j]) ? expf(s - lse_i) : 0.0f;
      const float ds = pj * (dp - D_i);
#pragma unroll
      for (int t = 0; t < S; ++t) acc[t] += ds * ks[j][lane + kLanes * t];
    }
  }
  if (i >= p.Tq) return;
#pragma unroll
  for (int t = 0; t < S; ++t) add_to(dq + i * ld + int64_t(h) * HD + lane + kLanes * t, p.scale * acc[t]);
}

// Key-major: thread (row, lane) owns key j; dv += Σ_i P·dout_i, dk += scale·Σ_i dS·q_i.
template <class T, int HD>
__global__ void __launch_bounds__(kThreads)
    attention_dkdv_kernel(const T* q, const T* k, const T* v, const float* lse, const T* dout, const float* D, T* dk,
                          T* dv, Params p) {
  constexpr int S = HD / kLanes;
  __shared__ float qs[kAttnTile][HD], dos[kAttnTile][HD];
  __shared__ float lse_s[kAttnTile], D_s[kAttnTile];
  __shared__ TokenIndex q_idx[kAttnTile];
  const int row = threadIdx.x / kLanes, lane = threadIdx.x % kLanes, h = blockIdx.y;
  const int64_t ld = int64_t(p.H) * HD, j = int64_t(blockIdx.x) * kAttnTile + row;
  const TokenIndex kj = p.k_side.at(j);
  float kr[S], vr[S], dk_acc[S], dv_acc[S];
  load_row<T, HD>(k, kr, j, p.Tk, ld, int64_t(h) * HD, lane, p.scale);
  load_row<T, HD>(v, vr, j, p.Tk, ld, int64_t(h) * HD, lane, 1.0f);
#pragma unroll
  for (int t = 0; t < S; ++t) dk_acc[t] = dv_acc[t] = 0.0f;
  const TileSummary k_tile = p.k_tiles[blockIdx.x];
  for (int64_t qt = 0; qt < tiles_of(p.Tq); ++qt) {
    if (!tiles_may_attend(p.mask, p.q_tiles[qt], k_tile)) continue;
    const int64_t i0 = qt * kAttnTile;
    __syncthreads();
    load_tile<T, HD>(q, qs, i0, p.Tq, ld, int64_t(h) * HD);
    load_tile<T, HD>(dout, dos, i0, p.Tq, ld, int64_t(h) * HD);
    if (threadIdx.x < kAttnTile) {
      const int64_t i = i0 + threadIdx.x;
      q_idx[threadIdx.x] = p.q_side.at(i);
      lse_s[threadIdx.x] = i < p.Tq ? lse[i * p.H + h] : 0.0f;
      D_s[threadIdx.x] = i < p.Tq ? D[i * p.H + h] : 0.0f;
    }
    __syncthreads();
#pragma unroll 4
    for (int r = 0; r < kAttnTile; ++r) {
      const float s = dot_row<HD>(kr, qs[r], lane);
      const float dp = dot_row<HD>(vr, dos[r], lane);
      const float pr = tokens_attend(p.mask, q_idx[r], kj) ? expf(s - lse_s[r]) : 0.0f;
      const float ds = pr * (dp - D_s[r]);
#pragma unroll
      for (int t = 0; t < S; ++t) {
        dv_acc[t] += pr * dos[r][lane + kLanes * t];
        dk_acc[t] += ds * qs[r][lane + kLanes * t];
      }
    }
  }
  if (j >= p.Tk) return;
#pragma unroll
  for (int t = 0; t < S; ++t) {
    const int64_t e = j * ld + int64_t(h) * HD + lane + kLanes * t;
    add_to(dk + e, p.scale * dk_acc[t]);
    add_to(dv + e, dv_acc[t]);
  }
}

// The SIMT kernels' head dims: kAttentionHeadDims (attention.hpp).
template <class Body>
void dispatch_simt_head_dim(int hd, Body body) {
  dispatch_head_dim<8, 16, 32, 48, 64, 72, 128>("attention (cuda)", hd, body);
}

}  // namespace

const char* attention_head_dims_text() { return "8, 16, 32, 48, 64, 72, 128"; }

template <class T>
void attention_forward(const T* q, const T* k, const T* v, T* out, float* lse, int64_t Tq, int64_t Tk, int H, int hd,
                       const AttnIndex& idx, void* workspace, cudaStream_t stream, unsigned long long* keyless) {
  if (Tq == 0) return;
  const Workspace w = carve_workspace(workspace, Tq, Tk);
  const Params p = summarize(idx, Tq, Tk, H, hd, w, stream);
  const dim3 grid(unsigned(tiles_of(Tq)), unsigned(H));
  dispatch_simt_head_dim(hd, [&](auto head_dim) {
    EMB_LAUNCH((attention_forward_kernel<T, decltype(head_dim)::value>), grid, kThreads, 0, stream)(
        q, k, v, out, lse, p);
  });
  check_launch("attention_forward");
  check_keyless_rows(lse, p, w, stream, keyless);
}

template <class T>
void attention_backward(const T* q, const T* k, const T* v, const T* out, const float* lse, const T* dout, T* dq, T* dk,
                        T* dv, int64_t Tq, int64_t Tk, int H, int hd, const AttnIndex& idx, void* workspace,
                        cudaStream_t stream) {
  if (Tq == 0 || Tk == 0) return;
  const Workspace w = carve_workspace(workspace, Tq, Tk);
  const Params p = summarize(idx, Tq, Tk, H, hd, w, stream);
  launch_attention_dot(out, dout, w.d, Tq, H, hd, stream);
  dispatch_simt_head_dim(hd, [&](auto head_dim) {
    constexpr int HD = decltype(head_dim)::value;
    EMB_LAUNCH((attention_dq_kernel<T, HD>), dim3(unsigned(tiles_of(Tq)), unsigned(H)), kThreads, 0, stream)(
        q, k, v, lse, dout, w.d, dq, p);
    EMB_LAUNCH((attention_dkdv_kernel<T, HD>), dim3(unsigned(tiles_of(Tk)), unsigned(H)), kThreads, 0, stream)(
        q, k, v, lse, dout, w.d, dk, dv, p);
  });
  check_launch("attention_backward");
}

#define EMB_INSTANTIATE(T)                                                                                           \
  template void attention_forward<T>(const T*, const T*, const T*, T*, float*, int64_t, int64_t, int, int,          \
                                     const AttnIndex&, void*, cudaStream_t, unsigned long long*);                    \
  template void attention_backward<T>(const T*, const T*, const T*, const T*, const float*, const T*, T*, T*, T*,   \
                                      int64_t, int64_t, int, int, const AttnIndex&, void*, cudaStream_t);
EMB_CUDA_FOR_STORAGE(EMB_INSTANTIATE)
#undef EMB_INSTANTIATE

}  // namespace emb::cuda

// ---- CudaOps entries (kernels/ops.hpp) ----

namespace emb {

namespace {
void check_head_dim(const OpCheck& c, const AttnConfig& cfg) {
  c.expect(cuda::attention_head_dim_built(cfg.head_dim),
           "head_dim ", cfg.head_dim, " is not built on CUDA (", cuda::attention_head_dims_text(), ")");
}
}  // namespace

// bf16 runs on tensor cores (attention_mma.hpp) when its views are 16-byte aligned, as cp.async
// needs, at the head dims those kernels are built for, forward and backward on the Hopper kernels
// (attention_wgmma.hpp) when the device is sm_90 (attention_wgmma_selected); fp32 (and other
// bf16) keeps the SIMT kernels of this file, the fp32 path that matches the CPU to 1e-5.
void CudaOps::attention_forward(const View& q, const View& k, const View& v, const View& out, const View& lse,
                                const AttnConfig& cfg, const AttnIndex& idx) {
  const OpCheck c = check_attention("attention_forward", q, k, v, out, lse, cfg, idx);
  check_head_dim(c, cfg);
  fp32_views(c, {{"lse", &lse}});
  c.contiguous();
  dispatch(storage(c, {&q, &k, &v, &out}), [&](auto t) {
    using T = decltype(t);
    void* ws = workspace_.get(cuda::attention_workspace_bytes(q.rows, k.rows, cfg.heads), stream_);
    if constexpr (std::is_same_v<T, bf16_t>)
      if (cuda::attention_mma_head_dim_built(cfg.head_dim) &&
          cuda::attention_mma_aligned({q.data, k.data, v.data, out.data}))
        return (wgmma_attention_ ? cuda::attention_wgmma_forward : cuda::attention_mma_forward)(
            ptr<const T>(q), ptr<const T>(k), ptr<const T>(v), ptr<T>(out), f(lse), q.rows, k.rows, cfg.heads,
            cfg.head_dim, idx, ws, stream_, keyless_row_);
    cuda::attention_forward(ptr<const T>(q), ptr<const T>(k), ptr<const T>(v), ptr<T>(out), f(lse), q.rows, k.rows,
                            cfg.heads, cfg.head_dim, idx, ws, stream_, keyless_row_);
  });
}

void CudaOps::attention_backward(const View& q, const View& k, const View& v, const View& out, const View& lse,
                                 const View& dout, const View& dq, const View& dk, const View& dv,
                                 const AttnConfig& cfg, const AttnIndex& idx) {
  const OpCheck c = check_attention_backward(q, k, v, out, lse, dout, dq, dk, dv, cfg, idx);
  check_head_dim(c, cfg);
  fp32_views(c, {{"lse", &lse}});
  c.contiguous();
  dispatch(storage(c, {&q, &k, &v, &out, &dout, &dq, &dk, &dv}), [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, bf16_t>)
      if (cuda::attention_mma_head_dim_built(cfg.head_dim) &&
          cuda::attention_mma_aligned({q.data, k.data, v.data, out.data, dout.data, dq.data, dk.data, dv.data})) {
        if (wgmma_attention_)
          return cuda::attention_wgmma_backward(
              ptr<const T>(q), ptr<const T>(k), ptr<const T>(v), ptr<const T>(out), fp(lse), ptr<const T>(dout),
              ptr<T>(dq), ptr<T>(dk), ptr<T>(dv), q.rows, k.rows, cfg.heads, cfg.head_dim, idx,
              workspace_.get(cuda::attention_wgmma_workspace_bytes(q.rows, k.rows, cfg.heads, cfg.head_dim,
                                                                   dq_accumulation_),
                             stream_),
              stream_, dq_accumulation_);
        return cuda::attention_mma_backward(
            ptr<const T>(q), ptr<const T>(k), ptr<const T>(v), ptr<const T>(out), fp(lse), ptr<const T>(dout),
            ptr<T>(dq), ptr<T>(dk), ptr<T>(dv), q.rows, k.rows, cfg.heads, cfg.head_dim, idx,
            workspace_.get(cuda::attention_workspace_bytes(q.rows, k.rows, cfg.heads), stream_), stream_);
      }
    void* ws = workspace_.get(cuda::attention_workspace_bytes(q.rows, k.rows, cfg.heads), stream_);
    cuda::attention_backward(ptr<const T>(q), ptr<const T>(k), ptr<const T>(v), ptr<const T>(out), fp(lse),
                             ptr<const T>(dout), ptr<T>(dq), ptr<T>(dk), ptr<T>(dv), q.rows, k.rows, cfg.heads,
                             cfg.head_dim, idx, ws, stream_);
  });
}

}  // namespace emb
