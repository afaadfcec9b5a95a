#include "encoders/wan_vae/causal_frames.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace emb::encoders {

CausalFrames::Slot& CausalFrames::slot(const FrameChunk& x, int capacity) {
  if (next_ == slots_.size()) slots_.push_back({kept_.make(capacity * int64_t(x.height) * x.width, x.x.cols), 0});
  return slots_[next_++];
}

FrameChunk CausalFrames::with_kept(const Slot& s, const FrameChunk& x) {
  if (s.count == 0) return x;
  const int64_t plane = int64_t(x.height) * x.width, kept_rows = s.count * plane;
  FrameChunk joined{scratch_.make(kept_rows + x.positions(), x.x.cols), s.count + x.frames, x.height, x.width};
  Ops& ops = scratch_.ops();
  ops.copy(s.frames.rows_range(0, kept_rows), joined.x.rows_range(0, kept_rows));
  ops.copy(x.x, joined.x.rows_range(kept_rows, x.positions()));
  return joined;
}

void CausalFrames::keep(Slot& s, const FrameChunk& from, int n) {
  const int64_t plane = int64_t(from.height) * from.width;
  scratch_.ops().copy(from.x.rows_range((from.frames - n) * plane, n * plane), s.frames.rows_range(0, n * plane));
  s.count = n;
}

FrameChunk CausalFrames::conv3(const FrameChunk& x, const View& weight, const View& bias) {
  Slot& s = slot(x, 2);
  const FrameChunk in = with_kept(s, x);
  ConvConfig c;
  c.frames = in.frames, c.height = x.height, c.width = x.width;
  c.kt = c.kh = c.kw = 3, c.pad_front = 2 - s.count;
  c.pad_top = c.pad_bottom = c.pad_left = c.pad_right = 1;
  // Co from the bias: the packed weight is one row.
  FrameChunk y{scratch_.make(x.positions(), bias.cols), x.frames, x.height, x.width};
  scratch_.ops().packed_conv3d_forward(in.x, weight, bias, y.x, c);
  keep(s, in, std::min(2, in.frames));
  return y;
}

FrameChunk CausalFrames::time_down(const FrameChunk& x, const View& weight, const View& bias) {
  Slot& s = slot(x, 1);
  const int64_t plane = int64_t(x.height) * x.width;
  const bool first = s.count == 0;
  // The first chunk: frame 0, then windows (0, 1, 2), (2, 3, 4), ...; later ones: windows over
  // [kept frame, chunk], which needs chunks of even length.
  EMB_ASSERT(first ? x.frames % 2 == 1 : x.frames % 2 == 0);
  const int out_frames = first ? 1 + (x.frames - 1) / 2 : x.frames / 2;
  FrameChunk y{scratch_.make(out_frames * plane, x.x.cols), out_frames, x.height, x.width};
  Ops& ops = scratch_.ops();
  if (first) ops.copy(x.x.rows_range(0, plane), y.x.rows_range(0, plane));
  const FrameChunk in = with_kept(s, x);
  if (in.frames >= 3) {
    ConvConfig c;
    c.frames = in.frames, c.height = x.height, c.width = x.width, c.kt = 3, c.st = 2;
    const int64_t skip = first ? plane : 0;
    ops.packed_conv3d_forward(in.x, weight, bias, y.x.rows_range(skip, y.positions() - skip), c);
  }
  keep(s, x, 1);
  return y;
}

}  // namespace emb::encoders
