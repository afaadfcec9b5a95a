// model.backbone = online (issue 33): the step computes each micro-batch's gr00t vl features with
// GR00T-N1.5's frozen Eagle 2.5 backbone (encoders/eagle) on the run's Ops, from the frames and
// prompt ids the loader packed (PackedBatch::frames, ::prompt): forward only, no activations
// kept past it, no gradients. The features stay in the backend's memory: the backbone's rows are
// copied into the micro-batch's context buffer there, which the model reads
// (PackedBatch::backend_context); only the frames' patch rows and the ids go to the backend.
// In training the frames go through GR00T's random crop 0.95 and colour jitter, one draw per
// sample from (run.seed, sample id, step): the sample id is the epoch-order position the
// sampler restores on resume, so a resumed run draws what the uninterrupted one did.
// model.backbone_augment = off, and evaluation, take the centre crop.
//
// The backbone folder is model.backbone_dir: a GR00T checkpoint (backbone.eagle_model.* tensors,
// config.json) with its Eagle folder eagle2_hg_model/ (config.json and the Qwen tokenizer files),
// as `embpack features --backbone` reads it.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "batch/packed_batch.hpp"
#include "config/model_config.hpp"
#include "data/packed_dataset.hpp"
#include "encoders/common/scratch_pool.hpp"
#include "encoders/eagle/eagle_backbone.hpp"
#include "train/context_buffers.hpp"

namespace emb {

// The Eagle folder of model.backbone_dir.
std::string online_eagle_folder(const ModelConfig& mc);

// The backbone's dimensions, checked against the head: its width must be model.d_ctx (the
// head's backbone_embedding_dim). Throws emb::Error (exit 2) in one line naming the file.
encoders::EagleDims online_backbone_dims(const ModelConfig& mc);

// The loader's prompts (data/packed_dataset.hpp VlPrompt): the backbone's tokenizer and GR00T's
// chat template with its image-token runs. A missing tokenizer file or special token is an
// emb::Error (exit 2) naming the folder.
VlPrompt online_prompt(const ModelConfig& mc);

// The backbone's inputs of one micro-batch, prepared on the host: each sample's prompt, the
// context row of every backbone row (sample after sample), and the views' patch rows
// [Σ V · T, 3·p·p] after GR00T's frame transforms (augment: the training draw of (seed, sample
// id, step)).
struct OnlineInputs {
  std::vector<encoders::EagleSample> samples;
  std::vector<int32_t> context_rows;
  std::vector<float> patch_rows;
};
OnlineInputs online_inputs(const PackedBatch& b, const encoders::EagleDims& d, uint64_t seed, int64_t step,
                           bool augment);
// The views' frames the patch rows are made of: uint8 [Σ V, image, image, 3] after GR00T's crop,
// resize and (augment) jitter, sample after sample (--dump records them).
std::vector<uint8_t> online_frames(const PackedBatch& b, const encoders::EagleDims& d, uint64_t seed, int64_t step,
                                   bool augment);

class OnlineBackbone {
 public:
  // storage: the backend's dtype of the weights and activations (bf16 on CUDA with
  // model.precision = bf16, as upstream trains under autocast; else fp32).
  OnlineBackbone(Ops& ops, const ModelConfig& mc, DType storage, uint64_t seed);

  // b.backend_context [n_context, dims().llm_hidden] fp32 in the backend's memory, from b's
  // frames and prompts (padding rows 0); augment: the training transforms drawn for `step`.
  // Micro-batch `slot` of a step has a buffer of its own, valid until the next call for that slot.
  void compute_context(PackedBatch& b, int slot, int64_t step, bool augment);
  const encoders::EagleDims& dims() const { return backbone_.dims(); }

 private:
  Ops& ops_;
  encoders::EagleBackbone backbone_;
  uint64_t seed_;
  ContextBuffers contexts_;
  // The widened vl rows and the context row indices of a call, reused by the next (the backbone
  // keeps its own activations' buffers): after the first micro-batch of a shape, nothing is
  // allocated per micro-batch.
  encoders::ScratchPool scratch_;
};

}  // namespace emb
