// pixel_unshuffle_forward's definition (UnshuffleConfig, kernels/op_types.hpp) in double, written
// out here from the definition rather than from the kernels' unshuffle_source and
// unshuffle_input_row: the CPU and CUDA kernel tests check against it.
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/op_types.hpp"

namespace emb::test {

// x [batch·T·H·W, C] as stored (any element type that converts to double) -> y [cells, C·F/group]
// with F = ft·fs², y's cells (clip, t, h, w) in that order.
template <class Stored>
std::vector<double> unshuffle_reference(const std::vector<Stored>& x, int64_t C, const UnshuffleConfig& u) {
  const int To = u.out_frames(), Ho = u.height / u.fs, Wo = u.width / u.fs;
  const int64_t F = int64_t(u.ft) * u.fs * u.fs, cols = C * F / u.group;
  std::vector<double> y(size_t(int64_t(u.batch) * To * Ho * Wo * cols));
  for (int n = 0; n < u.batch; ++n)
    for (int t = 0; t < To; ++t)
      for (int h = 0; h < Ho; ++h)
        for (int w = 0; w < Wo; ++w)
          for (int64_t c = 0; c < C; ++c)
            for (int dt = 0; dt < u.ft; ++dt)
              for (int dh = 0; dh < u.fs; ++dh)
                for (int dw = 0; dw < u.fs; ++dw) {
                  // The order written out: (dt, dh, dw) rows first; Wan2.2's patchify (dw, dh).
                  const int64_t k = dt * u.fs * u.fs + (u.columns_first ? dw * u.fs + dh : dh * u.fs + dw);
                  const int ti = t * u.ft + dt - u.pad_front;  // before frame 0: a zero frame
                  const double v =
                      ti < 0 ? 0.0
                             : x[size_t((((int64_t(n) * u.frames + ti) * u.height + h * u.fs + dh) * u.width + w * u.fs +
                                         dw) * C + c)];
                  y[size_t((((int64_t(n) * To + t) * Ho + h) * Wo + w) * cols + (c * F + k) / u.group)] += v / u.group;
                }
  return y;
}

}  // namespace emb::test
