#include "eagle_vl_encoder.hpp"

#include "core/half.hpp"
#include "encoders/eagle/frame_transform.hpp"
#include "train/online_backbone.hpp"

namespace emb {

EagleVlEncoder::EagleVlEncoder(Ops& ops, const ModelConfig& mc, const float* tuned_params)
    : ops_(ops),
      dims_(online_backbone_dims(mc)),
      prompt_(online_prompt(mc)),
      tuned_params_(tuned_params) {
  if (tuned_params)
    tuned_ = std::make_unique<TunedBackbone>(ops, mc, 0);  // the seed draws augmentations, which evaluation skips
  else
    frozen_ = std::make_unique<encoders::EagleBackbone>(ops, dims_, WeightSource(mc.backbone_dir), DType::f32);
}

void EagleVlEncoder::encode(const std::vector<std::vector<uint8_t>>& frames, int H, int W,
                            const std::string& instruction, std::vector<uint16_t>& out) {
  const int64_t V = int64_t(frames.size());
  std::vector<uint8_t> stacked;
  for (const std::vector<uint8_t>& f : frames) stacked.insert(stacked.end(), f.begin(), f.end());
  const std::vector<uint8_t> u8 =
      encoders::gr00t_frames(stacked.data(), V, H, W, dims_.image_size, nullptr, "embsim: the rendered views");
  std::vector<float> patches(size_t(V * dims_.tokens_per_image() * dims_.patch_features()));
  encoders::eagle_patch_rows(u8.data(), V, dims_.image_size, dims_.patch, patches.data());
  const std::vector<encoders::EagleSample> samples{{prompt_(instruction, int(V)), int(V)}};
  const std::vector<float> vl = tuned_ ? encoders::download(ops_, tuned_->vl_rows(tuned_params_, samples, patches.data()))
                                       : frozen_->features(samples, patches.data());
  for (float x : vl) out.push_back(float_to_half(x));
}

}  // namespace emb
