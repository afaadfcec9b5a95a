// Column sums out[c] += Σ_i value(i, c) (bias and norm-weight gradients) in two levels, so that
// a few hundred columns still fill the GPU: the rows are split into chunks, and a grid of
// column tiles × row chunks sums each tile's chunk in double (V columns per thread, 16-byte
// loads where the value allows them, consecutive threads on consecutive vectors of a row) into
// per-chunk partials in scratch; a second pass adds the chunks of each column in chunk order.
// Every sum runs in a fixed order that depends only on N, C and the vector width, so results
// are bit-reproducible run to run; no atomics. One chunk (a short input) skips the scratch and
// the second pass.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/storage.cuh"
#include "kernels/cuda/vector_access.cuh"

namespace emb::cuda {

// A block: 32 threads across the tile's vectors (a warp reads 32·V consecutive columns of a row)
// × kColumnSumThreadRows rows; each thread issues kColumnSumUnroll rows' loads before adding them.
constexpr int kColumnSumTileVectors = 32, kColumnSumThreadRows = 8, kColumnSumUnroll = 4;
// Chunks are cut so that tiles × chunks ≈ this many blocks: 4 per SM of an H100 or H200 (132
// SMs; 2–5 fit an SM by registers), each with 16–48 KB of reads in flight per step.
constexpr int kColumnSumBlocks = 528;
// A chunk holds at least one unrolled step of every thread row.
constexpr int kColumnSumMinChunkRows = kColumnSumThreadRows * kColumnSumUnroll;
// The widest vector a value may take (bf16×8).
constexpr int kColumnSumMaxWidth = 8;
// Scratch a column sum needs (the partials of at most kColumnSumBlocks tiles of 32·8 columns);
// Blas::column_sum_scratch provides it per stream.
constexpr size_t kColumnSumScratchBytes =
    size_t(kColumnSumBlocks) * kColumnSumTileVectors * kColumnSumMaxWidth * sizeof(double);

// How an [N, C] sum is cut: tiles of 32·V columns, chunks of chunk_rows rows (the last one
// shorter).
struct ColumnSumSplit {
  int tiles, chunks;
  int64_t chunk_rows;
};

template <int V>
ColumnSumSplit column_sum_split(int64_t N, int C) {
  const int tiles = int((int64_t(C) + kColumnSumTileVectors * V - 1) / (kColumnSumTileVectors * V));
  const int64_t chunks = std::clamp<int64_t>((N + kColumnSumMinChunkRows - 1) / kColumnSumMinChunkRows, 1,
                                             std::max(1, kColumnSumBlocks / tiles));
  const int64_t chunk_rows = std::max<int64_t>(1, (N + chunks - 1) / chunks);
  return {tiles, int(std::max<int64_t>(1, (N + chunk_rows - 1) / chunk_rows)), chunk_rows};
}

// Block (tile, chunk): Σ over the chunk's rows of its tile's columns, added to out (one chunk) or
// written to partials[chunk·C + c].
template <int V, class G, class Value>
__global__ void __launch_bounds__(kColumnSumTileVectors* kColumnSumThreadRows)
    column_sum_chunk_kernel(int64_t N, int C, int64_t chunk_rows, Value value, G* out, double* partials) {
  constexpr int kTileColumns = kColumnSumTileVectors * V;
  __shared__ double rows_partial[kColumnSumThreadRows][kTileColumns];
  const int tile_column = blockIdx.x * kTileColumns;
  const int c = tile_column + int(threadIdx.x) * V;
  const int64_t first = int64_t(blockIdx.y) * chunk_rows;
  const int64_t end = first + chunk_rows < N ? first + chunk_rows : N;
  double acc[V] = {};
  if (c < C)
    for (int64_t i = first + threadIdx.y; i < end; i += kColumnSumThreadRows * kColumnSumUnroll) {
      float v[kColumnSumUnroll][V] = {};
#pragma unroll
      for (int u = 0; u < kColumnSumUnroll; ++u)
        if (i + u * kColumnSumThreadRows < end) value(i + u * kColumnSumThreadRows, c, v[u]);
#pragma unroll
      for (int u = 0; u < kColumnSumUnroll; ++u)
        if (i + u * kColumnSumThreadRows < end)
#pragma unroll
          for (int j = 0; j < V; ++j) acc[j] += v[u][j];
    }
#pragma unroll
  for (int j = 0; j < V; ++j) rows_partial[threadIdx.y][threadIdx.x * V + j] = acc[j];
  __syncthreads();
  // The thread rows' sums of a column in row order, one column per thread.
  const int t = int(threadIdx.y * blockDim.x + threadIdx.x);
  for (int o = t; o < kTileColumns; o += kColumnSumTileVectors * kColumnSumThreadRows) {
    if (tile_column + o >= C) break;
    double sum = 0.0;
    for (int r = 0; r < kColumnSumThreadRows; ++r) sum += rows_partial[r][o];
    if (partials)
      partials[int64_t(blockIdx.y) * C + tile_column + o] = sum;
    else
      add_to(out + tile_column + o, float(sum));
  }
}

// out[c] += Σ_k partials[k·C + c] in chunk order: 32 columns per block, each thread row sums a
// strided set of chunks, the rows are then added in a fixed order.
constexpr int kChunkSumRows = 16;

template <class G>
__global__ void column_sum_chunks_kernel(int chunks, int C, const double* partials, G* out) {
  __shared__ double rows_partial[kChunkSumRows][33];
  const int c = blockIdx.x * 32 + threadIdx.x;
  double acc = 0.0;
  if (c < C)
    for (int k = threadIdx.y; k < chunks; k += kChunkSumRows) acc += partials[int64_t(k) * C + c];
  rows_partial[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0 && c < C) {
    double sum = 0.0;
    for (int r = 0; r < kChunkSumRows; ++r) sum += rows_partial[r][threadIdx.x];
    add_to(out + c, float(sum));
  }
}

template <int V, class G, class Value>
void launch_column_sum(int64_t N, int C, G* out, const Value& value, void* scratch, cudaStream_t stream) {
  const ColumnSumSplit split = column_sum_split<V>(N, C);
  double* partials = split.chunks > 1 ? static_cast<double*>(scratch) : nullptr;
  EMB_CHECK(split.chunks == 1 || size_t(split.chunks) * C * sizeof(double) <= kColumnSumScratchBytes,
            "column_sum: partials exceed the scratch");
  EMB_CHECK(split.chunks == 1 || scratch != nullptr,
            "column_sum: ", N, " rows need ", split.chunks,
            " chunks and so the scratch (Blas::column_sum_scratch), but none was passed");
  EMB_LAUNCH((column_sum_chunk_kernel<V, G, Value>), dim3(split.tiles, split.chunks),
             dim3(kColumnSumTileVectors, kColumnSumThreadRows), 0, stream)(N, C, split.chunk_rows, value, out,
                                                                            partials);
  check_launch("column_sum");
  if (!partials) return;
  EMB_LAUNCH(column_sum_chunks_kernel<G>, (C + 31) / 32, dim3(32, kChunkSumRows), 0, stream)(split.chunks, C,
                                                                                           partials, out);
  check_launch("column_sum");
}

// Value: value(i, c, v) sets v[j] = value(i, c + j) for j < V (V = Value::kWidth when
// value.vectorizable(C), else 1); scratch: kColumnSumScratchBytes of device memory that the
// sum's stream orders (Blas::column_sum_scratch).
template <class G, class Value>
void column_sum(int64_t N, int C, G* out, const Value& value, void* scratch, cudaStream_t stream) {
  static_assert(Value::kWidth <= kColumnSumMaxWidth, "column_sum: vectors wider than the scratch allows");
  if (C <= 0) return;
  if (value.vectorizable(C))
    launch_column_sum<Value::kWidth>(N, C, out, value, scratch, stream);
  else
    launch_column_sum<1>(N, C, out, value, scratch, stream);
}

// value(i, c) = m[i·ld + c]: the plain column sum of a row-major matrix.
template <class T>
struct MatrixEntry {
  static constexpr int kWidth = kVectorWidth<T>;
  const T* m;
  int64_t ld;
  bool vectorizable(int C) const { return rows_vectorizable<kWidth>(C, {ld}, {m}); }
  template <int V>
  __device__ void operator()(int64_t i, int c, float (&v)[V]) const {
    load_vector<V>(m + i * ld + c, v);
  }
};

}  // namespace emb::cuda
