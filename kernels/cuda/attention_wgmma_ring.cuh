// What the Hopper attention kernels (attention_wgmma.cu: forward; attention_wgmma_backward.cu:
// dQ and dK/dV) share: a block of two consumer warpgroups (64 rows each, 128 of one head) and
// a producer warpgroup (its first warp loads; setmaxnreg moves its registers to the consumers:
// run_roles); the tiles of 64 rows × HD columns in shared memory in the no-swizzle core
// matrix layout, loaded by TMA, and their wgmma descriptors; the ring that streams the allowed
// tiles of the other side: the producer loads the block's resident tiles once, then each allowed
// streamed tile into the next of the ring's stages (per stage a "full" mbarrier with transaction
// bytes, an "empty" one each consumer warp arrives on once it is done with the stage), and the
// consumers' walk over the same sequence.
#pragma once
#include <cuda.h>
#include <cuda_bf16.h>

#include <cstdint>

#include "core/error.hpp"
#include "kernels/cuda/attention_passes.cuh"
#include "kernels/cuda/attention_rows.cuh"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/tma.cuh"
#include "kernels/cuda/wgmma.cuh"

namespace emb::cuda::wgmma_attention {

constexpr int kGroupRows = 64;  // rows per consumer warpgroup (wgmma's M): 4 warps × 16
// Consumer warpgroups per block: both read each streamed tile, which halves the streamed bytes
// per FLOP against one (the L2 roofline of the README).
constexpr int kGroups = 2;
constexpr int kConsumers = 128 * kGroups;
// And a producer warpgroup: its first warp loads, the other three idle. A whole warpgroup, so
// that setmaxnreg can move its registers to the consumers, as FA3 does: at launch a block of 3
// warpgroups gets 168 registers per thread (65536 / 384 rounded down per warp scheduler; with a
// producer warp alone, 288 threads, it is 168 too).
constexpr int kThreads = kConsumers + 128;
constexpr int kBlockRows = kGroups * kGroupRows;
constexpr int kTileRows = 64;  // rows per streamed tile (the N of Q·Kᵀ or K·Qᵀ, the K of P·V)
static_assert(kTileRows == kGroupRows, "streamed and resident tiles share the chunk layout");

// Registers per thread of the producer warpgroup and of the consumers after setmaxnreg (run_roles):
// moved, not added, so within the launch's 168 per thread.
template <int PRODUCER, int CONSUMER>
struct RegisterSplit {
  static constexpr int kProducer = PRODUCER, kConsumer = CONSUMER;
  static constexpr int kMoved = 128 * PRODUCER + kConsumers * CONSUMER;  // over the block's warpgroups
  static_assert(kMoved <= kThreads * 168, "setmaxnreg moves registers, it does not add them");
};

// Grid of a block kernel over T rows of H heads: blocks of 128 rows, one head each.
inline dim3 block_grid(int64_t T, int H) { return dim3(unsigned((T + kBlockRows - 1) / kBlockRows), unsigned(H)); }

// Dynamic shared memory of a ring of STAGES stages: RESIDENT arrays of one tile per warpgroup
// (loaded once), STREAMED arrays of one tile per stage, SCRATCH bytes the kernel writes itself (a
// multiple of 128), per stage the token index of its rows and FLOATS arrays of one float per row,
// then the mbarriers: resident loaded, per stage full and empty, and EXTRA more.
template <int HD, int STAGES, int RESIDENT, int STREAMED, int FLOATS, int SCRATCH, int EXTRA>
struct RingLayout {
  static constexpr int kStages = STAGES;
  static constexpr int kStreamed = STREAMED;
  static constexpr int kTileBytes = kTileRows * HD * 2;
  static constexpr int kStreamedAt = RESIDENT * kGroups * kTileBytes;
  static constexpr int kScratchAt = kStreamedAt + STREAMED * kStages * kTileBytes;
  static constexpr int kIndexAt = kScratchAt + SCRATCH;
  static constexpr int kFloatsAt = kIndexAt + kStages * kTileRows * int(sizeof(TokenIndex));
  static constexpr int kBarriersAt = kFloatsAt + FLOATS * kStages * kTileRows * int(sizeof(float));
  static constexpr int kBytes = kBarriersAt + (1 + 2 * kStages + EXTRA) * 8;
  static_assert(SCRATCH % 128 == 0, "the scratch keeps the 128-byte alignment of the tiles");
  static_assert(kBarriersAt % 8 == 0, "mbarriers are 8-byte aligned");
  static __device__ char* resident(char* base, int a, int g) { return base + (a * kGroups + g) * kTileBytes; }
  static __device__ char* streamed(char* base, int a, int stage) {
    return base + kStreamedAt + (a * kStages + stage) * kTileBytes;
  }
  static __device__ char* scratch(char* base) { return base + kScratchAt; }
  static __device__ TokenIndex* index(char* base, int stage) {
    return reinterpret_cast<TokenIndex*>(base + kIndexAt) + stage * kTileRows;
  }
  static __device__ float* floats(char* base, int a, int stage) {
    return reinterpret_cast<float*>(base + kFloatsAt) + (a * kStages + stage) * kTileRows;
  }
  static __device__ uint64_t* barriers(char* base) { return reinterpret_cast<uint64_t*>(base + kBarriersAt); }
  // The EXTRA mbarriers, after the ring's (Ring: resident, full and empty per stage).
  static __device__ uint64_t* extra_barriers(char* base) { return barriers(base) + 1 + 2 * kStages; }
};

// Before a launch of a block kernel with the split Registers and `bytes` of dynamic shared
// memory: the shared memory opt-in, and a check that the kernel got the registers the split
// moves. setmaxnreg.inc waits until the block's pool holds what it claims, forever when ptxas
// gave the kernel fewer per thread than the 168 of the launch bound that the split assumes (it
// gives them 168 today): an error instead of a hang.
template <class Registers, class Kernel>
void prepare_launch(Kernel* kernel, int bytes, const char* name) {
  allow_shared_bytes(kernel, bytes, name);
  cudaFuncAttributes a;
  check_cuda(cudaFuncGetAttributes(&a, reinterpret_cast<const void*>(kernel)), name);
  EMB_CHECK(a.numRegs * kThreads >= Registers::kMoved, name, ": built with ", a.numRegs,
            " registers per thread, so its ", kThreads, " threads hold ", a.numRegs * kThreads,
            ", but its setmaxnreg split (", Registers::kProducer, " producer, ", Registers::kConsumer,
            " consumer) moves ", Registers::kMoved,
            " (setmaxnreg.inc would wait forever); set EMBTRAIN_CUDA_WGMMA=0 to run the mma.sync attention");
}

struct alignas(128) Aligned128 {  // TMA writes to 128-byte aligned shared memory
  char bytes[128];
};

// The 2-D tensor map of one [T, H·hd] bf16 tensor with a box of 8 columns × 64 rows.
inline CUtensorMap tile_map(const __nv_bfloat16* x, int64_t T, int H, int hd) {
  CUtensorMap map;
  const uint64_t dims[2] = {uint64_t(H) * uint64_t(hd), uint64_t(T)};
  const uint64_t strides[1] = {uint64_t(H) * uint64_t(hd) * 2};
  const uint32_t box[2] = {8, kTileRows};
  make_tensor_map(&map, x, 2, dims, strides, box, 2);
  return map;
}

#ifdef EMB_HOPPER_DEVICE_CODE
// A tile of 64 rows × HD columns lands in shared memory as one TMA box of 8 columns × 64 rows
// per 8-column chunk: chunk c at c · kChunkBytes, row r of it at 16r. This is the no-swizzle
// core-matrix layout (8 rows × 16 bytes, 128 contiguous bytes) with core matrices 128 bytes
// apart along the rows and kChunkBytes apart along the columns.
constexpr uint32_t kCoreBytes = 128;
constexpr uint32_t kChunkBytes = kTileRows * 16;

// Descriptor of columns 16kk .. 16kk + 15 of a tile as a K-major operand (A, or B with
// TRANS_B = 0): the tile's columns are the product's K (Q and K in Q·Kᵀ), chunks 2kk, 2kk + 1.
__device__ __forceinline__ uint64_t k_major_descriptor(const char* tile, int kk) {
  return wgmma_descriptor(tile + 2 * kk * kChunkBytes, kChunkBytes, kCoreBytes);
}
// Descriptor of rows 16kk .. 16kk + 15 of a tile as an N-major B operand (TRANS_B = 1): the
// tile's rows are the product's K (V in P·V), core rows 2kk, 2kk + 1; its columns are N.
__device__ __forceinline__ uint64_t n_major_descriptor(const char* tile, int kk) {
  return wgmma_descriptor(tile + 2 * kk * kCoreBytes, kCoreBytes, kChunkBytes);
}

// acc [64][N] = A·Bᵀ over HD columns for a warpgroup, both tiles K-major in shared memory (rows
// of A are M, rows of B are N), issued without commit.
template <int N, int HD>
__device__ __forceinline__ void issue_abt(float (&acc)[N / 8][4], const char* a, const char* b) {
#pragma unroll
  for (int kk = 0; kk < HD / 16; ++kk)
    wgmma_ss<N, 0>(acc, k_major_descriptor(a, kk), k_major_descriptor(b, kk), kk > 0);
}

// P [64][kTileRows], an fp32 accumulator, as the bf16 A fragments of a product P·B: built
// before the wgmma_fence of that product (registers an issue reads are written before its fence).
struct PFragments {
  AFragment kk[kTileRows / 16];
  PFragments() = default;
  __device__ __forceinline__ explicit PFragments(const float (&p)[kTileRows / 8][4]) {
#pragma unroll
    for (int k = 0; k < kTileRows / 16; ++k) kk[k] = AFragment(p, k);
  }
};

// acc [64][HD] += P·B for a warpgroup, P from registers, B the kTileRows × HD tile at b
// (N-major), issued without commit.
template <int HD>
__device__ __forceinline__ void issue_pb(float (&acc)[HD / 8][4], const PFragments& p, const char* b) {
#pragma unroll
  for (int kk = 0; kk < kTileRows / 16; ++kk) wgmma_rs<HD, 1>(acc, p.kk[kk].a, n_major_descriptor(b, kk), true);
}

// The mbarriers of a ring of STAGES stages (RingLayout::barriers): resident, then full and empty
// per stage. The use-th streamed tile of the sequence goes to stage use % STAGES in round
// use / STAGES, whose parity the waits on that stage take.
template <int STAGES>
struct Ring {
  uint64_t *resident, *full, *empty;
  __device__ explicit Ring(uint64_t* bars) : resident(bars), full(bars + 1), empty(bars + 1 + STAGES) {}
  // By one thread before the block's barrier.
  __device__ void init() const {
    mbarrier_init(resident, 1);
    for (int s = 0; s < STAGES; ++s) {
      mbarrier_init(&full[s], 1);
      mbarrier_init(&empty[s], kConsumers / 32);  // one arrival per consumer warp
    }
  }
  static __device__ __forceinline__ int stage(int64_t use) { return int(use % STAGES); }
  static __device__ __forceinline__ unsigned parity(int64_t use) { return unsigned(use / STAGES & 1); }
  // A consumer warp is done with stage s: every lane's wgmma reading it retired.
  __device__ __forceinline__ void release(int s) const {
    __syncwarp();  // every lane's wgmma on the stage retired before the warp releases it
    if (threadIdx.x % 32 == 0) mbarrier_arrive(&empty[s]);
  }
};

// The streamed tiles of the block in order, those that may hold an allowed pair for the block's
// rows (STREAMS_KEYS: key tiles for query rows, else query tiles for key rows): both roles walk
// the same sequence.
template <bool STREAMS_KEYS>
struct AllowedTiles {
  const Params& p;
  TileSummary span;  // of the block's rows
  int64_t n;
  __device__ bool allowed(const TileSummary& rows_span, int64_t t) const {
    return STREAMS_KEYS ? key_tile_allowed<kTileRows>(p, rows_span, t) : query_tile_allowed<kTileRows>(p, rows_span, t);
  }
  __device__ int64_t next(int64_t t) const {
    while (t < n && !allowed(span, t)) ++t;
    return t;
  }
};

// Issues the TMA loads of a 64-row tile (rows row0.., head h's HD columns) into dst, one box
// per 8-column chunk, completing on bar.
template <int HD>
__device__ __forceinline__ void load_tile(char* dst, const CUtensorMap* map, int h, int64_t row0, uint64_t* bar) {
#pragma unroll
  for (int c = 0; c < HD / 8; ++c) bulk_load_2d(dst + c * kChunkBytes, map, h * HD + 8 * c, int32_t(row0), bar);
}

// The producer warp: the resident tiles of both warpgroups once (rows row0 + 64g ..), then each
// allowed streamed tile into the next stage once its consumers released it (parity of the
// previous round; the first round's wait returns at once). stage_rows(stage, t, r) writes the
// per-row data (index, floats) of row r of tile t into the stage, two rows per lane.
template <class Layout, int HD, int RESIDENT, bool STREAMS_KEYS, class StageRows>
__device__ void produce(char* base, const Ring<Layout::kStages>& ring,
                        const CUtensorMap* const (&resident_maps)[RESIDENT],
                        const CUtensorMap* const (&streamed_maps)[Layout::kStreamed],
                        const AllowedTiles<STREAMS_KEYS>& tiles, int h, int64_t row0, StageRows stage_rows) {
  const int lane = threadIdx.x % 32;
  if (lane == 0) {
    mbarrier_arrive_expect_tx(ring.resident, RESIDENT * kGroups * Layout::kTileBytes);
    for (int a = 0; a < RESIDENT; ++a)
      for (int g = 0; g < kGroups; ++g)
        load_tile<HD>(Layout::resident(base, a, g), resident_maps[a], h, row0 + g * kGroupRows, ring.resident);
  }
  int64_t use = 0;
  for (int64_t t = tiles.next(0); t < tiles.n; t = tiles.next(t + 1), ++use) {
    const int s = ring.stage(use);
    mbarrier_wait(&ring.empty[s], ring.parity(use) ^ 1u);
    stage_rows(s, t, lane);
    stage_rows(s, t, lane + 32);
    __syncwarp();  // the rows' data before the arrival that publishes them
    if (lane == 0) {
      mbarrier_arrive_expect_tx(&ring.full[s], Layout::kStreamed * Layout::kTileBytes);
      for (int a = 0; a < Layout::kStreamed; ++a)
        load_tile<HD>(Layout::streamed(base, a, s), streamed_maps[a], h, t * kTileRows, &ring.full[s]);
    }
  }
}

// The block's roles once thread 0 has initialised the ring and init_more() its other mbarriers:
// the producer warpgroup gives its registers away (Registers::kProducer per thread) and its first
// warp runs produce(); the consumers take theirs (Registers::kConsumer) and run consume().
template <class Registers, int STAGES, class InitMore, class Produce, class Consume>
__device__ __forceinline__ void run_roles(const Ring<STAGES>& ring, InitMore init_more, Produce produce,
                                          Consume consume) {
  if (threadIdx.x == 0) {
    ring.init();
    init_more();
    mbarrier_init_fence();
  }
  __syncthreads();
  if (threadIdx.x >= kConsumers) {
    warpgroup_release_registers<Registers::kProducer>();
    if (threadIdx.x < kConsumers + 32) produce();
  } else {
    warpgroup_claim_registers<Registers::kConsumer>();
    consume();
  }
}

// A consumer warp's walk: once the resident tiles are in, for each tile of the block's sequence
// body(t, stage, use) once the stage is full. The body releases each stage (ring.release, after
// its wgmma reading the stage retired), in the order of the uses and before the walk waits for the
// next use of a stage it still holds: the producer refills a stage only once all consumer warps
// released it.
// A body that skips a tile (one its warpgroup's rows may not attend: a zero P would not keep a
// NaN row out, 0 · NaN) still waits for it and releases it, which keeps this warp's arrivals in
// phase.
template <int STAGES, bool STREAMS_KEYS, class Body>
__device__ __forceinline__ void walk(const Ring<STAGES>& ring, const AllowedTiles<STREAMS_KEYS>& tiles, Body body) {
  mbarrier_wait(ring.resident, 0);
  int64_t use = 0;
  for (int64_t t = tiles.next(0); t < tiles.n; t = tiles.next(t + 1), ++use) {
    const int s = ring.stage(use);
    mbarrier_wait(&ring.full[s], ring.parity(use));
    body(t, s, use);
  }
}

// The walk of a body done with each tile when it returns (its wgmma waited for): the stage is
// released right after it. body is captured by value: by reference, ptxas (nvcc 13.0) spilled
// 24 B more in the hd 128 dK/dV kernel.
template <int STAGES, bool STREAMS_KEYS, class Body>
__device__ __forceinline__ void consume(const Ring<STAGES>& ring, const AllowedTiles<STREAMS_KEYS>& tiles, Body body) {
  walk(ring, tiles, [&ring, body](int64_t t, int s, int64_t use) {
    body(t, s, use);
    ring.release(s);
  });
}
#endif

}  // namespace emb::cuda::wgmma_attention
