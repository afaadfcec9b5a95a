#include "train/freezing.hpp"

#include "train/online_backbone.hpp"

namespace emb {

UpstreamNameMap upstream_map_of(const ModelConfig& mc) {
  const UpstreamFamily family = mc.family == Family::gr00t ? UpstreamFamily::gr00t_n15 : UpstreamFamily::dreamzero;
  if (!mc.tune_visual) return UpstreamNameMap(family, mc.patch);
  return UpstreamNameMap(family, mc.patch, online_backbone_dims(mc).patch);
}

namespace {

bool is_trained_context(const ModelConfig& mc, const std::string& name) {
  for (const TrainedContextTensor& t : mc.trained_context)
    if (t.name == name) return true;
  return false;
}

}  // namespace

std::vector<bool> frozen_tensors(const ModelConfig& mc, const TrainConfig& tc, const ParamRegistry& reg) {
  std::vector<bool> frozen(reg.all().size(), false);
  if (tc.tune_projector && tc.tune_diffusion_model) return frozen;
  const UpstreamNameMap map = upstream_map_of(mc);
  for (size_t i = 0; i < frozen.size(); ++i) {
    const ParamInfo& p = reg.all()[i];
    if (is_trained_context(mc, p.name)) continue;  // train.tune_visual's: trained whatever the head's flags
    const TuneGroup group = map.upstream_of(p.name, p.shape).group;
    frozen[i] = (group == TuneGroup::projector && !tc.tune_projector) ||
                (group == TuneGroup::diffusion_model && !tc.tune_diffusion_model);
  }
  return frozen;
}

}  // namespace emb
