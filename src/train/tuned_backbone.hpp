// train.tune_visual = on (issue 33; model.backbone = online): the step trains GR00T-N1.5's SigLIP
// vision tower and mlp1 projector as upstream's tune_visual does, the Qwen3 layers frozen but in
// the graph (Isaac-GR00T 4af2b622 eagle_backbone.py: requires_grad_(False), no no_grad), so the
// gradient of the vl features reaches the image tokens through them. The vision and mlp1 tensors
// are parameters of the model (ModelConfig::trained_context, tuned_backbone_tensors: upstream's
// names, W [in, out]), sharded, reduced and updated with the head's, in units of their own: the
// embeddings, each SigLIP layer, the head (post-LN and mlp1), so ZeRO-3 gathers and frees them
// layer by layer (model/context_source.hpp). Everything here is fp32.
//
// Per micro-batch: the host prepares the frames and prompts as OnlineBackbone does
// (online_inputs), then SigLIP + mlp1 (encoders/eagle/vision_tower_training) and the frozen
// Qwen3 layers (language_model_training) run with their activations kept, and the features go to
// the context rows (bind_context's buffer). The backward takes the context rows' gradient back
// through both. A step's micro-batches run one after the other, so one set of activations is held.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "config/model_config.hpp"
#include "encoders/eagle/eagle_backbone.hpp"
#include "encoders/eagle/language_model_training.hpp"
#include "encoders/eagle/vision_tower_training.hpp"
#include "model/context_source.hpp"
#include "train/context_buffers.hpp"

namespace emb {

// The trained tensors of backbone_dir's vision tower and mlp1 (encoders::vision_tower_layout),
// each in its piece's unit ("vision.embeddings", "vision.layers.{l}", "vision.head"): AdamW
// decays all but biases and LayerNorm weights (HF Trainer's default, which upstream uses).
std::vector<TrainedContextTensor> tuned_backbone_tensors(const ModelConfig& mc);
// mc with those tensors as its trained_context when train.tune_visual is on: the model whose
// registry a run, its init_from and its export share.
ModelConfig with_tuned_backbone(const ModelConfig& mc);
// Their values in backbone_dir, in that order (host fp32): the parameters a fresh run starts from.
std::vector<float> tuned_backbone_values(const ModelConfig& mc);

class TunedBackbone final : public ContextSource {
 public:
  TunedBackbone(Ops& ops, const ModelConfig& mc, uint64_t seed);

  // Points b.backend_context at micro-batch slot `slot`'s rows, which forward writes.
  void bind_context(PackedBatch& b, int slot);

  void forward(ParamAccess& P, const ContextParams& at, const PackedBatch& b, int64_t step) override;
  void backward(ParamAccess& P, const ContextParams& at, const View& dcontext) override;

  // vl [Σ_s N_s, E] fp32 in the backend's memory (sample after sample; valid until the next
  // call) of `samples` and their views' patch rows [Σ_s V_s · T, 3·p·p] (host), with the vision
  // tower and mlp1 of `params`: forward's computation, which evaluation of a tuned checkpoint
  // runs on its frames (tools/embsim/eagle_vl_encoder.hpp).
  View vl_rows(const float* params, const std::vector<encoders::EagleSample>& samples, const float* patch_rows);

 private:
  // The image tokens [n_images · T, E] of uploaded patch rows [n_images · T, 3·p·p].
  using VisionTowerForward = std::function<View(const View& patch_rows, int64_t n_images)>;
  View vl_rows(const std::vector<encoders::EagleSample>& samples, const float* patch_rows,
               const VisionTowerForward& vision_tower);

  Ops& ops_;
  encoders::EagleDims dims_;
  uint64_t seed_;
  bool augment_;
  std::unique_ptr<encoders::BackendTensors> weights_store_;
  encoders::EagleWeights language_;  // embed, the Qwen3 layers (plain W), final norm
  encoders::VisionTowerTraining vision_;
  encoders::LanguageModelTraining llm_;
  ContextBuffers contexts_;
  // The last forward's inputs the backward reads.
  std::unique_ptr<encoders::BackendTensors> inputs_;
  std::unique_ptr<encoders::BackendIndex> image_rows_, context_rows_;
  int64_t n_tokens_ = 0;
};

}  // namespace emb
