// The dropout keep rule (MODEL.md "Dropout") that every backend and the parity dump evaluate
// the same way: element e = token·cols + c of a site is kept iff the Philox word
//   CounterRng(seed, RngStream::dropout, step, sample_id).bits(site·2³² + e)
// is at least floor(p·2³²) (so P(keep) = 1 − p up to 2⁻³²). Host and CUDA code compile it
// (core/philox.hpp); four consecutive elements whose first index is a multiple of 4 share one
// Philox block, which the kernels exploit.
#pragma once
#include <cmath>
#include <cstdint>

#include "core/philox.hpp"
#include "core/rng.hpp"
#include "kernels/op_types.hpp"

namespace emb {

// Elements per site and token are indexed by 32 bits: token·cols + c < 2³².
constexpr uint64_t kDropoutElements = uint64_t(1) << 32;

// The word below which an element is dropped; host only (the ops compute it once per call).
inline uint32_t dropout_threshold(float p) {
  const double t = std::floor(double(p) * 4294967296.0);
  return t >= 4294967295.0 ? 4294967295u : uint32_t(t);
}

// 1/(1 − p), the scale of a kept element.
inline float dropout_scale(float p) { return float(1.0 / (1.0 - double(p))); }

// The Philox block holding element `element` of the site (its four words are elements
// element & ~3 .. element | 3).
EMB_PHILOX_HD inline philox::Block dropout_block(const DropoutConfig& cfg, int64_t sample_id, uint64_t element) {
  const uint64_t i = (uint64_t(cfg.site) << 32) | element;
  return philox::block(philox::counter(uint32_t(RngStream::dropout), uint64_t(cfg.step), uint64_t(sample_id), i),
                       cfg.seed);
}

// Whether element `element` (token·cols + c) of sample `sample_id` is kept at this site.
EMB_PHILOX_HD inline bool dropout_keep(const DropoutConfig& cfg, uint32_t threshold, int64_t sample_id,
                                       uint64_t element) {
  return dropout_block(cfg, sample_id, element).w[element & 3] >= threshold;
}

}  // namespace emb
