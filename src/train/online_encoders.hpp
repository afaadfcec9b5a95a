// model.encoders = online (issue 34): the step computes each micro-batch's DreamZero inputs with
// DreamZero's frozen encoders (encoders/dreamzero: Wan VAE, umT5-XXL, CLIP ViT-H/14) on the run's
// Ops, from the raw frames and prompt ids the loader packed (PackedBatch::frames [B, T, V, H, W, 3]
// with T = 1 + 4·(F − 1) raw frames per clip, data/dreamzero_alignment.hpp; PackedBatch::prompt):
// forward only, no activations kept past it, no gradients. Per sample: its views tiled
// (data.view_tiling of data.view_tile), the VAE in upstream's causal chunks (frame 0, then 4)
// → video_x0 and the I2V y (video_cond) by the packer's patch rule (append_video_rows), CLIP of
// the first frame → clip, umT5 of the prompt → its context rows (the text_len padding zero).
// `embpack features --dreamzero` computes the same through the same code (DreamZeroEncoders,
// ViewTiler), so a run on its features sees these values rounded to the file's float16.
//
// The features go to the micro-batch's host arrays, which the model uploads like any loaded
// batch: the clip's latents are 8×8×4 times smaller than its frames, so the copy is small
// beside the encoders' forward.
#pragma once
#include <memory>

#include "batch/packed_batch.hpp"
#include "config/data_config.hpp"
#include "config/run_config.hpp"
#include "encoders/dreamzero/dreamzero_encoders.hpp"
#include "encoders/dreamzero/view_tiling.hpp"

namespace emb {

// The encoders' files of model.encoders_dir, their dimensions checked against the DiT's: the
// VAE's latent channels z = model.latent_channels, its I2V channels z + 4 = model.cond_channels,
// the tiled picture (data.view_tiling of data.view_tile) over its stride = model.latent_height ×
// latent_width, umT5's width = model.d_ctx, CLIP's rows and width = model.clip_tokens × d_clip.
// Throws emb::Error (exit 2) in one line naming the deck key or the file.
encoders::DreamZeroEncoderFiles online_encoder_files(const RunConfig& cfg);

// The bytes of the encoders' weights in `storage` (every rank holds them whole), from the
// folder's dimensions (the VAE's encoder half only, as the step loads it).
int64_t online_encoders_weight_bytes(const RunConfig& cfg, DType storage);

// The loader's prompts: umT5's ids of DreamZero's prompt (data.prompt_robot's template) for a
// task shown by a file's views, which must fit data.view_tiling (else emb::Error, exit 2).
VlPrompt online_encoders_prompt(const RunConfig& cfg);

class OnlineEncoders {
 public:
  // storage: the backend's dtype of the weights and activations (bf16 on CUDA with
  // model.precision = bf16, as DreamZero runs them; else fp32).
  OnlineEncoders(Ops& ops, const RunConfig& cfg, DType storage);

  // b's video_x0, video_cond, clip and context from its frames and prompts.
  void compute(PackedBatch& b);
  int64_t weight_bytes() const { return encoders_.weight_bytes(); }

 private:
  TokenConfig tokens_;
  encoders::DreamZeroEncoders encoders_;
  encoders::ViewTiling tiling_;
};

}  // namespace emb
