// --dump with model.backbone = online (MODEL.md "Dump"): the step's backbone computes each
// micro-batch's context rows before the model runs it, as training does: the frozen backbone, or
// with train.tune_visual the trained one on the model's own vision tensors (the model's context
// source, whose gradients the dump then holds). The dump records what a reference needs to
// recompute those rows: the backbone's input frames after GR00T's transforms of the dumped
// step, the prompt ids (PackedBatch::prompt) and the rows themselves.
#pragma once
#include <memory>
#include <vector>

#include "app/commands.hpp"
#include "model/dump.hpp"
#include "train/online_backbone.hpp"
#include "train/tuned_backbone.hpp"

namespace emb {

class DumpBackbone {
 public:
  // Nothing to do (a null source, no recording) without model.backbone = online.
  DumpBackbone(const RunConfig& cfg, Ops& ops, const StepKey& key);

  // train.tune_visual: the model's context source; null otherwise.
  ContextSource* context_source() { return tuned_.get(); }
  // train.tune_visual, a fresh start: the vision tensors' values of backbone_dir written into
  // the model's flat parameters (the registry's offsets), as the trainer starts them.
  void load_tuned_values(const ParamRegistry& reg, std::vector<float>& params) const;
  // Before the model runs micro-batch `slot`: its context rows bound (tune_visual) or computed.
  void prepare(PackedBatch& b, int slot);
  // After it ran: the rows downloaded into the record's context and the backbone's frames.
  void record(const PackedBatch& b, DumpMicroBatch& rec) const;

 private:
  Ops& ops_;
  ModelConfig mc_;
  StepKey key_;
  encoders::EagleDims dims_;
  std::unique_ptr<OnlineBackbone> frozen_;
  std::unique_ptr<TunedBackbone> tuned_;
};

}  // namespace emb
