// The encoder whose vl features a gr00t run trains on, recorded in each of its checkpoints
// (checkpoint/vl_features_record.hpp) so that evaluating it never depends on the training files.
#pragma once
#include "config/run_config.hpp"
#include "data/vl_features_source.hpp"

namespace emb {

// The Eagle backbone of model.backbone_dir (train.tune_visual, model.backbone = online), of
// data.vl_backbone, or the one the packed files record (their folder and digest); the stand-in
// encoder otherwise; nothing for other families. The digest of a folder is read from its weights
// (encoders::eagle_weights_digest: one read of the backbone) unless the app already has it.
VlFeaturesRecord trained_vl_features(const RunConfig& cfg);

}  // namespace emb
