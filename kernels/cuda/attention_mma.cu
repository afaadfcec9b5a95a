#include "kernels/cuda/attention_mma.hpp"

#include <cmath>

#include "kernels/cuda/async_pipeline.cuh"
#include "kernels/cuda/attention_passes.cuh"
#include "kernels/cuda/attention_rows.cuh"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/mma_tiles.cuh"
#include "kernels/cuda/storage.cuh"

namespace emb::cuda {

namespace {

using bf16 = __nv_bfloat16;

constexpr int kWarps = 4;
constexpr int kThreads = 32 * kWarps;
constexpr int kBlockRows = kWarps * kWarpRows;  // rows a block owns: queries (forward, dq) or keys (dk, dv)
constexpr int kStages = 2;                      // cp.async buffers per streamed array (pipeline depth)
constexpr int kKeyTile = 64;                    // keys per streamed tile (forward, dq)
// Queries per streamed tile of the dk/dv kernel: 32 at hd 128, where the two 16×128 fp32
// gradient accumulators already take 128 registers per thread; 64 otherwise.
template <int HD>
constexpr int kDkdvQueryTile = HD == 128 ? 32 : 64;

// The dynamic shared memory of one kernel, row stride HD + 8 (mma_tiles.cuh): RESIDENT arrays
// of kBlockRows rows loaded once per block, STREAMED arrays of TILE rows per pipeline stage,
// and per stage the token index of the tile's rows and FLOATS arrays of one float per row.
template <int HD, int RESIDENT, int STREAMED, int TILE, int FLOATS>
struct SharedLayout {
  static constexpr int kStride = HD + 8;
  static constexpr int kResidentElems = kBlockRows * kStride, kTileElems = TILE * kStride;
  static constexpr int kRowsBytes = 2 * (RESIDENT * kResidentElems + kStages * STREAMED * kTileElems);
  static constexpr int kIndexBytes = kStages * TILE * int(sizeof(TokenIndex));
  static constexpr int kBytes = kRowsBytes + kIndexBytes + kStages * FLOATS * TILE * int(sizeof(float));
  static __device__ bf16* resident(char* base, int a) { return reinterpret_cast<bf16*>(base) + a * kResidentElems; }
  static __device__ bf16* streamed(char* base, int a, int stage) {
    return reinterpret_cast<bf16*>(base) + RESIDENT * kResidentElems + (a * kStages + stage) * kTileElems;
  }
  static __device__ TokenIndex* index(char* base, int stage) {
    return reinterpret_cast<TokenIndex*>(base + kRowsBytes) + stage * TILE;
  }
  static __device__ float* floats(char* base, int a, int stage) {
    return reinterpret_cast<float*>(base + kRowsBytes + kIndexBytes) + (a * kStages + stage) * TILE;
  }
};

template <int HD>
using ForwardShared = SharedLayout<HD, 1, 2, kKeyTile, 0>;  // Q resident; K, V streamed
template <int HD>
using DqShared = SharedLayout<HD, 2, 2, kKeyTile, 0>;  // Q, dO resident; K, V streamed
template <int HD>
using DkdvShared = SharedLayout<HD, 2, 2, kDkdvQueryTile<HD>, 2>;  // K, V resident; Q, dO, lse, D streamed

// Starts the loads of key tile kt (K and V rows, key indices) into `stage` of a kernel whose
// streamed arrays 0 and 1 are K and V.
template <class Layout, int HD>
__device__ __forceinline__ void issue_key_tile(char* base, int stage, int64_t kt, const bf16* k, const bf16* v,
                                               const Params& p, int64_t ld, int64_t col0) {
  constexpr int S = Layout::kStride;
  load_rows_async<kKeyTile, HD, S, kThreads>(Layout::streamed(base, 0, stage), k, kt * kKeyTile, p.Tk, ld, col0);
  load_rows_async<kKeyTile, HD, S, kThreads>(Layout::streamed(base, 1, stage), v, kt * kKeyTile, p.Tk, ld, col0);
  if (threadIdx.x < kKeyTile) Layout::index(base, stage)[threadIdx.x] = p.k_side.at(kt * kKeyTile + threadIdx.x);
}

// Grid (query blocks of 64, heads); warp w owns queries 16w..16w+15 of the block.
template <int HD>
__global__ void __launch_bounds__(kThreads)
    attention_mma_forward_kernel(const bf16* q, const bf16* k, const bf16* v, bf16* out, float* lse, Params p) {
  using L = ForwardShared<HD>;
  constexpr int S = L::kStride;
  EMB_DYNAMIC_SHARED(uint4, shared);
  char* base = reinterpret_cast<char*>(shared);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, h = blockIdx.y;
  const int64_t ld = int64_t(p.H) * HD, col0 = int64_t(h) * HD, i0 = int64_t(blockIdx.x) * kBlockRows;
  const WarpRows rows(i0);
  const TokenIndex qi[2] = {p.q_side.at(rows.row[0]), p.q_side.at(rows.row[1])};
  const TileSummary q_span = span_summary(p.q_tiles, i0, kBlockRows, p.Tq);
  const float scale_log2 = p.scale * kLog2e;
  const bf16* q_warp = L::resident(base, 0) + warp * kWarpRows * S;
  float o[HD / 8][4] = {};
  OnlineSoftmax<HD> softmax;
  load_rows_async<kBlockRows, HD, S, kThreads>(L::resident(base, 0), q, i0, p.Tq, ld, col0);
  pipeline_allowed_tiles<kStages>(
      (p.Tk + kKeyTile - 1) / kKeyTile,
      [&](int64_t kt) { return key_tile_allowed<kKeyTile>(p, q_span, kt); },
      [&](int stage, int64_t kt) { issue_key_tile<L, HD>(base, stage, kt, k, v, p, ld, col0); },
      [&](int stage, int64_t) {
        float s[kKeyTile / 8][4] = {};
        warp_mma_abt<kKeyTile, HD, S>(s, q_warp, L::streamed(base, 0, stage), lane);
        const TokenIndex* kj = L::index(base, stage);
        softmax.template step<kKeyTile>(s, o, scale_log2, lane,
                                        [&](int e, int col) { return tokens_attend(p.mask, qi[e / 2], kj[col]); });
        warp_mma_pb<kKeyTile, HD, S>(o, s, L::streamed(base, 1, stage), lane);
      });
  softmax.store(o, rows, p, h, lane, out, lse);
}

// Query-major dq: grid (query blocks of 64, heads). With P = exp(s − lse) and
// dS = P∘(dP − D), dP = dO·Vᵀ: dq += scale·dS·K.
template <int HD>
__global__ void __launch_bounds__(kThreads)
    attention_mma_dq_kernel(const bf16* q, const bf16* k, const bf16* v, const float* lse, const bf16* dout,
                            const float* D, bf16* dq, Params p) {
  using L = DqShared<HD>;
  constexpr int S = L::kStride;
  EMB_DYNAMIC_SHARED(uint4, shared);
  char* base = reinterpret_cast<char*>(shared);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, h = blockIdx.y;
  const int64_t ld = int64_t(p.H) * HD, col0 = int64_t(h) * HD, i0 = int64_t(blockIdx.x) * kBlockRows;
  const WarpRows rows(i0);
  const DqRows q_rows(rows, p, lse, D, h);
  const TileSummary q_span = span_summary(p.q_tiles, i0, kBlockRows, p.Tq);
  const float scale_log2 = p.scale * kLog2e;
  const bf16* q_warp = L::resident(base, 0) + warp * kWarpRows * S;
  const bf16* do_warp = L::resident(base, 1) + warp * kWarpRows * S;
  float acc[HD / 8][4] = {};
  load_rows_async<kBlockRows, HD, S, kThreads>(L::resident(base, 0), q, i0, p.Tq, ld, col0);
  load_rows_async<kBlockRows, HD, S, kThreads>(L::resident(base, 1), dout, i0, p.Tq, ld, col0);
  pipeline_allowed_tiles<kStages>(
      (p.Tk + kKeyTile - 1) / kKeyTile,
      [&](int64_t kt) { return key_tile_allowed<kKeyTile>(p, q_span, kt); },
      [&](int stage, int64_t kt) { issue_key_tile<L, HD>(base, stage, kt, k, v, p, ld, col0); },
      [&](int stage, int64_t) {
        const bf16 *k_s = L::streamed(base, 0, stage), *v_s = L::streamed(base, 1, stage);
        float s[kKeyTile / 8][4] = {}, dp[kKeyTile / 8][4] = {};
        warp_mma_abt<kKeyTile, HD, S>(s, q_warp, k_s, lane);
        warp_mma_abt<kKeyTile, HD, S>(dp, do_warp, v_s, lane);
        const TokenIndex* kj = L::index(base, stage);
        for_each_element<kKeyTile>(
            lane, [&](int n, int e, int col) { s[n][e] = q_rows.ds(p, scale_log2, s[n][e], dp[n][e], e, kj[col]); });
        warp_mma_pb<kKeyTile, HD, S>(acc, s, k_s, lane);
      });
  for_each_gradient_element<HD>(rows, p.Tq, ld, col0, lane,
                                [&](int64_t e, int d, int k) { add_to(dq + e, p.scale * acc[d][k]); });
}

// Key-major dk, dv: grid (key blocks of 64, heads); warp w owns keys 16w..16w+15 and works on
// the transposed tiles Sᵀ = K·Qᵀ, Pᵀ, dPᵀ = V·dOᵀ: dv += Pᵀ·dO, dk += scale·dSᵀ·Q.
template <int HD>
__global__ void __launch_bounds__(kThreads)
    attention_mma_dkdv_kernel(const bf16* q, const bf16* k, const bf16* v, const float* lse, const bf16* dout,
                              const float* D, bf16* dk, bf16* dv, Params p) {
  using L = DkdvShared<HD>;
  constexpr int S = L::kStride, QT = kDkdvQueryTile<HD>;
  EMB_DYNAMIC_SHARED(uint4, shared);
  char* base = reinterpret_cast<char*>(shared);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, h = blockIdx.y;
  const int64_t ld = int64_t(p.H) * HD, col0 = int64_t(h) * HD, j0 = int64_t(blockIdx.x) * kBlockRows;
  const WarpRows rows(j0);
  const TokenIndex kj[2] = {p.k_side.at(rows.row[0]), p.k_side.at(rows.row[1])};
  const TileSummary k_span = span_summary(p.k_tiles, j0, kBlockRows, p.Tk);
  const float scale_log2 = p.scale * kLog2e;
  const bf16* k_warp = L::resident(base, 0) + warp * kWarpRows * S;
  const bf16* v_warp = L::resident(base, 1) + warp * kWarpRows * S;
  float dk_acc[HD / 8][4] = {}, dv_acc[HD / 8][4] = {};
  load_rows_async<kBlockRows, HD, S, kThreads>(L::resident(base, 0), k, j0, p.Tk, ld, col0);
  load_rows_async<kBlockRows, HD, S, kThreads>(L::resident(base, 1), v, j0, p.Tk, ld, col0);
  pipeline_allowed_tiles<kStages>(
      (p.Tq + QT - 1) / QT,
      [&](int64_t qt) { return tiles_may_attend(p.mask, span_summary(p.q_tiles, qt * QT, QT, p.Tq), k_span); },
      [&](int stage, int64_t qt) {
        load_rows_async<QT, HD, S, kThreads>(L::streamed(base, 0, stage), q, qt * QT, p.Tq, ld, col0);
        load_rows_async<QT, HD, S, kThreads>(L::streamed(base, 1, stage), dout, qt * QT, p.Tq, ld, col0);
        if (threadIdx.x < QT) {
          const int64_t i = qt * QT + threadIdx.x;
          L::index(base, stage)[threadIdx.x] = p.q_side.at(i);
          L::floats(base, 0, stage)[threadIdx.x] = query_lse2(p, lse, i, h);
          L::floats(base, 1, stage)[threadIdx.x] = query_D(p, D, i, h);
        }
      },
      [&](int stage, int64_t) {
        const bf16 *q_s = L::streamed(base, 0, stage), *do_s = L::streamed(base, 1, stage);
        const TokenIndex* qi = L::index(base, stage);
        const float *lse2 = L::floats(base, 0, stage), *D_col = L::floats(base, 1, stage);
        float st[QT / 8][4] = {}, dpt[QT / 8][4] = {};
        warp_mma_abt<QT, HD, S>(st, k_warp, q_s, lane);
        for_each_element<QT>(lane, [&](int n, int e, int col) {
          st[n][e] = tokens_attend(p.mask, qi[col], kj[e / 2]) ? exp2f(st[n][e] * scale_log2 - lse2[col]) : 0.0f;
        });
        warp_mma_pb<QT, HD, S>(dv_acc, st, do_s, lane);
        warp_mma_abt<QT, HD, S>(dpt, v_warp, do_s, lane);
        for_each_element<QT>(lane,
                             [&](int n, int e, int col) { dpt[n][e] = st[n][e] * (dpt[n][e] - D_col[col]); });
        warp_mma_pb<QT, HD, S>(dk_acc, dpt, q_s, lane);
      });
  for_each_gradient_element<HD>(rows, p.Tk, ld, col0, lane, [&](int64_t e, int d, int k) {
    add_to(dk + e, p.scale * dk_acc[d][k]);
    add_to(dv + e, dv_acc[d][k]);
  });
}

template <class Body>
void dispatch_mma_head_dim(int hd, Body body) {
  dispatch_head_dim<48, 64, 128>("attention_mma", hd, body);
}

dim3 block_grid(int64_t T, int H) { return dim3(unsigned((T + kBlockRows - 1) / kBlockRows), unsigned(H)); }

}  // namespace

void attention_mma_forward(const bf16* q, const bf16* k, const bf16* v, bf16* out, float* lse, int64_t Tq, int64_t Tk,
                           int H, int hd, const AttnIndex& idx, void* workspace, cudaStream_t stream,
                           unsigned long long* keyless) {
  if (Tq == 0) return;
  const Workspace w = carve_workspace(workspace, Tq, Tk);
  const Params p = summarize(idx, Tq, Tk, H, hd, w, stream);
  dispatch_mma_head_dim(hd, [&](auto head_dim) {
    constexpr int HD = decltype(head_dim)::value, bytes = ForwardShared<HD>::kBytes;
    allow_shared_bytes(attention_mma_forward_kernel<HD>, bytes, "attention_mma");
    EMB_LAUNCH(attention_mma_forward_kernel<HD>, block_grid(Tq, H), kThreads, bytes, stream)(q, k, v, out, lse, p);
  });
  check_launch("attention_mma_forward");
  check_keyless_rows(lse, p, w, stream, keyless);
}

void attention_mma_backward(const bf16* q, const bf16* k, const bf16* v, const bf16* out, const float* lse,
                            const bf16* dout, bf16* dq, bf16* dk, bf16* dv, int64_t Tq, int64_t Tk, int H, int hd,
                            const AttnIndex& idx, void* workspace, cudaStream_t stream) {
  if (Tq == 0 || Tk == 0) return;
  const Workspace w = carve_workspace(workspace, Tq, Tk);
  const Params p = summarize(idx, Tq, Tk, H, hd, w, stream);
  launch_attention_dot(out, dout, w.d, Tq, H, hd, stream);
  dispatch_mma_head_dim(hd, [&](auto head_dim) {
    constexpr int HD = decltype(head_dim)::value, dq_bytes = DqShared<HD>::kBytes, dkdv_bytes = DkdvShared<HD>::kBytes;
    allow_shared_bytes(attention_mma_dq_kernel<HD>, dq_bytes, "attention_mma");
    allow_shared_bytes(attention_mma_dkdv_kernel<HD>, dkdv_bytes, "attention_mma");
    EMB_LAUNCH(attention_mma_dq_kernel<HD>, block_grid(Tq, H), kThreads, dq_bytes, stream)(q, k, v, lse, dout, w.d,
                                                                                            dq, p);
    EMB_LAUNCH(attention_mma_dkdv_kernel<HD>, block_grid(Tk, H), kThreads, dkdv_bytes, stream)(q, k, v, lse, dout,
                                                                                               w.d, dk, dv, p);
  });
  check_launch("attention_mma_backward");
}

}  // namespace emb::cuda
