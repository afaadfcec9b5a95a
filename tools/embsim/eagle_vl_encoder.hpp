// The vl rows of a checkpoint trained on GR00T-N1.5's Eagle backbone features (offline
// `embpack features --backbone`, model.backbone = online, or train.tune_visual), computed from
// the rendered frames and the instruction as training computed them: GR00T's eval frame
// pipeline (centre crop 0.95, encoders/eagle/frame_transform.hpp), the backbone's tokenizer and
// chat template (train/online_backbone.hpp online_prompt), the views in order, then every
// token's feature. The frozen path is encoders::EagleBackbone (fp32, as embpack features on the
// CPU); a train.tune_visual checkpoint's runs TunedBackbone::vl_rows with the checkpoint's own
// vision tower and mlp1, the forward its training ran. The rows are rounded to float16 like
// packed features (an online or tuned run's context was fp32: a relative 2^-11 apart).
#pragma once
#include <memory>

#include "config/data_config.hpp"
#include "config/model_config.hpp"
#include "encoders/eagle/eagle_backbone.hpp"
#include "train/tuned_backbone.hpp"
#include "vl_encoder.hpp"

namespace emb {

class EagleVlEncoder final : public VlEncoder {
 public:
  // The backbone of mc.backbone_dir on `ops`. tuned_params: nullptr for the frozen backbone, else
  // the checkpoint's trained_context tensors (fp32, in `ops`' memory, mc.tune_visual), which must
  // outlive the encoder. rendered: the views encode() gets, in its order; trained: the order the
  // backbone saw them in training (empty: the rendered order), into which encode() puts them.
  // Throws emb::Error (exit 2) naming a missing file or tensor, or a trained view not rendered.
  EagleVlEncoder(Ops& ops, const ModelConfig& mc, const float* tuned_params, const std::vector<std::string>& rendered,
                 const std::vector<std::string>& trained);
  void encode(const std::vector<std::vector<uint8_t>>& frames, int H, int W, const std::string& instruction,
              std::vector<uint16_t>& out) override;

 private:
  Ops& ops_;
  encoders::EagleDims dims_;
  VlPrompt prompt_;
  const float* tuned_params_;
  std::vector<size_t> order_;  // order_[v]: the rendered view the backbone's view v is
  std::unique_ptr<encoders::EagleBackbone> frozen_;  // without tuned_params
  std::unique_ptr<TunedBackbone> tuned_;             // with them
};

}  // namespace emb
