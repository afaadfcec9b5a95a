// Counter-based random numbers (Philox4x32-10, Salmon et al. 2011). A draw is a pure
// function of (seed, stream, substream, index), so results never depend on the rank count,
// the packing or the order in which samples are visited: the flow-matching noise of
// sample s at step t is the same whether it is computed on rank 0 of 1 or rank 3 of 4.
#pragma once
#include <array>
#include <cmath>
#include <cstdint>

namespace emb {

using Philox4 = std::array<uint32_t, 4>;

// One Philox4x32-10 block: 4 random 32-bit words for a 128-bit counter and a 64-bit key
// (core/philox.hpp, which CUDA kernels compile too).
Philox4 philox4x32(Philox4 counter, uint64_t key);

// Streams used by the trainer, so that unrelated draws never share counters.
// Dropout keep-masks (kernels/dropout_keep.hpp) use `dropout`; embpack's vl augmentation `augment`.
enum class RngStream : uint32_t {
  init = 1,
  flow_time = 2,
  flow_noise = 3,
  sampler = 4,
  synth = 5,
  test = 6,
  dropout = 7,
  augment = 8
};

class CounterRng {
 public:
  // `stream` names the purpose; `a` and `b` are e.g. (step, sample) or (param index, 0).
  CounterRng(uint64_t seed, RngStream stream, uint64_t a, uint64_t b = 0)
      : key_(seed), stream_(uint32_t(stream)), a_(a), b_(b) {}

  uint32_t bits(uint64_t i) const;   // the i-th 32-bit word
  double uniform(uint64_t i) const;  // (0, 1), never 0 or 1
  double normal(uint64_t i) const;   // N(0, 1) by Box-Muller on words 2i, 2i+1
  // out[k] = float(normal(first + k)) for k < n. Draws 2j and 2j + 1 take the four words of one
  // Philox block, which normal() computes twice for each: a run of draws costs half the blocks.
  void normals(uint64_t first, int64_t n, float* out) const;
  // Beta(alpha, 1) by inversion: U^(1/alpha).
  double beta_alpha_1(uint64_t i, double alpha) const { return std::pow(uniform(i), 1.0 / alpha); }

 private:
  uint64_t key_;
  uint32_t stream_;
  uint64_t a_, b_;
};

}  // namespace emb
