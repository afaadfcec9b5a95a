// Staging global rows in shared memory with cp.async, and a STAGES-deep pipeline over the tiles
// a block needs (mma.cuh's cp_async_16 / commit / wait). Every function here is called by all
// threads of the block with block-uniform arguments.
#pragma once
#include <cuda_bf16.h>

#include <cstdint>

#include "kernels/cuda/mma.cuh"

namespace emb::cuda {

// dst[r][0..COLS) = src[(row0 + r)·ld + col0 + 0..COLS) for r < ROWS (dst row-major with
// STRIDE elements per row) in 16-byte cp.async chunks, issued by the THREADS threads of the
// block; rows at or beyond T are zero-filled with plain stores (never read past the tensor;
// zeros, not garbage, since the mma multiplies them by 0 and 0·NaN is NaN). src, ld and col0
// must keep every chunk 16-byte aligned.
template <int ROWS, int COLS, int STRIDE, int THREADS>
__device__ __forceinline__ void load_rows_async(__nv_bfloat16* dst, const __nv_bfloat16* src, int64_t row0, int64_t T,
                                                int64_t ld, int64_t col0) {
  constexpr int kChunks = COLS / 8;
  static_assert(COLS % 8 == 0 && STRIDE % 8 == 0, "16-byte chunks");
  for (int c = threadIdx.x; c < ROWS * kChunks; c += THREADS) {
    const int r = c / kChunks, col = (c % kChunks) * 8;
    __nv_bfloat16* to = dst + r * STRIDE + col;
    if (row0 + r < T)
      cp_async_16(to, src + (row0 + r) * ld + col0 + col);
    else
      *reinterpret_cast<uint4*>(to) = uint4{0, 0, 0, 0};
  }
}

// Runs compute(stage, tile) for every tile in [0, n) with allowed(tile), in order, while the
// loads of the next STAGES − 1 allowed tiles are in flight: issue(stage, tile) starts the
// asynchronous loads of a tile into buffer `stage` (and may write small per-tile arrays of
// that stage with plain stores). Copies issued before the call join the first tile's group.
// One commit group per step, empty ones included, so that cp_async_wait<STAGES − 1> always
// means "the tile about to be computed has landed"; the barrier after it makes every thread's
// copies visible, the barrier after compute keeps the next issue from overwriting a buffer
// still being read. Ends with every copy waited for (also when no tile is allowed).
template <int STAGES, class Allowed, class Issue, class Compute>
__device__ __forceinline__ void pipeline_allowed_tiles(int64_t n, Allowed allowed, Issue issue, Compute compute) {
  static_assert(STAGES >= 2, "a pipeline needs two buffers");
  const auto next_allowed = [&](int64_t tile) {
    while (tile < n && !allowed(tile)) ++tile;
    return tile;
  };
  int64_t to_load = next_allowed(0), to_compute = to_load;
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (to_load < n) {
      issue(s, to_load);
      to_load = next_allowed(to_load + 1);
    }
    cp_async_commit();
  }
  for (int stage = 0; to_compute < n; stage = (stage + 1) % STAGES) {
    if (to_load < n) {
      issue((stage + STAGES - 1) % STAGES, to_load);
      to_load = next_allowed(to_load + 1);
    }
    cp_async_commit();
    cp_async_wait<STAGES - 1>();
    __syncthreads();
    compute(stage, to_compute);
    __syncthreads();
    to_compute = next_allowed(to_compute + 1);
  }
  cp_async_wait<0>();
}

}  // namespace emb::cuda
