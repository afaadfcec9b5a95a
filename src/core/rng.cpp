#include "core/rng.hpp"

#include "core/philox.hpp"

namespace emb {

Philox4 philox4x32(Philox4 c, uint64_t key) {
  const philox::Block out = philox::block(philox::Block{{c[0], c[1], c[2], c[3]}}, key);
  return {out.w[0], out.w[1], out.w[2], out.w[3]};
}

uint32_t CounterRng::bits(uint64_t i) const { return philox::word(key_, stream_, a_, b_, i); }

double CounterRng::uniform(uint64_t i) const { return (double(bits(i)) + 0.5) * (1.0 / 4294967296.0); }

double CounterRng::normal(uint64_t i) const {
  double u1 = uniform(2 * i), u2 = uniform(2 * i + 1);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

}  // namespace emb
