#include "train/trained_vl_features.hpp"

#include "data/packed_dataset.hpp"
#include "encoders/eagle/eagle_weights.hpp"
#include "weights/weight_source.hpp"

namespace emb {

namespace {

VlFeaturesRecord eagle_of(const std::string& dir, const std::string& known_digest) {
  return {kVlEagle, dir, known_digest.empty() ? encoders::eagle_weights_digest(WeightSource(dir)) : known_digest};
}

}  // namespace

VlFeaturesRecord trained_vl_features(const RunConfig& cfg) {
  const ModelConfig& mc = cfg.model;
  if (mc.family != Family::gr00t) return {};
  if (mc.tune_visual || mc.online_backbone) return eagle_of(mc.backbone_dir, "");
  if (!cfg.data.vl_backbone.empty()) return eagle_of(cfg.data.vl_backbone, cfg.data.vl_backbone_digest);
  std::string evidence;
  return packed_vl_features(expand_paths(cfg.data.paths), "training data", &evidence);
}

}  // namespace emb
