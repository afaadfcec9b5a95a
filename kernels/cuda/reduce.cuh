// Warp and block reductions in a fixed order, so results do not depend on scheduling.
#pragma once

namespace emb::cuda {

struct SumOp {
  template <class V>
  __device__ __forceinline__ V operator()(V a, V b) const {
    return a + b;
  }
};
// fmaxf ignores a NaN operand, as std::max over absolute values does in the CPU reference.
struct MaxOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

template <class V, class Op>
__device__ __forceinline__ V warp_reduce(V v, Op op) {
  for (int offset = 16; offset > 0; offset >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// Every thread gets the block's reduction, starting from `identity`. blockDim.x is a multiple of
// 32; scratch holds 32 values.
template <class V, class Op>
__device__ V block_reduce(V v, V* scratch, Op op, V identity) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warp_reduce(v, op);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  V total = identity;
  for (int w = 0; w < int(blockDim.x / 32); ++w) total = op(total, scratch[w]);
  __syncthreads();  // scratch may be reused by the next call
  return total;
}

template <class V>
__device__ __forceinline__ V warp_sum(V v) {
  return warp_reduce(v, SumOp{});
}

template <class V>
__device__ V block_sum(V v, V* scratch) {
  return block_reduce(v, scratch, SumOp{}, V(0));
}

}  // namespace emb::cuda
