// The Wan video VAE's encoder in embtrain (UPSTREAM.md "DreamZero's frozen encoders", spec
// §1-2): Wan2.1's 16-channel VAE and Wan2.2's 48-channel VAE38, from the released state dict,
// forward only, on any Ops backend. A clip [T, H, W, 3] in [−1, 1] (T = 1 + 4n, H and W
// multiples of 8, or 16 for VAE38) becomes the normalised latents [1 + n, H/f, W/f, z] the DiT
// trains on, channels last; the I2V conditioning y is [mask (4) | VAE(first frame, T − 1 zero
// frames)].
//
// The clip goes through in chunks: frame 0 alone, then `chunk_frames` frames at a time (4 as
// upstream; any multiple of 4), each causal layer keeping its history between chunks
// (causal_frames.hpp), or all T frames in one pass (chunk_frames = 0): the latents are the same
// either way. Memory: one pass holds the activations of the whole clip (at 33 × 352 × 640, 96
// channels: 2.9 GB fp32 per tensor, a few at a time), a chunk of 4 those of 6 frames.
#pragma once
#include <memory>
#include <vector>

#include "encoders/common/backend_tensors.hpp"
#include "encoders/common/scratch_pool.hpp"
#include "encoders/wan_vae/vae_dims.hpp"
#include "encoders/wan_vae/vae_weights.hpp"
#include "weights/weight_source.hpp"

namespace emb::encoders {

class WanVaeEncoder {
 public:
  // storage: the backend's data dtype (fp32; bf16 on CUDA, as DreamZero runs the VAE). Throws
  // emb::Error (exit 2) naming the file and tensor when the checkpoint is not a Wan VAE's.
  WanVaeEncoder(Ops& ops, const WeightSource& source, DType storage);

  const VaeDims& dims() const { return dims_; }
  DType storage() const { return weights_store_->dtype(); }
  int64_t weight_bytes() const { return weights_store_->bytes(); }

  // One line (emb::Error, exit 2) unless the VAE can encode a clip of T frames of H × W: T = 1 +
  // 4n (the causal chunking: frame 0, then groups of 4), H and W multiples of spatial_factor.
  // `what` names the clip in the message.
  void check_clip(int T, int H, int W, const std::string& what) const;
  int latent_frames(int T) const { return 1 + (T - 1) / dims_.temporal_factor(); }

  // video [T·H·W, 3] (backend memory, the storage dtype, rows in (frame, row, column) order) →
  // latents [latent_frames·h·w, z] (backend memory, written). chunk_frames: 0 = one pass, else a
  // positive multiple of 4.
  void encode(const View& video, int T, int H, int W, const View& latents, int chunk_frames = 4);
  // The same from host fp32 [T, H, W, 3] to host fp32 [latent_frames, h, w, z].
  std::vector<float> encode(const float* video, int T, int H, int W, int chunk_frames = 4);
  // The I2V conditioning y of a first frame [H, W, 3] (host fp32) for a clip of T frames: host
  // fp32 [latent_frames, h, w, 4 + z], channels [mask | latents], the mask 1 on latent frame 0.
  std::vector<float> i2v_condition(const float* first_frame, int T, int H, int W, int chunk_frames = 4);

 private:
  Ops& ops_;
  VaeDims dims_;
  std::unique_ptr<BackendTensors> weights_store_;
  VaeWeights weights_;
  ScratchPool kept_, scratch_;
};

}  // namespace emb::encoders
