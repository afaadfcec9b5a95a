// Column sums over rows (bias and norm-weight gradients): out[c] += Σ_i value(i, c).
// Each thread sums a contiguous band of rows in double, the bands are added in thread order,
// so the result is deterministic for a given thread count and exact enough for long batches.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/cpu/parallel_for.hpp"

namespace emb::cpu {

template <class Value>
void accumulate_column_sums(int64_t N, int C, float* out, Value value) {
  const int max_threads = max_team(N * C >= (int64_t{1} << 15));
  // Kept per thread across calls: the bias gradients of every linear call it, and a fresh
  // vector each time was a heap allocation per call.
  static thread_local std::vector<double> partial;
  partial.assign(static_cast<size_t>(max_threads) * C, 0.0);
  // The calling thread's vector: inside the region `partial` would name each worker's own, empty one.
  double* const partials = partial.data();
  const int used = for_each_thread(max_threads, [&](int t, int n_threads) {
    double* acc = partials + static_cast<size_t>(t) * C;
    for (int64_t i = N * t / n_threads; i < N * (t + 1) / n_threads; ++i)
      for (int c = 0; c < C; ++c) acc[c] += value(i, c);
  });
  for (int c = 0; c < C; ++c) {
    double sum = 0.0;
    for (int t = 0; t < used; ++t) sum += partials[static_cast<size_t>(t) * C + c];
    out[c] = static_cast<float>(out[c] + sum);
  }
}

}  // namespace emb::cpu
