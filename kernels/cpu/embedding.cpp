#include "kernels/cpu/embedding.hpp"

#include <cmath>
#include <vector>

#include "core/error.hpp"

namespace emb::cpu {

// Angles reach t·f ≈ 1000 rad, so they are formed and reduced in double before the cast.
void sinus_embedding(const float* t, int t_cols, float* out, int64_t rows, int n) {
  EMB_CHECK(n > 0 && n % 2 == 0, "sinus_embedding: width ", n, " must be positive and even");
  const int half = n / 2;
  std::vector<double> freq(half);
  for (int k = 0; k < half; ++k) freq[k] = std::exp(-std::log(10000.0) * k / half);
#pragma omp parallel for if (rows * n >= (1 << 14))
  for (int64_t i = 0; i < rows; ++i) {
    float* o = out + i * n;
    for (int k = 0; k < half; ++k) {
      const double angle = (double(t[i * t_cols]) + (t_cols == 2 ? double(t[i * t_cols + 1]) : 0.0)) * freq[k];
      o[k] = static_cast<float>(std::cos(angle));
      o[half + k] = static_cast<float>(std::sin(angle));
    }
  }
}

}  // namespace emb::cpu
