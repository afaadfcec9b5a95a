// The planner's cost of DreamZero's frozen encoders (src/encoders: the Wan VAE encoder, umT5-XXL,
// CLIP ViT-H/14's visual tower) per sample, beside the DiT's: embtrain trains on their features
// made offline (embpack features) while upstream's fine-tuning (RLinf's DreamZero SFT) runs them
// forward in every step on the raw clip, the instruction and the first frame, so published
// samples/s compare with DiT + encoders per sample (model.encoders = online).
//
// FLOPs (2 × multiply-adds, spec_dreamzero_encoders.md §7): the VAE's convolutions layer by layer
// over the clip's frames at each level (k3 causal convs, shortcuts, stride-2 resamples, temporal
// convs, the middle block's per-frame attention, head), counted on the one-pass form the chunked
// cache equals; the I2V conditioning y (Wan2.1 models with y channels) is one more VAE pass over
// the first frame and T − 1 zero frames. umT5: per text row 24 blocks of q/k/v/o and gated FFN
// GEMMs and attention over the text's rows (embtrain computes only the real rows; upstream pads
// every text to 512 and computes them all). CLIP: the patch GEMM and 31 blocks over 257 tokens.
// Timed at the hardware's bf16 GEMM and attention rates (DreamZero runs them in bf16), forward
// only (frozen: no activations kept).
#pragma once
#include <cstdint>

#include "encoders/clip/clip_dims.hpp"
#include "encoders/umt5/umt5_dims.hpp"
#include "config/model_config.hpp"
#include "encoders/wan_vae/vae_dims.hpp"
#include "plan/hardware.hpp"

namespace emb {

// What one sample feeds the encoders.
struct EncoderSample {
  encoders::VaeDims vae;
  int frames = 0, height = 0, width = 0;  // the clip the VAE encodes (T = 1 + 4n; H, W in pixels)
  bool i2v_condition = false;             // Wan2.1 I2V: the y pass over [first frame, T − 1 zeros]
  int64_t text_rows = 0;                  // umT5 rows computed per text
  bool clip_image = true;                 // CLIP features of the first frame
};

struct EncoderCost {
  double vae_flops = 0, vae_attention_flops = 0;    // all VAE passes (of them: the middle attention)
  double umt5_flops = 0, umt5_attention_flops = 0;  // the text's rows
  double clip_flops = 0, clip_attention_flops = 0;  // one image
  // Upstream's work for the same sample (RLinf runs DreamZero's action head): umT5 over every
  // text padded to text_len rows (all computed), and the I2V y pass, which DreamZero's action
  // head computes for the 5B too although its config does not feed it (spec §0.5).
  double umt5_padded_flops = 0, upstream_flops = 0, upstream_forward_s = 0;
  double forward_s = 0;      // per sample on the hardware, bf16
  double weight_bytes = 0;   // the three encoders' bf16 weights (umT5's embedding table included)
  // The largest activations alive at once in one sample's bf16 forward: the VAE's widest level in
  // upstream's chunks (4 frames and 2 kept, input, output and the normalised copy), or umT5's or
  // CLIP's widest layer.
  double forward_bytes = 0;
  double flops() const { return vae_flops + umt5_flops + clip_flops; }
  double attention_flops() const { return vae_attention_flops + umt5_attention_flops + clip_attention_flops; }
};

// A wan model's sample as the released encoders see it: the 48-channel VAE38 for 48 latent
// channels (Wan2.2 TI2V-5B), else Wan2.1's, with the I2V y pass when the DiT reads more channels
// than it predicts (Wan2.1 I2V-14B: 16 + 4 mask + 16); 1 + 4·(F − 1) frames of video_height ×
// video_width pixels (0: the latent's size times the VAE's factor); umT5 rows: the instruction and
// its </s>.
EncoderSample dreamzero_encoder_sample(const ModelConfig& m, int video_height, int video_width,
                                       int64_t instruction_tokens);

// The VAE encoder's FLOPs for one clip of T frames at H × W (all ops; attention separately).
struct VaeFlops {
  double total = 0, attention = 0;
};
VaeFlops vae_encoder_flops(const encoders::VaeDims& d, int T, int H, int W);

EncoderCost dreamzero_encoder_cost(const Hardware& hw, const EncoderSample& s, const encoders::Umt5Dims& t5 = {},
                                   const encoders::ClipDims& clip = {});

}  // namespace emb
