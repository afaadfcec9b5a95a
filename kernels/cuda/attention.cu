#include <climits>
#include <cmath>
#include <type_traits>

#include "kernels/cuda/attention.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/reduce.cuh"
#include "kernels/cuda/storage.cuh"

namespace emb::cuda {

namespace {

constexpr int kLanes = 4;                     // threads per query (or key) row
constexpr int kThreads = kAttnTile * kLanes;  // one block: 32 rows

// The index arrays of one side (queries or keys).
struct Side {
  const int32_t *seq, *blk, *grp;
  int64_t T;
  __device__ TokenIndex at(int64_t i) const { return token_at(seq, blk, grp, i, T); }
};

__host__ __device__ int64_t tiles_of(int64_t T) { return (T + kAttnTile - 1) / kAttnTile; }

// Workspace layout: the first query row without an allowed key (forward), query summaries, key
// summaries, then D [Tq, H] (fp32, backward).
struct Workspace {
  unsigned long long* keyless_row;
  TileSummary* q_tiles;
  TileSummary* k_tiles;
  float* d;
};

size_t align256(size_t bytes) { return (bytes + 255) / 256 * 256; }

Workspace carve(void* base, int64_t Tq, int64_t Tk) {
  char* p = static_cast<char*>(base);
  Workspace w;
  w.keyless_row = reinterpret_cast<unsigned long long*>(p);
  p += align256(sizeof(unsigned long long));
  w.q_tiles = reinterpret_cast<TileSummary*>(p);
  p += align256(size_t(tiles_of(Tq)) * sizeof(TileSummary));
  w.k_tiles = reinterpret_cast<TileSummary*>(p);
  p += align256(size_t(tiles_of(Tk)) * sizeof(TileSummary));
  w.d = reinterpret_cast<float*>(p);
  return w;
}

__global__ void summarize_tiles_kernel(Side side, TileSummary* out, int64_t n_tiles) {
  const int64_t tile = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (tile >= n_tiles) return;
  TileSummary s = empty_tile();
  for (int r = 0; r < kAttnTile; ++r) add_token(s, side.at(tile * kAttnTile + r));
  out[tile] = s;
}

// max that propagates NaN (fmaxf drops it): a NaN score makes its row NaN, as on the CPU.
__device__ __forceinline__ float nan_max(float a, float b) { return b > a || b != b ? b : a; }

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

struct Params {
  int64_t Tq, Tk;
  int H;
  AttnMask mask;
  Side q_side, k_side;
  const TileSummary *q_tiles, *k_tiles;
  float scale;
};

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
      s[j] = tokens_attend(p.mask, qi, k_idx[j]) ? d : -INFINITY;
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
  // l = 0 only without an allowed key (padding rows; real rows are reported); NaN stays NaN.
  const float inv_l = l != 0.0f ? 1.0f / l : 0.0f;
#pragma unroll
  for (int t = 0; t < S; ++t) out[i * ld + int64_t(h) * HD + lane + kLanes * t] = from_f32<T>(acc[t] * inv_l);
  if (lane == 0) lse[i * p.H + h] = l != 0.0f ? m + logf(l) : -INFINITY;
}

// A keyless row as one word, ordered by row: row (31 bits) | seq (31 bits) | mask (2 bits), so
// atomicMin keeps the lowest row over every call since the word was reset.
__host__ __device__ unsigned long long pack_keyless(int64_t row, int32_t seq, AttnMask mask) {
  return (static_cast<unsigned long long>(row) << 33) | (static_cast<unsigned long long>(seq) << 2) |
         static_cast<unsigned long long>(mask);
}

// The lowest real query row (seq ≥ 0) whose head-0 lse is −inf (no allowed key: the mask is
// the same for every head) into *row (pack_keyless), which starts at kNoKeylessRow.
__global__ void keyless_row_kernel(const float* lse, Side q_side, int H, AttnMask mask, unsigned long long* row) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= q_side.T) return;
  if (q_side.seq[i] >= 0 && lse[i * H] == -INFINITY) atomicMin(row, pack_keyless(i, q_side.seq[i], mask));
}

// D[i, h] = Σ_d dout·out, one warp per (row, head).
template <class T>
__global__ void attention_dot_kernel(const T* out, const T* dout, float* D, int64_t Tq, int H, int hd) {
  const int64_t w = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (w >= Tq * H) return;  // whole warps leave together
  float s = 0.0f;
  for (int d = lane; d < hd; d += 32) s += to_f32(out[w * hd + d]) * to_f32(dout[w * hd + d]);
  s = warp_sum(s);
  if (lane == 0) D[w] = s;
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

Params summarize(const AttnIndex& idx, int64_t Tq, int64_t Tk, int H, int hd, const Workspace& w,
                 cudaStream_t stream) {
  EMB_CHECK(attention_head_dim_built(hd), "attention (cuda): head dim ", hd, " not built (", attention_head_dims_text(),
            ")");
  Params p;
  p.Tq = Tq;
  p.Tk = Tk;
  p.H = H;
  p.mask = idx.mask;
  p.q_side = Side{idx.q_seq, idx.q_blk, idx.q_grp, Tq};
  p.k_side = Side{idx.k_seq, idx.k_blk, idx.k_grp, Tk};
  p.q_tiles = w.q_tiles;
  p.k_tiles = w.k_tiles;
  p.scale = float(1.0 / std::sqrt(double(hd)));
  for (const auto& [side, tiles] : {std::pair{p.q_side, w.q_tiles}, std::pair{p.k_side, w.k_tiles}}) {
    const int64_t n = tiles_of(side.T);
    if (n == 0) continue;  // an empty context: no tiles (a zero-sized grid is a launch error)
    EMB_LAUNCH(summarize_tiles_kernel, unsigned((n + 127) / 128), 128, 0, stream)(side, tiles, n);
  }
  check_launch("attention summaries");
  return p;
}

}  // namespace

const char* attention_head_dims_text() { return "8, 16, 32, 48, 64, 128"; }

std::string keyless_row_error(unsigned long long recorded) {
  if (recorded == kNoKeylessRow) return "";
  const auto row = recorded >> 33, seq = (recorded >> 2) & 0x7fffffffull;
  return str("attention: query token ", row, " (seq ", seq, ") has no allowed key under mask ",
             cpu::attn_mask_name(AttnMask(recorded & 3)));
}

namespace {

// Calls body(std::integral_constant<int, HD>) for the supported head dims (kAttentionHeadDims).
template <class Body>
void dispatch_head_dim(int hd, Body body) {
  switch (hd) {
    case 8: body(std::integral_constant<int, 8>{}); break;
    case 16: body(std::integral_constant<int, 16>{}); break;
    case 32: body(std::integral_constant<int, 32>{}); break;
    case 48: body(std::integral_constant<int, 48>{}); break;
    case 64: body(std::integral_constant<int, 64>{}); break;
    default: body(std::integral_constant<int, 128>{}); break;
  }
}

}  // namespace

size_t attention_workspace_bytes(int64_t Tq, int64_t Tk, int H) {
  return align256(sizeof(unsigned long long)) + align256(size_t(tiles_of(Tq)) * sizeof(TileSummary)) + align256(size_t(tiles_of(Tk)) * sizeof(TileSummary)) +
         size_t(Tq) * H * sizeof(float);
}

template <class T>
void attention_forward(const T* q, const T* k, const T* v, T* out, float* lse, int64_t Tq, int64_t Tk, int H, int hd,
                       const AttnIndex& idx, void* workspace, cudaStream_t stream, unsigned long long* keyless) {
  if (Tq == 0) return;
  EMB_CHECK(Tq < (int64_t(1) << 31), "attention (cuda): ", Tq, " query tokens in one call (at most 2^31 - 1)");
  const Workspace w = carve(workspace, Tq, Tk);
  const Params p = summarize(idx, Tq, Tk, H, hd, w, stream);
  const dim3 grid(unsigned(tiles_of(Tq)), unsigned(H));
  dispatch_head_dim(hd, [&](auto head_dim) {
    EMB_LAUNCH((attention_forward_kernel<T, decltype(head_dim)::value>), grid, kThreads, 0, stream)(
        q, k, v, out, lse, p);
  });
  check_launch("attention_forward");
  unsigned long long* record = keyless ? keyless : w.keyless_row;
  if (!keyless)
    check_cuda(cudaMemsetAsync(record, 0xff, sizeof(unsigned long long), stream), "attention keyless row");
  EMB_LAUNCH(keyless_row_kernel, unsigned((Tq + 255) / 256), 256, 0, stream)(lse, p.q_side, H, idx.mask, record);
  check_launch("attention keyless rows");
  if (keyless) return;
  unsigned long long row = kNoKeylessRow;
  check_cuda(cudaMemcpyAsync(&row, record, sizeof row, cudaMemcpyDeviceToHost, stream), "attention keyless row");
  check_cuda(cudaStreamSynchronize(stream), "attention_forward");
  if (row != kNoKeylessRow) throw Error(keyless_row_error(row));
}

template <class T>
void attention_backward(const T* q, const T* k, const T* v, const T* out, const float* lse, const T* dout, T* dq, T* dk,
                        T* dv, int64_t Tq, int64_t Tk, int H, int hd, const AttnIndex& idx, void* workspace,
                        cudaStream_t stream) {
  if (Tq == 0 || Tk == 0) return;
  const Workspace w = carve(workspace, Tq, Tk);
  const Params p = summarize(idx, Tq, Tk, H, hd, w, stream);
  EMB_LAUNCH(attention_dot_kernel, unsigned((Tq * H * 32 + 255) / 256), 256, 0, stream)(out, dout, w.d, Tq, H, hd);
  check_launch("attention_dot");
  dispatch_head_dim(hd, [&](auto head_dim) {
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
