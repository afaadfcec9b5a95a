// The varlen attention backward on Hopper (attention_wgmma.hpp), the design of
// attention_mma_backward (D pre-pass, key-major dK/dV kernel, P recomputed from lse) on wgmma with
// TMA-fed rings (attention_wgmma_ring.cuh). dQ two ways (DqAccumulation): a query-major dQ kernel
// (deterministic, no atomics; it forms S and dP again), or in the dK/dV kernel itself, from its
// dS in shared memory, summed over key blocks by fp32 atomics (FA2's and FA3's way: 5 products
// per tile pair instead of 7).
#include <cuda.h>

#include <cstdint>

#include "kernels/cuda/attention_passes.cuh"
#include "kernels/cuda/attention_rows.cuh"
#include "kernels/cuda/attention_wgmma.hpp"
#include "kernels/cuda/attention_wgmma_ring.cuh"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/storage.cuh"
#include "kernels/cuda/tma.cuh"
#include "kernels/cuda/vector_access.cuh"
#include "kernels/cuda/wgmma.cuh"

namespace emb::cuda {

namespace {

using namespace wgmma_attention;
using bf16 = __nv_bfloat16;

// The register splits (run_roles) gave ptxas (nvcc 13.0) the fewest spills at hd 128 of those
// tried: at the launch's 168 per thread ptxas spilled dK, dV at hd 128 (1.4 kB per thread: two
// [64][128] fp32 accumulators are 128 registers and Sᵀ, dPᵀ 64 more); 24 / 240 spilled both
// kernels, less as the producer got more (its tile scan and 2 · 16 unrolled TMA issues per tile),
// 56 / 224 spilled dK/dV more.
using DqRegisters = RegisterSplit<56, 224>;    // no spills
using DkdvRegisters = RegisterSplit<40, 232>;  // spills at hd 128 only (README)

// Both kernels' rings have 3 stages: each body waits for its wgmma before it returns, so that
// with 2 the producer fills the next stage while the consumers read the current one, one tile's
// compute ahead; with 3 it is two tiles ahead, to cover TMA's latency from L2. One block per SM
// (by registers) leaves the shared memory to spare: dQ 64 / 84 / 166 kB, dK/dV 65 / 86 / 168 kB,
// with the atomic dQ's dS buffers 98 / 119 / 201 kB (of 227 KiB).
constexpr int kBackwardStages = 3;
// dQ: Q and dO resident; K and V streamed with their key tokens.
template <int HD>
using DqShared = RingLayout<HD, kBackwardStages, 2, 2, 0, 0, 0>;
// dS of a query tile against the block's keys, [64 query rows][128 keys] bf16 in the tiles'
// chunk layout (a K-major A operand of dQ = dS·K), each warpgroup writing its 64 keys' half.
constexpr int kDsBytes = kTileRows * kBlockRows * 2;
// dK, dV: K and V resident; Q and dO streamed with their query tokens, lse (log2 units) and D.
// ATOMIC_DQ: also two dS buffers (alternate tiles, so that one is written while the other
// warpgroup may still read the last) and an mbarrier each (both halves written).
template <int HD, bool ATOMIC_DQ>
using DkdvShared = RingLayout<HD, kBackwardStages, 2, 2, 2, ATOMIC_DQ ? 2 * kDsBytes : 0, ATOMIC_DQ ? 2 : 0>;

#ifdef EMB_HOPPER_DEVICE_CODE
using BackwardRing = Ring<kBackwardStages>;

// The dQ of a consumer warpgroup's 64 query rows (g = threadIdx.x / 128): per key tile its rows
// may attend, S = Q·Kᵀ and dP = dO·Vᵀ (wgmma, one group), P = exp2(S·scale·log2 e − lse) where
// allowed, dS = P∘(dP − D) in registers, dQ += dS·K (wgmma, dS as bf16 A fragments, K N-major);
// then dq += scale·dQ for the rows below Tq.
template <int HD>
__device__ void consume_dq(char* base, const BackwardRing& ring, const AllowedTiles<true>& tiles, int h, int64_t i0,
                           const float* lse, const float* D, bf16* dq) {
  using L = DqShared<HD>;
  const Params& p = tiles.p;
  const int lane = threadIdx.x % 32, g = int(threadIdx.x / 128);
  const WarpRows rows(i0);
  const DqRows q_rows(rows, p, lse, D, h);
  const float scale_log2 = p.scale * kLog2e;
  const char *q_g = L::resident(base, 0, g), *do_g = L::resident(base, 1, g);
  const TileSummary own_span = span_summary(p.q_tiles, i0 + g * kGroupRows, kGroupRows, p.Tq);
  float acc[HD / 8][4] = {};
  consume(ring, tiles, [&](int64_t kt, int s, int64_t) {
    if (!tiles.allowed(own_span, kt)) return;  // uniform per warpgroup
    const char *k_s = L::streamed(base, 0, s), *v_s = L::streamed(base, 1, s);
    float sc[kTileRows / 8][4] = {}, dp[kTileRows / 8][4] = {};
    wgmma_fence();
    issue_abt<kTileRows, HD>(sc, q_g, k_s);
    issue_abt<kTileRows, HD>(dp, do_g, v_s);
    wgmma_commit();
    wgmma_wait<0>();
    wgmma_fence_operand(sc);
    wgmma_fence_operand(dp);
    const TokenIndex* kj = L::index(base, s);
    for_each_element<kTileRows>(
        lane, [&](int n, int e, int col) { sc[n][e] = q_rows.ds(p, scale_log2, sc[n][e], dp[n][e], e, kj[col]); });
    const PFragments ds(sc);
    wgmma_fence();
    wgmma_fence_operand(acc);
    issue_pb<HD>(acc, ds, k_s);
    wgmma_commit();
    wgmma_wait<0>();
    wgmma_fence_operand(acc);
  });
  for_each_gradient_element<HD>(rows, p.Tq, int64_t(p.H) * HD, int64_t(h) * HD, lane,
                                [&](int64_t e, int d, int k) { add_to(dq + e, p.scale * acc[d][k]); });
}

// ATOMIC_DQ: the dS buffer of the dq_use-th tile whose dQ the block forms (two, in turn).
template <int HD>
__device__ __forceinline__ char* ds_buffer(char* base, int64_t dq_use) {
  using L = DkdvShared<HD, true>;
  return L::scratch(base) + int(dq_use & 1) * kDsBytes;
}

// ATOMIC_DQ: once both warpgroups wrote their dS halves of tile qt (the dq_use-th whose dQ the
// block forms), this warpgroup's half of the columns of its dQ = dS·K over the keys of the
// warpgroups that attend the tile, added to dq_accum; its wait retires all this warpgroup has in
// flight.
template <int HD>
__device__ __forceinline__ void add_dq_half(char* base, const Params& p, int h, const bool (&attends)[kGroups],
                                            int64_t qt, int64_t dq_use, float* dq_accum) {
  using L = DkdvShared<HD, true>;
  const int lane = threadIdx.x % 32, g = int(threadIdx.x / 128);
  uint64_t* written = L::extra_barriers(base) + (dq_use & 1);
  mbarrier_arrive(written);
  mbarrier_wait(written, unsigned(dq_use >> 1 & 1));
  const char* ds = ds_buffer<HD>(base, dq_use);
  const int first = attends[0] ? 0 : kGroupRows / 16, last = attends[1] ? kBlockRows / 16 : kGroupRows / 16;
  float dq[HD / 16][4] = {};  // zeros: with undefined registers as its input ptxas spilled 700 B at hd 128
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < kBlockRows / 16; ++kk) {  // 16 keys each: of warpgroup kk / 4's K tile
    const char* k_half = L::resident(base, 0, kk / 4) + g * (HD / 16) * kChunkBytes;
    if (kk >= first && kk < last)
      wgmma_ss<HD / 2, 1>(dq, k_major_descriptor(ds, kk), n_major_descriptor(k_half, kk % 4), kk > first);
  }
  wgmma_commit();
  wgmma_wait<0>();
  wgmma_fence_operand(dq);
  // Warp w of the block holds rows 16w .. of its warpgroup's 64: 16(w − 4g) of the tile.
  const WarpRows q_rows(qt * kTileRows - g * kGroupRows);
  for_each_gradient_element<HD / 2>(q_rows, p.Tq, int64_t(p.H) * HD, int64_t(h) * HD + g * (HD / 2), lane,
                                    [&](int64_t e, int d, int k) {
                                      if (k % 2 == 0)  // columns 2t, 2t + 1 in one 8-byte atomic
                                        atomicAdd(reinterpret_cast<float2*>(dq_accum + e),
                                                  make_float2(dq[d][k], dq[d][k + 1]));
                                    });
}

// The dK, dV of a consumer warpgroup's 64 key rows, on the transposed tiles (FA3's layout): per
// query tile its keys may attend, Sᵀ = K·Qᵀ and dPᵀ = V·dOᵀ (wgmma, one group), Pᵀ and
// dSᵀ = Pᵀ∘(dPᵀ − D) in registers, already in the accumulator layout that is the A fragment
// layout, then dV += Pᵀ·dO and dK += dSᵀ·Q (wgmma, A from registers, dO and Q N-major: their tile
// rows are the product's K); then dk += scale·dK, dv += dV for the rows below Tk.
// ATOMIC_DQ: each warpgroup also writes its dSᵀ into the tile's dS buffer, and once both halves
// are in (an mbarrier of the 256 consumer threads), while its dK, dV products run, forms its half
// of the columns of dQ = dS·K over the keys of the warpgroups that attend the tile and adds it to
// dq_accum [Tq, H·HD] (fp32, atomics). A warpgroup that skips the tile still forms its half; the
// keys of one that skips it are left out of the product (their dS is not written, and their K
// rows may be another sample's NaN).
template <int HD, bool ATOMIC_DQ>
__device__ void consume_dkdv(char* base, const BackwardRing& ring, const AllowedTiles<false>& tiles, int h, int64_t j0,
                             bf16* dk, bf16* dv, float* dq_accum) {
  using L = DkdvShared<HD, ATOMIC_DQ>;
  const Params& p = tiles.p;
  const int lane = threadIdx.x % 32, g = int(threadIdx.x / 128);
  const WarpRows rows(j0);
  const TokenIndex kj[2] = {p.k_side.at(rows.row[0]), p.k_side.at(rows.row[1])};
  const float scale_log2 = p.scale * kLog2e;
  const char *k_g = L::resident(base, 0, g), *v_g = L::resident(base, 1, g);
  const TileSummary spans[kGroups] = {span_summary(p.k_tiles, j0, kGroupRows, p.Tk),
                                      span_summary(p.k_tiles, j0 + kGroupRows, kGroupRows, p.Tk)};
  float dk_acc[HD / 8][4] = {}, dv_acc[HD / 8][4] = {};
  int64_t dq_use = 0;  // ATOMIC_DQ: the tiles whose dQ the block formed so far
  const auto add_dq = [&](const bool (&attends)[kGroups], int64_t qt) {
    add_dq_half<HD>(base, p, h, attends, qt, dq_use++, dq_accum);
  };
  consume(ring, tiles, [&](int64_t qt, int s, int64_t) {
    const bool attends[kGroups] = {tiles.allowed(spans[0], qt), tiles.allowed(spans[1], qt)};  // uniform per block
    if (!attends[g]) {
      if constexpr (ATOMIC_DQ)
        if (attends[1 - g]) add_dq(attends, qt);
      return;
    }
    const char *q_s = L::streamed(base, 0, s), *do_s = L::streamed(base, 1, s);
    float st[kTileRows / 8][4] = {}, dpt[kTileRows / 8][4] = {};
    wgmma_fence();
    issue_abt<kTileRows, HD>(st, k_g, q_s);
    issue_abt<kTileRows, HD>(dpt, v_g, do_s);
    wgmma_commit();
    wgmma_wait<0>();
    wgmma_fence_operand(st);
    wgmma_fence_operand(dpt);
    const TokenIndex* qi = L::index(base, s);
    const float *lse2 = L::floats(base, 0, s), *D_col = L::floats(base, 1, s);
    for_each_element<kTileRows>(lane, [&](int n, int e, int col) {
      st[n][e] = tokens_attend(p.mask, qi[col], kj[e / 2]) ? exp2f(st[n][e] * scale_log2 - lse2[col]) : 0.0f;
      dpt[n][e] = st[n][e] * (dpt[n][e] - D_col[col]);
    });
    if constexpr (ATOMIC_DQ) {
      // dSᵀ [key][query] of this lane (keys 16w' + lane / 4 + 8·(e / 2) of the warpgroup's, w' its
      // warp in it) as dS [query][key]: 8-key chunk 8g + 2w' + e / 2, row = query, lane / 4 in it.
      char* ds = ds_buffer<HD>(base, dq_use) + (8 * g + 2 * (threadIdx.x / 32 % 4)) * kChunkBytes;
      for_each_element<kTileRows>(lane, [&](int n, int e, int col) {
        *reinterpret_cast<bf16*>(ds + (e / 2) * kChunkBytes + col * 16 + lane / 4 * 2) = from_f32<bf16>(dpt[n][e]);
      });
      wgmma_fence_shared_writes();
    }
    const PFragments pt(st), dst(dpt);
    wgmma_fence();
    wgmma_fence_operand(dv_acc);
    wgmma_fence_operand(dk_acc);
    issue_pb<HD>(dv_acc, pt, do_s);
    issue_pb<HD>(dk_acc, dst, q_s);
    wgmma_commit();
    if constexpr (ATOMIC_DQ)
      add_dq(attends, qt);  // while dV, dK run; its wait retires them too
    else
      wgmma_wait<0>();
    wgmma_fence_operand(dv_acc);
    wgmma_fence_operand(dk_acc);
  });
  for_each_gradient_element<HD>(rows, p.Tk, int64_t(p.H) * HD, int64_t(h) * HD, lane, [&](int64_t e, int d, int k) {
    add_to(dk + e, p.scale * dk_acc[d][k]);
    add_to(dv + e, dv_acc[d][k]);
  });
}
#endif

// Query-major dQ: grid (query blocks of 128, heads); threads 0..255 consume, 256..287 produce (Q
// and dO once, then the allowed 64-key tiles of K and V), 288..383 give their registers away.
template <int HD>
__global__ void __launch_bounds__(kThreads, 1)
    attention_wgmma_dq_kernel(const __grid_constant__ CUtensorMap q_map, const __grid_constant__ CUtensorMap do_map,
                              const __grid_constant__ CUtensorMap k_map, const __grid_constant__ CUtensorMap v_map,
                              const float* lse, const float* D, bf16* dq, Params p) {
#ifdef EMB_HOPPER_DEVICE_CODE
  using L = DqShared<HD>;
  EMB_DYNAMIC_SHARED(Aligned128, shared);
  char* base = reinterpret_cast<char*>(shared);
  const BackwardRing ring(L::barriers(base));
  const int h = int(blockIdx.y);
  const int64_t i0 = int64_t(blockIdx.x) * kBlockRows;
  const AllowedTiles<true> tiles{p, span_summary(p.q_tiles, i0, kBlockRows, p.Tq), (p.Tk + kTileRows - 1) / kTileRows};
  const CUtensorMap* const resident[2] = {&q_map, &do_map};
  const CUtensorMap* const streamed[2] = {&k_map, &v_map};
  run_roles<DqRegisters>(
      ring, [] {},
      [&] {
        produce<L, HD>(base, ring, resident, streamed, tiles, h, i0,
                       [&](int s, int64_t kt, int r) { L::index(base, s)[r] = p.k_side.at(kt * kTileRows + r); });
      },
      [&] { consume_dq<HD>(base, ring, tiles, h, i0, lse, D, dq); });
#endif
}

// Key-major dK, dV (and with ATOMIC_DQ dQ into dq_accum): grid (key blocks of 128, heads);
// threads 0..255 consume, 256..287 produce (K and V once, then the allowed 64-query tiles of Q and
// dO with their rows' tokens, lse and D), 288..383 give their registers away.
template <int HD, bool ATOMIC_DQ>
__global__ void __launch_bounds__(kThreads, 1)
    attention_wgmma_dkdv_kernel(const __grid_constant__ CUtensorMap k_map, const __grid_constant__ CUtensorMap v_map,
                                const __grid_constant__ CUtensorMap q_map, const __grid_constant__ CUtensorMap do_map,
                                const float* lse, const float* D, bf16* dk, bf16* dv, float* dq_accum, Params p) {
#ifdef EMB_HOPPER_DEVICE_CODE
  using L = DkdvShared<HD, ATOMIC_DQ>;
  EMB_DYNAMIC_SHARED(Aligned128, shared);
  char* base = reinterpret_cast<char*>(shared);
  const BackwardRing ring(L::barriers(base));
  const int h = int(blockIdx.y);
  const int64_t j0 = int64_t(blockIdx.x) * kBlockRows;
  const AllowedTiles<false> tiles{p, span_summary(p.k_tiles, j0, kBlockRows, p.Tk), (p.Tq + kTileRows - 1) / kTileRows};
  const CUtensorMap* const resident[2] = {&k_map, &v_map};
  const CUtensorMap* const streamed[2] = {&q_map, &do_map};
  run_roles<DkdvRegisters>(
      ring,
      [&] {
        if constexpr (ATOMIC_DQ)
          for (int b = 0; b < 2; ++b) mbarrier_init(L::extra_barriers(base) + b, kConsumers);  // dS written
      },
      [&] {
        produce<L, HD>(base, ring, resident, streamed, tiles, h, j0, [&](int s, int64_t qt, int r) {
          const int64_t i = qt * kTileRows + r;
          L::index(base, s)[r] = p.q_side.at(i);
          L::floats(base, 0, s)[r] = query_lse2(p, lse, i, h);
          L::floats(base, 1, s)[r] = query_D(p, D, i, h);
        });
      },
      [&] { consume_dkdv<HD, ATOMIC_DQ>(base, ring, tiles, h, j0, dk, dv, dq_accum); });
#endif
}

// dq += scale · dq_accum, 8 elements per thread and step (n, a multiple of hd, is one of 8).
__global__ void add_dq_accumulator_kernel(const float* dq_accum, bf16* dq, int64_t n, float scale) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x * 8;
  for (int64_t i = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) * 8; i < n; i += stride) {
    float sum[8], grad[8];
    load_vector<8>(dq_accum + i, sum);
    load_vector<8>(dq + i, grad);
#pragma unroll
    for (int j = 0; j < 8; ++j) grad[j] += scale * sum[j];
    store_vector<8>(dq + i, grad);
  }
}

template <int HD, bool ATOMIC_DQ>
void launch_dkdv(const CUtensorMap& k_map, const CUtensorMap& v_map, const CUtensorMap& q_map,
                 const CUtensorMap& do_map, const float* lse, const float* D, bf16* dk, bf16* dv, float* dq_accum,
                 const Params& p, cudaStream_t stream) {
  constexpr int bytes = DkdvShared<HD, ATOMIC_DQ>::kBytes;
  prepare_launch<DkdvRegisters>(attention_wgmma_dkdv_kernel<HD, ATOMIC_DQ>, bytes, "attention_wgmma dK/dV");
  EMB_LAUNCH((attention_wgmma_dkdv_kernel<HD, ATOMIC_DQ>), block_grid(p.Tk, p.H), kThreads, bytes, stream)(
      k_map, v_map, q_map, do_map, lse, D, dk, dv, dq_accum, p);
}

}  // namespace

size_t attention_wgmma_workspace_bytes(int64_t Tq, int64_t Tk, int H, int hd, DqAccumulation accumulation) {
  const size_t base = align256(attention_workspace_bytes(Tq, Tk, H));
  return base + (accumulation == DqAccumulation::atomic ? size_t(Tq) * size_t(H) * size_t(hd) * sizeof(float) : 0);
}

void attention_wgmma_backward(const bf16* q, const bf16* k, const bf16* v, const bf16* out, const float* lse,
                              const bf16* dout, bf16* dq, bf16* dk, bf16* dv, int64_t Tq, int64_t Tk, int H, int hd,
                              const AttnIndex& idx, void* workspace, cudaStream_t stream,
                              DqAccumulation accumulation) {
  if (Tq == 0 || Tk == 0) return;
  const Workspace w = carve_workspace(workspace, Tq, Tk);
  const Params p = summarize(idx, Tq, Tk, H, hd, w, stream);
  launch_attention_dot(out, dout, w.d, Tq, H, hd, stream);
  dispatch_head_dim<48, 64, 128>("attention_wgmma", hd, [&](auto head_dim) {
    constexpr int HD = decltype(head_dim)::value;
    const CUtensorMap q_map = tile_map(q, Tq, H, HD), do_map = tile_map(dout, Tq, H, HD),
                      k_map = tile_map(k, Tk, H, HD), v_map = tile_map(v, Tk, H, HD);
    if (accumulation == DqAccumulation::deterministic) {
      constexpr int dq_bytes = DqShared<HD>::kBytes;
      prepare_launch<DqRegisters>(attention_wgmma_dq_kernel<HD>, dq_bytes, "attention_wgmma dQ");
      EMB_LAUNCH(attention_wgmma_dq_kernel<HD>, block_grid(Tq, H), kThreads, dq_bytes, stream)(
          q_map, do_map, k_map, v_map, lse, w.d, dq, p);
      launch_dkdv<HD, false>(k_map, v_map, q_map, do_map, lse, w.d, dk, dv, nullptr, p, stream);
      return;
    }
    const int64_t n = Tq * H * HD;
    const size_t dq_accum_at = attention_wgmma_workspace_bytes(Tq, Tk, H, HD, DqAccumulation::deterministic);
    float* dq_accum = reinterpret_cast<float*>(static_cast<char*>(workspace) + dq_accum_at);
    check_cuda(cudaMemsetAsync(dq_accum, 0, size_t(n) * sizeof(float), stream), "attention_wgmma: zero dQ accumulator");
    launch_dkdv<HD, true>(k_map, v_map, q_map, do_map, lse, w.d, dk, dv, dq_accum, p, stream);
    EMB_LAUNCH(add_dq_accumulator_kernel, grid_for(n / 8, 256), 256, 0, stream)(dq_accum, dq, n, p.scale);
  });
  check_launch("attention_wgmma_backward");
}

}  // namespace emb::cuda
