// Warp and block sums in a fixed order, so results do not depend on scheduling.
#pragma once

namespace emb::cuda {

template <class V>
__device__ __forceinline__ V warp_sum(V v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// Every thread gets the block's sum. blockDim.x is a multiple of 32; scratch holds 32 values.
template <class V>
__device__ V block_sum(V v, V* scratch) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warp_sum(v);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  V total = 0;
  for (int w = 0; w < int(blockDim.x / 32); ++w) total += scratch[w];
  __syncthreads();  // scratch may be reused by the next call
  return total;
}

}  // namespace emb::cuda
