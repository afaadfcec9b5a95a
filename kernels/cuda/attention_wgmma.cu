#include "kernels/cuda/attention_wgmma.hpp"

#include <cuda.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "kernels/cuda/attention_passes.cuh"
#include "kernels/cuda/attention_rows.cuh"
#include "kernels/cuda/attention_wgmma_ring.cuh"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/tma.cuh"
#include "kernels/cuda/wgmma.cuh"

namespace emb::cuda {

namespace {

using namespace wgmma_attention;
using bf16 = __nv_bfloat16;

static_assert(kGroups == 2, "the ping-pong turns alternate between two warpgroups");

// 4 stages: a consumer warp holds a tile's stage until its P·V retired, which is after it waited
// for the next tile (intra-warpgroup overlap, below), so 2 stages are held; with 3 the producer
// loads tile j + 1 during tile j's iteration, one tile's compute (≈ 0.3 µs at hd 64, 0.6 at hd
// 128 on an H100) to cover TMA's latency from L2, with 4 it loads tile j + 2, two tiles ahead.
// One block per SM (by registers) leaves the shared memory to spare: 65 / 85 / 167 kB.
constexpr int kForwardStages = 4;
// setmaxnreg (run_roles): at the launch's 168 per thread the overlap spilled at hd 128 (O, S and
// the held P are 64 + 32 + 16 registers live together); the producer streams two arrays, as the
// backward's dQ kernel, whose split this is.
using ForwardRegisters = RegisterSplit<56, 224>;
// Q resident; K, V streamed with their key tokens; after the ring's mbarriers one turn per
// warpgroup.
template <int HD>
using Shared = RingLayout<HD, kForwardStages, 1, 2, 0, 0, kGroups>;

#ifdef EMB_HOPPER_DEVICE_CODE
using ForwardRing = Ring<kForwardStages>;

// A consumer warpgroup (g = threadIdx.x / 128, its Q tile the g-th): per tile of the block's
// sequence that its own 64 rows may attend, S = Q·Kᵀ, the online softmax, O += P·V; warp w of the
// block holds query rows 16w .. 16w + 15 (attention_rows.cuh). FA3's ping-pong: the warpgroups
// take turns (turn[g], passed on by the other one's 128 threads, warpgroup 0 first) to issue S,
// so that one's softmax runs while the other's wgmma does; a skipped tile still takes its turn,
// since both walk the block's sequence. The turns order only speed, never results.
// FA3's intra-warpgroup overlap (Algorithm 2): P·V of an attended tile is held back and issued
// after the next attended tile's S, so that the softmax of S_j+1 runs while P_j·V_j is in flight:
// issue S_j+1; issue P_j·V_j; wait for S_j+1 (wait_group 1); softmax of S_j+1 (o untouched); wait
// for P_j·V_j (wait_group 0); release tile j's stage; rescale o. A skipped tile first retires the
// held one (issue, wait, release), so that a warp never holds a stage beyond the next use: with
// two skipped tiles in between it would wait for the refill of the stage it holds.
template <int HD>
__device__ void consume_rows(char* base, const ForwardRing& ring, uint64_t* turn, const AllowedTiles<true>& tiles,
                             int h, int64_t i0, bf16* out, float* lse) {
  using L = Shared<HD>;
  const Params& p = tiles.p;
  const int lane = threadIdx.x % 32;
  const WarpRows rows(i0);
  const TokenIndex qi[2] = {p.q_side.at(rows.row[0]), p.q_side.at(rows.row[1])};
  const float scale_log2 = p.scale * kLog2e;
  const int g = int(threadIdx.x / 128);
  const char* q_g = L::resident(base, 0, g);
  const TileSummary own_span = span_summary(p.q_tiles, i0 + g * kGroupRows, kGroupRows, p.Tq);
  float o[HD / 8][4] = {};
  OnlineSoftmax<HD> softmax;
  // The held tile: the last attended one whose P·V is not issued yet, its P and the stage of its
  // V (held_stage < 0: none).
  PFragments held_p;
  int held_stage = -1;
  const auto issue_held = [&] {
    wgmma_fence();  // o was rescaled by the softmax
    wgmma_fence_operand(o);
    issue_pb<HD>(o, held_p, L::streamed(base, 1, held_stage));
    wgmma_commit();
  };
  const auto release_held = [&] {  // once its P·V retired
    wgmma_fence_operand(o);
    ring.release(held_stage);
    held_stage = -1;
  };
  const auto retire_held = [&] {
    if (held_stage < 0) return;
    issue_held();
    wgmma_wait<0>();
    release_held();
  };
  walk(ring, tiles, [&](int64_t kt, int s, int64_t use) {
    const char* k_s = L::streamed(base, 0, s);
    const bool attend = tiles.allowed(own_span, kt);  // uniform per warpgroup
    if (!attend) retire_held();
    mbarrier_wait(&turn[g], unsigned(use & 1) ^ unsigned(g == 0));
    if (!attend) {
      mbarrier_arrive(&turn[1 - g]);
      ring.release(s);
      return;
    }
    float sc[kTileRows / 8][4] = {};
    wgmma_fence();
    issue_abt<kTileRows, HD>(sc, q_g, k_s);
    wgmma_commit();
    // Every thread passes the turn (no lane branch between a wgmma and its wait, which would
    // make ptxas serialise the wgmma).
    mbarrier_arrive(&turn[1 - g]);
    const TokenIndex* kj = L::index(base, s);
    const auto to_p = [&] {
      wgmma_fence_operand(sc);
      return softmax.template to_p<kTileRows>(
          sc, scale_log2, lane, [&](int e, int col) { return tokens_attend(p.mask, qi[e / 2], kj[col]); });
    };
    // Each branch waits for all it has in flight: with a group in flight on one path into a join
    // and not on the other, ptxas serialised the wgmma (C7518, "WG.DP in divergent path").
    typename OnlineSoftmax<HD>::Corrections corrections;
    if (held_stage >= 0) {
      issue_held();
      wgmma_wait<1>();
      corrections = to_p();
      wgmma_wait<0>();
      release_held();
    } else {
      wgmma_wait<0>();
      corrections = to_p();
    }
    softmax.rescale(o, corrections);
    held_p = PFragments(sc);
    held_stage = s;
  });
  retire_held();
  softmax.store(o, rows, p, h, lane, out, lse);
}
#endif

// Grid (query blocks of 128, heads); threads 0..255 consume (warpgroup g: rows 64g ..), 256..287
// produce (Q once, then the allowed 64-key tiles of K and V: tile skipping over the block's
// rows), 288..383 give their registers away.
template <int HD>
__global__ void __launch_bounds__(kThreads, 1)
    attention_wgmma_forward_kernel(const __grid_constant__ CUtensorMap q_map, const __grid_constant__ CUtensorMap k_map,
                                   const __grid_constant__ CUtensorMap v_map, bf16* out, float* lse, Params p) {
#ifdef EMB_HOPPER_DEVICE_CODE
  using L = Shared<HD>;
  EMB_DYNAMIC_SHARED(Aligned128, shared);
  char* base = reinterpret_cast<char*>(shared);
  const ForwardRing ring(L::barriers(base));
  uint64_t* turn = L::extra_barriers(base);
  const int h = int(blockIdx.y);
  const int64_t i0 = int64_t(blockIdx.x) * kBlockRows;
  const AllowedTiles<true> tiles{p, span_summary(p.q_tiles, i0, kBlockRows, p.Tq), (p.Tk + kTileRows - 1) / kTileRows};
  const CUtensorMap* const resident[1] = {&q_map};
  const CUtensorMap* const streamed[2] = {&k_map, &v_map};
  run_roles<ForwardRegisters>(
      ring, [&] { for (int g = 0; g < kGroups; ++g) mbarrier_init(&turn[g], 128); },  // the other warpgroup's threads
      [&] {
        produce<L, HD>(base, ring, resident, streamed, tiles, h, i0,
                       [&](int s, int64_t kt, int r) { L::index(base, s)[r] = p.k_side.at(kt * kTileRows + r); });
      },
      [&] { consume_rows<HD>(base, ring, turn, tiles, h, i0, out, lse); });
#endif
}

}  // namespace

bool attention_wgmma_available(int device) {
  cudaDeviceProp prop;
  check_cuda(cudaGetDeviceProperties(&prop, device), "attention_wgmma_available");
  return prop.major == 9;
}

bool attention_wgmma_selected(int device) {
  const char* env = std::getenv("EMBTRAIN_CUDA_WGMMA");
  const std::string choice = env ? env : "";
  EMB_CHECK(choice.empty() || choice == "0" || choice == "1", "EMBTRAIN_CUDA_WGMMA=", choice,
            ": expected 0 (mma.sync attention) or 1 (wgmma, sm_90 only)");
  if (choice == "0") return false;
  const bool available = attention_wgmma_available(device);
  EMB_CHECK(available || choice.empty(), "EMBTRAIN_CUDA_WGMMA=1: device ", device,
            " is not compute capability 9.x (the wgmma attention is built for sm_90a)");
  return available;
}

void attention_wgmma_forward(const bf16* q, const bf16* k, const bf16* v, bf16* out, float* lse, int64_t Tq,
                             int64_t Tk, int H, int hd, const AttnIndex& idx, void* workspace, cudaStream_t stream,
                             unsigned long long* keyless) {
  if (Tq == 0) return;
  const Workspace w = carve_workspace(workspace, Tq, Tk);
  const Params p = summarize(idx, Tq, Tk, H, hd, w, stream);
  dispatch_head_dim<48, 64, 128>("attention_wgmma", hd, [&](auto head_dim) {
    constexpr int HD = decltype(head_dim)::value, bytes = Shared<HD>::kBytes;
    prepare_launch<ForwardRegisters>(attention_wgmma_forward_kernel<HD>, bytes, "attention_wgmma forward");
    // An empty context (Tk = 0, k and v possibly null) loads no key tile: its maps describe q,
    // so that they are valid ones.
    const bool keys = Tk > 0;
    EMB_LAUNCH(attention_wgmma_forward_kernel<HD>, block_grid(Tq, H), kThreads, bytes, stream)(
        tile_map(q, Tq, H, HD), tile_map(keys ? k : q, keys ? Tk : Tq, H, HD), tile_map(keys ? v : q, keys ? Tk : Tq, H, HD),
        out, lse, p);
  });
  check_launch("attention_wgmma_forward");
  check_keyless_rows(lse, p, w, stream, keyless);
}

}  // namespace emb::cuda
