// pixel_unshuffle_forward's gather on every backend: which input row an output cell reads for
// one unshuffled channel (UnshuffleConfig and unshuffle_source in kernels/op_types.hpp).
#pragma once
#include <cstdint>

#include "kernels/op_types.hpp"

namespace emb {

// The input row that output cell `cell` (of batch·To·(H/fs)·(W/fs), clip by clip, w fastest;
// To = u.out_frames()) reads for the unshuffled channel whose source is `s`; -1 for a zero frame
// in front (pad_front).
EMB_HOST_DEVICE inline int64_t unshuffle_input_row(const UnshuffleConfig& u, int To, int64_t cell,
                                                   const UnshuffleSource& s) {
  const int Ho = u.height / u.fs, Wo = u.width / u.fs;
  const int64_t clip = cell / (int64_t(To) * Ho * Wo);
  const int t = int(cell / (int64_t(Ho) * Wo) % To), h = int(cell / Wo % Ho), w = int(cell % Wo);
  const int ti = t * u.ft + s.dt - u.pad_front;
  if (ti < 0) return -1;
  return ((clip * u.frames + ti) * u.height + h * u.fs + s.dh) * u.width + w * u.fs + s.dw;
}

}  // namespace emb
