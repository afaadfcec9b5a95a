#include "core/rng.hpp"

#include "core/philox.hpp"

namespace emb {

Philox4 philox4x32(Philox4 c, uint64_t key) {
  const philox::Block out = philox::block(philox::Block{{c[0], c[1], c[2], c[3]}}, key);
  return {out.w[0], out.w[1], out.w[2], out.w[3]};
}

uint32_t CounterRng::bits(uint64_t i) const { return philox::word(key_, stream_, a_, b_, i); }

namespace {

double word_uniform(uint32_t word) { return (double(word) + 0.5) * (1.0 / 4294967296.0); }

double box_muller(uint32_t w1, uint32_t w2) {
  return std::sqrt(-2.0 * std::log(word_uniform(w1))) * std::cos(6.283185307179586 * word_uniform(w2));
}

}  // namespace

double CounterRng::uniform(uint64_t i) const { return word_uniform(bits(i)); }

double CounterRng::normal(uint64_t i) const { return box_muller(bits(2 * i), bits(2 * i + 1)); }

void CounterRng::normals(uint64_t first, int64_t n, float* out) const {
  int64_t k = 0;
  if (n > 0 && first % 2 == 1) out[k++] = float(normal(first));  // the second half of its block
  for (; k + 1 < n; k += 2) {  // draw first + k is even: words 2(first + k) .. +3 are one block
    const philox::Block w = philox::block(philox::counter(stream_, a_, b_, 2 * (first + uint64_t(k))), key_);
    out[k] = float(box_muller(w.w[0], w.w[1]));
    out[k + 1] = float(box_muller(w.w[2], w.w[3]));
  }
  if (k < n) out[k] = float(normal(first + uint64_t(k)));
}

}  // namespace emb
