// Which parameters a run trains (README "Fine-tuning released weights"): upstream's flags
// train.tune_projector and train.tune_diffusion_model (Isaac-GR00T
// FlowmatchingActionHead.set_trainable_parameters) freeze the tensors of their group in the
// family's upstream map (weights/upstream_map.hpp TuneGroup). A frozen tensor keeps its value
// bit for bit and costs nothing but its parameters: the model computes no gradient for it
// (Model::freeze: its weight-gradient GEMMs are skipped, input gradients still flow to the
// trained parts before it), it has no AdamW moments on the device nor in checkpoints
// (ShardLayout::trainable_owned_total), is outside the gradient norm, and a bucket of frozen
// units is never reduced (parallel/shard_layout.hpp).
#pragma once
#include <vector>

#include "config/model_config.hpp"
#include "config/train_config.hpp"
#include "model/param_registry.hpp"
#include "weights/upstream_map.hpp"

namespace emb {

// The upstream family of a model (gr00t: GR00T-N1.5, wan: DreamZero) and its name map.
UpstreamNameMap upstream_map_of(const ModelConfig& mc);

// Per tensor of reg, in its order: frozen by tc's flags. All false when both flags are on.
std::vector<bool> frozen_tensors(const ModelConfig& mc, const TrainConfig& tc, const ParamRegistry& reg);

}  // namespace emb
