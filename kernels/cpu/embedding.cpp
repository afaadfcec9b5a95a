#include "kernels/cpu/embedding.hpp"

#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#include "kernels/cpu/op_entry.hpp"
#include "kernels/cpu/parallel_for.hpp"

namespace emb::cpu {

// Angles reach t·f ≈ 1000 rad, so they are formed and reduced in double before the cast.
void sinus_embedding(const float* t, int t_cols, float* out, int64_t rows, int n, bool cos_first, int freq_shift) {
  EMB_CHECK(n > 0 && n % 2 == 0 && freq_shift >= 0 && freq_shift < n / 2, "sinus_embedding: width ", n,
            " must be positive and even, the frequency shift ", freq_shift, " in [0, width / 2)");
  const int half = n / 2;
  std::vector<double> freq(half);
  for (int k = 0; k < half; ++k) freq[k] = std::exp(-std::log(10000.0) * k / (half - freq_shift));
  const int cos_at = cos_first ? 0 : half, sin_at = cos_first ? half : 0;
  parallel_for(rows, rows * n >= (1 << 14), [&](int64_t i) {
    float* o = out + i * n;
    for (int k = 0; k < half; ++k) {
      const double angle = (double(t[i * t_cols]) + (t_cols == 2 ? double(t[i * t_cols + 1]) : 0.0)) * freq[k];
      o[cos_at + k] = static_cast<float>(std::cos(angle));
      o[sin_at + k] = static_cast<float>(std::sin(angle));
    }
  });
}

}  // namespace emb::cpu

// ---- CpuOps entries (kernels/ops.hpp) ----

namespace emb {

void CpuOps::sinus_embedding(const View& t, const View& out, const SinusConfig& cfg) {
  fp32_contiguous(check_sinus_embedding(t, out, cfg));
  cpu::sinus_embedding(cf(t), int(t.cols), f(out), out.rows, int(out.cols), cfg.cos_first, cfg.freq_shift);
}

}  // namespace emb
