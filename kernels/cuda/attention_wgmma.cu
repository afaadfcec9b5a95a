#include "kernels/cuda/attention_wgmma.hpp"

#include <cuda.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "kernels/cuda/attention_passes.cuh"
#include "kernels/cuda/attention_rows.cuh"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/tma.cuh"
#include "kernels/cuda/wgmma.cuh"

namespace emb::cuda {

namespace {

using bf16 = __nv_bfloat16;

constexpr int kGroupRows = 64;  // query rows per consumer warpgroup (wgmma's M): 4 warps × 16
// Consumer warpgroups per block: both read each K/V tile, which halves the K/V bytes per FLOP
// against one (the L2 roofline of the README).
constexpr int kGroups = 2;
constexpr int kConsumers = 128 * kGroups;
constexpr int kThreads = kConsumers + 32;  // and the producer warp
constexpr int kBlockRows = kGroups * kGroupRows;
constexpr int kKeyTile = 64;  // keys per streamed tile (S's N, P·V's K)
constexpr int kStages = 2;    // K/V buffers in the ring
static_assert(kKeyTile == kGroupRows, "K, V and each warpgroup's Q tile share the chunk layout");
static_assert(kGroups == 2, "the ping-pong turns alternate between two warpgroups");

// Dynamic shared memory: Q (one 64-row tile per consumer warpgroup), the K and V stages, per
// stage the key tokens of its tile, then the mbarriers (Q loaded, per stage full and empty, per
// warpgroup its turn).
template <int HD>
struct Shared {
  static constexpr int kTileBytes = kGroupRows * HD * 2;
  static constexpr int kK = kGroups * kTileBytes, kV = kK + kStages * kTileBytes, kIndex = kV + kStages * kTileBytes;
  static constexpr int kBarriers = kIndex + kStages * kKeyTile * int(sizeof(TokenIndex));
  static constexpr int kBytes = kBarriers + (1 + 2 * kStages + kGroups) * 8;
  static_assert(kBarriers % 8 == 0, "mbarriers are 8-byte aligned");
};

struct alignas(128) Aligned128 {  // TMA writes to 128-byte aligned shared memory
  char bytes[128];
};

#ifdef EMB_HOPPER_DEVICE_CODE
// A tile of 64 rows × HD columns lands in shared memory as one TMA box of 8 columns × 64 rows
// per 8-column chunk: chunk c at c · kChunkBytes, row r of it at 16r. This is the no-swizzle
// core-matrix layout (8 rows × 16 bytes, 128 contiguous bytes) with core matrices 128 bytes
// apart along the rows and kChunkBytes apart along the columns.
constexpr uint32_t kCoreBytes = 128;
constexpr uint32_t kChunkBytes = kGroupRows * 16;

// The allowed key tiles of the block in order: both roles walk the same sequence.
struct AllowedTiles {
  const Params& p;
  TileSummary q_span;
  int64_t n;
  __device__ int64_t next(int64_t kt) const {
    while (kt < n && !key_tile_allowed<kKeyTile>(p, q_span, kt)) ++kt;
    return kt;
  }
};

// Issues the TMA loads of a 64-row tile (rows row0.., head h's HD columns) into dst, one box
// per 8-column chunk, completing on bar.
template <int HD>
__device__ __forceinline__ void load_tile(char* dst, const CUtensorMap* map, int h, int64_t row0, uint64_t* bar) {
#pragma unroll
  for (int c = 0; c < HD / 8; ++c) bulk_load_2d(dst + c * kChunkBytes, map, h * HD + 8 * c, int32_t(row0), bar);
}

// The producer warp: the Q tiles once, then each allowed K/V tile into the next stage once its
// consumers released it (parity of the previous round; the first round's wait returns at once).
template <int HD>
__device__ void produce(char* base, uint64_t* q_full, uint64_t* full, uint64_t* empty, const CUtensorMap* q_map,
                        const CUtensorMap* k_map, const CUtensorMap* v_map, const AllowedTiles& tiles, int h,
                        int64_t i0) {
  using L = Shared<HD>;
  const int lane = threadIdx.x % 32;
  if (lane == 0) {
    mbarrier_arrive_expect_tx(q_full, kGroups * L::kTileBytes);
    for (int g = 0; g < kGroups; ++g) load_tile<HD>(base + g * L::kTileBytes, q_map, h, i0 + g * kGroupRows, q_full);
  }
  int64_t use = 0;
  for (int64_t kt = tiles.next(0); kt < tiles.n; kt = tiles.next(kt + 1), ++use) {
    const int s = int(use % kStages);
    mbarrier_wait(&empty[s], unsigned(use / kStages & 1) ^ 1u);
    TokenIndex* kj = reinterpret_cast<TokenIndex*>(base + L::kIndex) + s * kKeyTile;
    kj[lane] = tiles.p.k_side.at(kt * kKeyTile + lane);
    kj[lane + 32] = tiles.p.k_side.at(kt * kKeyTile + lane + 32);
    __syncwarp();  // the indices before the arrival that publishes them
    if (lane == 0) {
      mbarrier_arrive_expect_tx(&full[s], 2 * L::kTileBytes);
      load_tile<HD>(base + L::kK + s * L::kTileBytes, k_map, h, kt * kKeyTile, &full[s]);
      load_tile<HD>(base + L::kV + s * L::kTileBytes, v_map, h, kt * kKeyTile, &full[s]);
    }
  }
}

// A consumer warpgroup (g = threadIdx.x / 128, its Q tile the g-th): per tile of the block's
// sequence that its own 64 rows may attend, S = Q·Kᵀ, the online softmax, O += P·V; warp w of the
// block holds query rows 16w .. 16w + 15 (attention_rows.cuh). FA3's ping-pong: the warpgroups
// take turns to issue S (turn[g], passed on by the other one's 128 threads, warpgroup 0 first), so
// that one's softmax runs while the other's wgmma does; a skipped tile still takes its turn,
// since both walk the block's sequence. The turns order only speed, never results.
template <int HD>
__device__ void consume(char* base, uint64_t* q_full, uint64_t* full, uint64_t* empty, uint64_t* turn,
                        const AllowedTiles& tiles, int h, int64_t i0, bf16* out, float* lse) {
  using L = Shared<HD>;
  const Params& p = tiles.p;
  const int lane = threadIdx.x % 32;
  const WarpRows rows(i0);
  const TokenIndex qi[2] = {p.q_side.at(rows.row[0]), p.q_side.at(rows.row[1])};
  const float scale_log2 = p.scale * kLog2e;
  const int g = int(threadIdx.x / 128);
  const char* q_g = base + g * L::kTileBytes;
  const TileSummary own_span = span_summary(p.q_tiles, i0 + g * kGroupRows, kGroupRows, p.Tq);
  float o[HD / 8][4] = {};
  OnlineSoftmax<HD> softmax;
  mbarrier_wait(q_full, 0);
  int64_t use = 0;
  for (int64_t kt = tiles.next(0); kt < tiles.n; kt = tiles.next(kt + 1), ++use) {
    const int s = int(use % kStages);
    const char* k_s = base + L::kK + s * L::kTileBytes;
    const char* v_s = base + L::kV + s * L::kTileBytes;
    mbarrier_wait(&full[s], unsigned(use / kStages & 1));
    // A tile only the other warpgroup's rows may attend is released unread: P = 0 would not
    // keep its V out of O (0 · NaN). The wait above keeps this warp's arrivals in phase without
    // relying on the turns (which also keep the warpgroups within a tile of each other).
    const bool attend = key_tile_allowed<kKeyTile>(p, own_span, kt);  // uniform per warpgroup
    mbarrier_wait(&turn[g], unsigned(use & 1) ^ unsigned(g == 0));
    if (!attend) {
      mbarrier_arrive(&turn[1 - g]);
      if (lane == 0) mbarrier_arrive(&empty[s]);
      continue;
    }
    float sc[kKeyTile / 8][4] = {};
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < HD / 16; ++kk)  // K-major Q and K: 16 columns are chunks 2kk, 2kk + 1
      wgmma_ss<kKeyTile, 0>(sc, wgmma_descriptor(q_g + 2 * kk * kChunkBytes, kChunkBytes, kCoreBytes),
                            wgmma_descriptor(k_s + 2 * kk * kChunkBytes, kChunkBytes, kCoreBytes), kk > 0);
    wgmma_commit();
    // Every thread passes the turn (no lane branch between a wgmma and its wait, which would
    // make ptxas serialise the wgmma).
    mbarrier_arrive(&turn[1 - g]);
    wgmma_wait<0>();
    wgmma_fence_operand(sc);
    const TokenIndex* kj = reinterpret_cast<const TokenIndex*>(base + L::kIndex) + s * kKeyTile;
    softmax.template step<kKeyTile>(sc, o, scale_log2, lane,
                                    [&](int e, int col) { return tokens_attend(p.mask, qi[e / 2], kj[col]); });
    // P as bf16 A fragments: the accumulator layout of columns 16kk .. 16kk + 15 is the A layout.
    uint32_t pa[kKeyTile / 16][4];
#pragma unroll
    for (int kk = 0; kk < kKeyTile / 16; ++kk) {
      pa[kk][0] = pack_bf16x2(sc[2 * kk][0], sc[2 * kk][1]);
      pa[kk][1] = pack_bf16x2(sc[2 * kk][2], sc[2 * kk][3]);
      pa[kk][2] = pack_bf16x2(sc[2 * kk + 1][0], sc[2 * kk + 1][1]);
      pa[kk][3] = pack_bf16x2(sc[2 * kk + 1][2], sc[2 * kk + 1][3]);
    }
    wgmma_fence();  // o was rescaled by the softmax
    wgmma_fence_operand(o);
#pragma unroll
    for (int kk = 0; kk < kKeyTile / 16; ++kk)  // N-major V: keys 16kk .. are core rows 2kk, 2kk + 1
      wgmma_rs<HD, 1>(o, pa[kk], wgmma_descriptor(v_s + 2 * kk * kCoreBytes, kCoreBytes, kChunkBytes), true);
    wgmma_commit();
    wgmma_wait<0>();
    wgmma_fence_operand(o);
    __syncwarp();  // every lane's wgmma on the stage retired before the warp releases it
    if (lane == 0) mbarrier_arrive(&empty[s]);
  }
  softmax.store(o, rows, p, h, lane, out, lse);
}
#endif

// Grid (query blocks of 128, heads); threads 0..255 consume (warpgroup g: rows 64g ..), 256..287
// produce.
template <int HD>
__global__ void __launch_bounds__(kThreads)
    attention_wgmma_forward_kernel(const __grid_constant__ CUtensorMap q_map, const __grid_constant__ CUtensorMap k_map,
                                   const __grid_constant__ CUtensorMap v_map, bf16* out, float* lse, Params p) {
#ifdef EMB_HOPPER_DEVICE_CODE
  using L = Shared<HD>;
  EMB_DYNAMIC_SHARED(Aligned128, shared);
  char* base = reinterpret_cast<char*>(shared);
  uint64_t* bars = reinterpret_cast<uint64_t*>(base + L::kBarriers);
  uint64_t *q_full = bars, *full = bars + 1, *empty = bars + 1 + kStages, *turn = bars + 1 + 2 * kStages;
  const int h = int(blockIdx.y);
  const int64_t i0 = int64_t(blockIdx.x) * kBlockRows;
  const AllowedTiles tiles{p, span_summary(p.q_tiles, i0, kBlockRows, p.Tq), (p.Tk + kKeyTile - 1) / kKeyTile};
  if (threadIdx.x == 0) {
    mbarrier_init(q_full, 1);
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(&full[s], 1);
      mbarrier_init(&empty[s], kConsumers / 32);  // one arrival per consumer warp
    }
    for (int g = 0; g < kGroups; ++g) mbarrier_init(&turn[g], 128);  // the other warpgroup's threads
    mbarrier_init_fence();
  }
  __syncthreads();
  if (threadIdx.x >= kConsumers)
    produce<HD>(base, q_full, full, empty, &q_map, &k_map, &v_map, tiles, h, i0);
  else
    consume<HD>(base, q_full, full, empty, turn, tiles, h, i0, out, lse);
#endif
}

// The 2-D tensor map of one [T, H·hd] bf16 tensor with a box of 8 columns × 64 rows.
CUtensorMap tile_map(const bf16* x, int64_t T, int H, int hd) {
  CUtensorMap map;
  const uint64_t dims[2] = {uint64_t(H) * uint64_t(hd), uint64_t(T)};
  const uint64_t strides[1] = {uint64_t(H) * uint64_t(hd) * 2};
  const uint32_t box[2] = {8, kGroupRows};
  make_tensor_map(&map, x, 2, dims, strides, box, 2);
  return map;
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
            ": expected 0 (mma.sync attention forward) or 1 (wgmma, sm_90 only)");
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
    allow_shared_bytes(attention_wgmma_forward_kernel<HD>, bytes, "attention_wgmma");
    const dim3 grid(unsigned((Tq + kBlockRows - 1) / kBlockRows), unsigned(H));
    // An empty context (Tk = 0, k and v possibly null) loads no key tile: its maps describe q,
    // so that they are valid ones.
    const bool keys = Tk > 0;
    EMB_LAUNCH(attention_wgmma_forward_kernel<HD>, grid, kThreads, bytes, stream)(
        tile_map(q, Tq, H, HD), tile_map(keys ? k : q, keys ? Tk : Tq, H, HD), tile_map(keys ? v : q, keys ? Tk : Tq, H, HD),
        out, lse, p);
  });
  check_launch("attention_wgmma_forward");
  check_keyless_rows(lse, p, w, stream, keyless);
}

}  // namespace emb::cuda
