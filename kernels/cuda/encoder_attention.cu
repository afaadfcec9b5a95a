#include <cmath>
#include <vector>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/encoder_attention.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/op_entry.hpp"
#include "kernels/cuda/storage.cuh"

namespace emb::cuda {

namespace {

constexpr int kThreads = 128;

// One block's query rows: [row_begin, row_begin + rows) of a segment whose queries are
// [q_begin, q_end) and keys [k_begin, k_end).
struct QueryTile {
  int64_t row_begin, q_begin, q_end, k_begin, k_end;
};

// Threads per query row, rows per block, keys per shared-memory tile, dims per thread.
template <int HD>
struct Shape {
  static constexpr int kLanes = HD > 128 ? 16 : 4;
  static constexpr int kRows = kThreads / kLanes;
  static constexpr int kKeys = HD > 128 ? 8 : 32;
  static constexpr int kDims = (HD + kLanes - 1) / kLanes;
};

// Sum over the LANES threads of one row (consecutive lanes of a warp).
template <int LANES>
__device__ __forceinline__ float row_sum(float v) {
#pragma unroll
  for (int offset = 1; offset < LANES; offset *= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

struct Params {
  int64_t ld_q, ld_k, ld_v;
  int q_heads, group;  // group = q_heads / kv_heads
  float scale;
  bool causal;
  AttnBiasKind bias_kind;
  const int32_t* buckets;
  int n_rel, rel_zero;
  int64_t n_buckets;
};

// Grid (query tiles, q heads). Thread (row, lane) owns query row i and dims lane + LANES·t.
template <class T, int HD>
__global__ void __launch_bounds__(kThreads)
    encoder_attention_kernel(const T* q, const T* k, const T* v, const T* bias, T* out, float* lse,
                             const QueryTile* tiles, Params p) {
  using S = Shape<HD>;
  __shared__ float ks[S::kKeys][HD], vs[S::kKeys][HD];
  const QueryTile tile = tiles[blockIdx.x];
  const int row = threadIdx.x / S::kLanes, lane = threadIdx.x % S::kLanes, h = blockIdx.y;
  const int kv = h / p.group;
  const int64_t i = tile.row_begin + row;
  const bool real = i < tile.q_end;
  const int64_t lq = tile.q_end - tile.q_begin, lk = tile.k_end - tile.k_begin, i_local = i - tile.q_begin;
  // Keys this row may see (local): [0, visible); the block's widest row bounds the key loop.
  const int64_t last_local = min(tile.row_begin + S::kRows, tile.q_end) - 1 - tile.q_begin;
  const int64_t block_keys = p.causal ? min(lk, last_local + lk - lq + 1) : lk;
  const int64_t visible = !real ? 0 : p.causal ? min(lk, i_local + lk - lq + 1) : lk;
  float qr[S::kDims], acc[S::kDims];
#pragma unroll
  for (int t = 0; t < S::kDims; ++t) {
    const int d = lane + S::kLanes * t;
    qr[t] = real && d < HD ? to_f32(q[i * p.ld_q + int64_t(h) * HD + d]) * p.scale : 0.0f;
    acc[t] = 0.0f;
  }
  float m = -INFINITY, l = 0.0f;
  for (int64_t j0 = 0; j0 < block_keys; j0 += S::kKeys) {
    __syncthreads();  // the previous tile is no longer read
    for (int e = threadIdx.x; e < S::kKeys * HD; e += kThreads) {
      const int r = e / HD, d = e % HD;
      const int64_t j = tile.k_begin + j0 + r;
      const bool in = j0 + r < block_keys;
      ks[r][d] = in ? to_f32(k[j * p.ld_k + int64_t(kv) * HD + d]) : 0.0f;
      vs[r][d] = in ? to_f32(v[j * p.ld_v + int64_t(kv) * HD + d]) : 0.0f;
    }
    __syncthreads();
    float s[S::kKeys];
    float tile_max = -INFINITY;
#pragma unroll
    for (int r = 0; r < S::kKeys; ++r) {
      float dot = 0.0f;
#pragma unroll
      for (int t = 0; t < S::kDims; ++t) {
        const int d = lane + S::kLanes * t;
        if (d < HD) dot += qr[t] * ks[r][d];
      }
      dot = row_sum<S::kLanes>(dot);
      const int64_t j = j0 + r;
      if (j < visible) {
        if (p.bias_kind == AttnBiasKind::dense) {
          dot += to_f32(bias[(int64_t(h) * lq + i_local) * lk + j]);
        } else if (p.bias_kind == AttnBiasKind::relative_buckets) {
          const int64_t rel = min(max(j - i_local + p.rel_zero, int64_t(0)), int64_t(p.n_rel - 1));
          dot += to_f32(bias[int64_t(h) * p.n_buckets + p.buckets[rel]]);
        }
        s[r] = dot;
      } else {
        s[r] = -INFINITY;
      }
      tile_max = fmaxf(tile_max, s[r]);
    }
    if (tile_max == -INFINITY) continue;
    const float m_new = fmaxf(m, tile_max);
    const float correction = expf(m - m_new);
    l *= correction;
#pragma unroll
    for (int t = 0; t < S::kDims; ++t) acc[t] *= correction;
#pragma unroll
    for (int r = 0; r < S::kKeys; ++r) {
      const float pr = expf(s[r] - m_new);
      l += pr;
#pragma unroll
      for (int t = 0; t < S::kDims; ++t) {
        const int d = lane + S::kLanes * t;
        if (d < HD) acc[t] += pr * vs[r][d];
      }
    }
    m = m_new;
  }
  if (!real) return;
  const int64_t ld_out = int64_t(p.q_heads) * HD;
  const float inv_l = 1.0f / l;
#pragma unroll
  for (int t = 0; t < S::kDims; ++t) {
    const int d = lane + S::kLanes * t;
    if (d < HD) out[i * ld_out + int64_t(h) * HD + d] = from_f32<T>(acc[t] * inv_l);
  }
  if (lse && lane == 0) lse[i * p.q_heads + h] = m + logf(l);
}

// The query tiles of every segment, rows_per_tile rows each (the last of a segment shorter).
std::vector<QueryTile> query_tiles(const AttnSegments& seg, int rows_per_tile) {
  std::vector<QueryTile> tiles;
  const int64_t* qo = seg.q_offsets;
  const int64_t* ko = seg.k_offsets ? seg.k_offsets : seg.q_offsets;
  for (int s = 0; s < seg.n; ++s)
    for (int64_t r = qo[s]; r < qo[s + 1]; r += rows_per_tile) tiles.push_back({r, qo[s], qo[s + 1], ko[s], ko[s + 1]});
  return tiles;
}

int rows_per_tile(int hd) { return hd > 128 ? Shape<384>::kRows : Shape<128>::kRows; }

template <class T, int HD>
void launch(const T* q, const T* k, const T* v, const T* bias, T* out, float* lse, const QueryTile* tiles,
            int64_t n_tiles, int q_heads, const Params& p, cudaStream_t stream) {
  EMB_LAUNCH((encoder_attention_kernel<T, HD>), dim3(unsigned(n_tiles), unsigned(q_heads)), kThreads, 0, stream)(
      q, k, v, bias, out, lse, tiles, p);
}

}  // namespace

const char* encoder_attention_head_dims_text() { return "8, 16, 32, 64, 72, 80, 128, 384, 640"; }

size_t encoder_attention_workspace_bytes(const AttnSegments& segments, int head_dim) {
  return query_tiles(segments, rows_per_tile(head_dim)).size() * sizeof(QueryTile);
}

template <class T>
void encoder_attention_forward(const T* q, int64_t ld_q, const T* k, int64_t ld_k, const T* v, int64_t ld_v,
                               const T* bias, int64_t n_buckets, const AttnBias& bias_kind, T* out, float* lse,
                               const EncoderAttnConfig& cfg, const AttnSegments& segments, void* workspace,
                               cudaStream_t stream) {
  const std::vector<QueryTile> tiles = query_tiles(segments, rows_per_tile(cfg.head_dim));
  if (tiles.empty()) return;
  auto* device_tiles = static_cast<QueryTile*>(workspace);
  // From pageable memory: staged before the call returns, so `tiles` may go.
  check_cuda(cudaMemcpyAsync(device_tiles, tiles.data(), tiles.size() * sizeof(QueryTile), cudaMemcpyHostToDevice,
                             stream),
             "encoder_attention: query tiles");
  const Params p{ld_q,           ld_k,           ld_v,           cfg.q_heads,        cfg.q_heads / cfg.kv_heads,
                 cfg.scale,      cfg.causal,     bias_kind.kind, bias_kind.buckets,  bias_kind.n_rel,
                 bias_kind.rel_zero, n_buckets};
  const int64_t n = int64_t(tiles.size());
  switch (cfg.head_dim) {
#define EMB_HEAD_DIM(HD) \
  case HD: return launch<T, HD>(q, k, v, bias, out, lse, device_tiles, n, cfg.q_heads, p, stream);
    EMB_HEAD_DIM(8)
    EMB_HEAD_DIM(16)
    EMB_HEAD_DIM(32)
    EMB_HEAD_DIM(64)
    EMB_HEAD_DIM(72)
    EMB_HEAD_DIM(80)
    EMB_HEAD_DIM(128)
    EMB_HEAD_DIM(384)
    EMB_HEAD_DIM(640)
#undef EMB_HEAD_DIM
  }
  EMB_CHECK(false, "encoder_attention: head_dim ", cfg.head_dim, " is not built");
}

#define EMB_INSTANTIATE(T)                                                                                         \
  template void encoder_attention_forward<T>(const T*, int64_t, const T*, int64_t, const T*, int64_t, const T*,     \
                                             int64_t, const AttnBias&, T*, float*, const EncoderAttnConfig&,      \
                                             const AttnSegments&, void*, cudaStream_t);
EMB_CUDA_FOR_STORAGE(EMB_INSTANTIATE)
#undef EMB_INSTANTIATE

}  // namespace emb::cuda

// ---- CudaOps entry (kernels/ops.hpp) ----

namespace emb {

void CudaOps::encoder_attention_forward(const View& q, const View& k, const View& v, const View& bias,
                                        const AttnBias& bias_kind, const View& out, const View& lse,
                                        const EncoderAttnConfig& cfg, const AttnSegments& segments) {
  const OpCheck c = check_encoder_attention(q, k, v, bias, bias_kind, out, lse, cfg, segments);
  c.expect(cuda::encoder_attention_head_dim_built(cfg.head_dim),
           "head_dim ", cfg.head_dim, " is not built on CUDA (", cuda::encoder_attention_head_dims_text(), ")");
  fp32_views(c, {{"lse", &lse}});
  dispatch(storage(c, {&q, &k, &v, &bias, &out}), [&](auto t) {
    using T = decltype(t);
    void* ws = workspace_.get(std::max<size_t>(1, cuda::encoder_attention_workspace_bytes(segments, cfg.head_dim)),
                              stream_);
    cuda::encoder_attention_forward(ptr<const T>(q), q.ld, ptr<const T>(k), k.ld, ptr<const T>(v), v.ld,
                                    ptr<const T>(bias), bias.cols, bias_kind, ptr<T>(out), f(lse), cfg, segments, ws,
                                    stream_);
  });
}

}  // namespace emb
