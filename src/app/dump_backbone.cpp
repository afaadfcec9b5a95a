#include "app/dump_backbone.hpp"

#include "encoders/common/backend_tensors.hpp"

namespace emb {

DumpBackbone::DumpBackbone(const RunConfig& cfg, Ops& ops, const StepKey& key) : ops_(ops), mc_(cfg.model), key_(key) {
  if (!mc_.online_backbone) return;
  dims_ = online_backbone_dims(mc_);
  if (mc_.tune_visual)
    tuned_ = std::make_unique<TunedBackbone>(ops, mc_, key.seed);
  else
    frozen_ = std::make_unique<OnlineBackbone>(ops, mc_, DType::f32, key.seed);
}

void DumpBackbone::load_tuned_values(const ParamRegistry& reg, std::vector<float>& params) const {
  if (!tuned_) return;
  const std::vector<float> values = tuned_backbone_values(mc_);
  std::copy(values.begin(), values.end(), params.begin() + reg.get(tuned_backbone_tensors(mc_).front().name).offset);
}

void DumpBackbone::prepare(PackedBatch& b, int slot) {
  if (tuned_) tuned_->bind_context(b, slot);
  if (frozen_) frozen_->compute_context(b, slot, key_.step, mc_.backbone_augment);
}

void DumpBackbone::record(const PackedBatch& b, DumpMicroBatch& rec) const {
  if (!mc_.online_backbone) return;
  rec.batch.context = encoders::download(ops_, view(b.backend_context, b.n_context, mc_.d_ctx));
  rec.batch.backend_context = nullptr;
  rec.frames = online_frames(b, dims_, key_.seed, key_.step, mc_.backbone_augment);
  rec.frame_size = dims_.image_size;
}

}  // namespace emb
