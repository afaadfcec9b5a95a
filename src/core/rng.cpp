#include "core/rng.hpp"

namespace emb {
namespace {
constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;

inline void mulhilo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
  uint64_t p = uint64_t(a) * b;
  hi = uint32_t(p >> 32);
  lo = uint32_t(p);
}
}  // namespace

Philox4 philox4x32(Philox4 c, uint64_t key) {
  uint32_t k0 = uint32_t(key), k1 = uint32_t(key >> 32);
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, lo0, hi1, lo1;
    mulhilo(kMul0, c[0], hi0, lo0);
    mulhilo(kMul1, c[2], hi1, lo1);
    c = {hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0};
    k0 += kWeyl0;
    k1 += kWeyl1;
  }
  return c;
}

uint32_t CounterRng::bits(uint64_t i) const {
  // Counter layout: [stream | i_hi, i_lo, a, b] mixed so each (stream, a, b) has 2^34 words.
  Philox4 counter = {uint32_t(i >> 2), stream_ ^ uint32_t(i >> 34) << 8, uint32_t(a_) ^ uint32_t(b_ >> 32) * 0x85EBCA6Bu,
                     uint32_t(b_) ^ uint32_t(a_ >> 32) * 0xC2B2AE35u};
  return philox4x32(counter, key_)[i & 3];
}

double CounterRng::uniform(uint64_t i) const { return (double(bits(i)) + 0.5) * (1.0 / 4294967296.0); }

double CounterRng::normal(uint64_t i) const {
  double u1 = uniform(2 * i), u2 = uniform(2 * i + 1);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

}  // namespace emb
