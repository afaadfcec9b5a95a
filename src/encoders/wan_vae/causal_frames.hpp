// The Wan VAE's causal layers over a clip encoded in chunks of frames (spec §1.2-1.3): every k3
// causal conv keeps the last two frames of its input and puts them in front of the next chunk's
// (zeros remain only before frame 0), every temporal downsample keeps its last input frame and
// applies its stride-2 kernel to [kept frame, chunk] (the first chunk passes frame 0 through).
// This is upstream's feature cache (vae.py 17-36, 143-159), and with one chunk holding the whole
// clip it is the plain causal pass: both give the same latents (the reference checks 1e-15).
// Chunks bound the memory (activations of a chunk, not of the clip) at no extra arithmetic.
#pragma once
#include <vector>

#include "encoders/common/scratch_pool.hpp"

namespace emb::encoders {

// A chunk of frames of one clip in backend memory: x [frames·height·width, C], channels last.
struct FrameChunk {
  View x;
  int frames = 0, height = 0, width = 0;
  int64_t positions() const { return int64_t(frames) * height * width; }
};

class CausalFrames {
 public:
  // kept: where the kept frames live for the whole clip; scratch: the chunk's buffers.
  CausalFrames(ScratchPool& kept, ScratchPool& scratch) : kept_(kept), scratch_(scratch) {}

  // Before each chunk: the layers are called in the same order in every chunk, slot by slot.
  void start_chunk() { next_ = 0; }
  // Causal Conv3d 3×3×3 (spatial padding 1): weight the packed form (Ops::pack_conv3d, kt 3) of
  // [27·Ci, Co], bias [1, Co].
  FrameChunk conv3(const FrameChunk& x, const View& weight, const View& bias);
  // The temporal downsample (3, 1, 1) stride (2, 1, 1): frame 0 of the clip passes through
  // unchanged, later latent frames are conv(x[2k − 2], x[2k − 1], x[2k]). weight: packed [3·C, C].
  FrameChunk time_down(const FrameChunk& x, const View& weight, const View& bias);

 private:
  struct Slot {
    View frames;  // up to 2 frames of [height·width, C]
    int count = 0;
  };
  Slot& slot(const FrameChunk& x, int capacity);
  // [kept frames | x] in scratch (x itself when nothing is kept).
  FrameChunk with_kept(const Slot& s, const FrameChunk& x);
  // The slot keeps the last `n` frames of `from`.
  void keep(Slot& s, const FrameChunk& from, int n);

  ScratchPool& kept_;
  ScratchPool& scratch_;
  std::vector<Slot> slots_;
  size_t next_ = 0;
};

}  // namespace emb::encoders
