// Column sums out[c] += Σ_i value(i, c) (bias and norm-weight gradients). One block per 32
// columns; each of kRows thread rows sums a strided set of rows in double, then the rows are
// added in a fixed order: deterministic, no atomics, no scratch. For very tall inputs a
// two-level split over rows would use more SMs (noted in README).
#pragma once
#include <cuda_runtime.h>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/storage.cuh"

namespace emb::cuda {

constexpr int kColumnSumRows = 16;

template <class T, class Value>
__global__ void column_sum_kernel(int64_t N, int C, T* out, Value value) {
  __shared__ double partial[kColumnSumRows][33];
  const int c = blockIdx.x * 32 + threadIdx.x;
  double acc = 0.0;
  if (c < C)
    for (int64_t i = threadIdx.y; i < N; i += kColumnSumRows) acc += value(i, c);
  partial[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0 && c < C) {
    double sum = 0.0;
    for (int r = 0; r < kColumnSumRows; ++r) sum += partial[r][threadIdx.x];
    add_to(out + c, float(sum));
  }
}

template <class T, class Value>
void column_sum(int64_t N, int C, T* out, Value value, cudaStream_t stream) {
  if (C <= 0) return;
  EMB_LAUNCH(column_sum_kernel, (C + 31) / 32, dim3(32, kColumnSumRows), 0, stream)(N, C, out, value);
  check_launch("column_sum");
}

// value(i, c) = m[i·ld + c]: the plain column sum of a row-major matrix.
template <class T>
struct MatrixEntry {
  const T* m;
  int64_t ld;
  __device__ float operator()(int64_t i, int c) const { return to_f32(m[i * ld + c]); }
};

}  // namespace emb::cuda
