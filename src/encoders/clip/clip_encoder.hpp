// CLIP ViT-H/14's visual tower in embtrain: the image context of DreamZero's DiT (UPSTREAM.md
// "DreamZero's frozen encoders", spec §4), from the released state dict (the ViT part of
// models_clip_open-clip-xlm-roberta-large-vit-huge-14.pth, or its safetensors twin), forward only,
// on any Ops backend:
//   frames [N, H, W, 3] in [−1, 1] → bicubic 224 × 224 on the host (squashed, not clamped) → x·0.5 + 0.5 →
//   (x − mean)/std (OpenAI's) → 14 × 14 patches (no bias) → [cls; patches] + positions →
//   pre_norm LN → blocks 0 .. 30 (pre-LN, 16 heads of 80, exact GELU, LN eps 1e-5) → [N, 257, 1280]
// The normalisation is folded into the patch projection (a weight scale per input channel and a
// bias on the patch tokens): the resize is linear and nothing is clamped, so the values are the
// same up to rounding.
#pragma once
#include <memory>
#include <vector>

#include "encoders/clip/clip_dims.hpp"
#include "encoders/common/backend_tensors.hpp"
#include "encoders/common/pre_norm_block.hpp"
#include "encoders/common/scratch_pool.hpp"
#include "weights/weight_source.hpp"

namespace emb::encoders {

// OpenAI's CLIP normalisation (clip.py 453-467).
constexpr float kClipMean[3] = {0.48145466f, 0.4578275f, 0.40821073f};
constexpr float kClipStd[3] = {0.26862954f, 0.26130258f, 0.27577711f};

class ClipVisionEncoder {
 public:
  // storage: fp32, or bf16 on a backend with bf16 data (Wan runs CLIP under autocast). Throws
  // emb::Error (exit 2) naming the file and the tensor missing or misshaped.
  ClipVisionEncoder(Ops& ops, const WeightSource& source, DType storage);

  const ClipDims& dims() const { return dims_; }
  int64_t weight_bytes() const { return weights_store_->bytes(); }

  // pixels [N·S·S, 3] (backend memory, the storage dtype): N frames already resized to the
  // tower's S × S (resize_to_input) → out [N·tokens, dim] (written).
  void features(const View& pixels, int N, const View& out);
  // Host fp32 frames [N, H, W, 3] → host fp32 [N, tokens, dim]: resized on the host, then the above.
  std::vector<float> features(const float* frames, int N, int H, int W);
  // Host fp32 frames [N, H, W, 3] → [N, S, S, 3], bicubic (the loader's preprocessing).
  std::vector<float> resize_to_input(const float* frames, int N, int H, int W) const;

 private:
  Ops& ops_;
  ClipDims dims_;
  std::unique_ptr<BackendTensors> weights_store_;
  View patch_w_;  // [3·p·p, dim]: the patch conv over (channel, y, x), the normalisation folded in
  View prefix_;   // [tokens, dim]: cls + position 0; position p + the folded bias for the patches
  View pre_norm_w_, pre_norm_b_;
  std::vector<PreNormBlockWeights> blocks_;
  ScratchPool scratch_;
};

}  // namespace emb::encoders
