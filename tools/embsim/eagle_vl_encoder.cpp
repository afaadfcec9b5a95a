#include "eagle_vl_encoder.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/half.hpp"
#include "encoders/eagle/frame_transform.hpp"
#include "train/online_backbone.hpp"

namespace emb {

namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

// For each trained view, its index among the rendered ones.
std::vector<size_t> view_order(const std::vector<std::string>& rendered, const std::vector<std::string>& trained) {
  const std::vector<std::string>& wanted = trained.empty() ? rendered : trained;
  std::vector<size_t> order;
  for (const std::string& v : wanted) {
    const auto at = std::find(rendered.begin(), rendered.end(), v);
    if (at == rendered.end() || wanted.size() != rendered.size())
      throw Error(str("embsim: the checkpoint's backbone was trained on views ", joined(wanted), "; the rendered views "
                      "(--views) are ", joined(rendered), ": render the same cameras"),
                  kExitInput);
    order.push_back(size_t(at - rendered.begin()));
  }
  return order;
}

}  // namespace

EagleVlEncoder::EagleVlEncoder(Ops& ops, const ModelConfig& mc, const float* tuned_params,
                               const std::vector<std::string>& rendered, const std::vector<std::string>& trained)
    : ops_(ops),
      dims_(online_backbone_dims(mc)),
      prompt_(online_prompt(mc)),
      tuned_params_(tuned_params),
      order_(view_order(rendered, trained)) {
  if (tuned_params)
    tuned_ = std::make_unique<TunedBackbone>(ops, mc, 0);  // the seed draws augmentations, which evaluation skips
  else
    frozen_ = std::make_unique<encoders::EagleBackbone>(ops, dims_, WeightSource(mc.backbone_dir), DType::f32);
}

void EagleVlEncoder::encode(const std::vector<std::vector<uint8_t>>& frames, int H, int W,
                            const std::string& instruction, std::vector<uint16_t>& out) {
  EMB_ASSERT(frames.size() == order_.size());
  const int64_t V = int64_t(frames.size());
  std::vector<uint8_t> stacked;  // in the trained order
  for (size_t v : order_) stacked.insert(stacked.end(), frames[v].begin(), frames[v].end());
  const std::vector<uint8_t> u8 =
      encoders::gr00t_frames(stacked.data(), V, H, W, dims_.image_size, nullptr, "embsim: the rendered views");
  std::vector<float> patches(size_t(V * dims_.tokens_per_image() * dims_.patch_features()));
  encoders::eagle_patch_rows(u8.data(), V, dims_.image_size, dims_.patch, patches.data());
  const std::vector<encoders::EagleSample> samples{{prompt_(instruction, int(V)), int(V)}};
  const std::vector<float> vl =
      tuned_ ? encoders::download(ops_, tuned_->vl_rows(tuned_params_, samples, patches.data()))
             : frozen_->features(samples, patches.data());
  for (float x : vl) out.push_back(float_to_half(x));
}

}  // namespace emb
