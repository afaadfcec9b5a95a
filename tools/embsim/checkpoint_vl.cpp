#include "checkpoint_vl.hpp"

#include <filesystem>
#include <sstream>

#include "core/error.hpp"
#include "core/log.hpp"
#include "data/h5_file.hpp"
#include "data/packed_dataset.hpp"
#include "data/packed_format.hpp"
#include "eagle_vl_encoder.hpp"
#include "encoders/eagle/eagle_weights.hpp"

namespace emb {
namespace {

// The training files still there (globs expanded; one that matches nothing any more is skipped).
std::vector<std::string> existing_files(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& pattern : paths) {
    try {
      for (const std::string& path : expand_paths({pattern}))
        if (std::filesystem::is_regular_file(path)) files.push_back(path);
    } catch (const Error&) {  // a glob that matches nothing any more: no file to read
    }
  }
  return files;
}

// The views of the first file in the order the backbone saw them: offline, the order embpack
// features recorded (/features/vl's views); online, the loader's (/video's sorted names).
std::vector<std::string> trained_views(const std::vector<std::string>& files, bool offline) {
  std::vector<std::string> views;
  if (files.empty()) return views;
  const H5File f = H5File::open(files.front());
  if (!offline) return f.has(packed::kVideo) ? f.members(packed::kVideo) : views;
  if (!f.has(packed::kVlFeatures) || !f.has_attr(packed::kVlFeatures, "views")) return views;
  std::stringstream list(f.attr_string(packed::kVlFeatures, "views"));
  for (std::string v; std::getline(list, v, ',');) views.push_back(v);
  return views;
}

// The folder a checkpoint's Eagle backbone is read from now, and the deck key that names it.
struct BackboneKey {
  std::string dir, key;
};
BackboneKey backbone_key(const RunConfig& run, const std::string& recorded_dir) {
  if (run.model.tune_visual || run.model.online_backbone) return {run.model.backbone_dir, "model.backbone_dir"};
  return {run.data.vl_backbone.empty() ? recorded_dir : run.data.vl_backbone, "data.vl_backbone"};
}

// Refuses unless `dir` holds the Eagle backbone of `digest` that `what` says the features came from.
void check_backbone(const std::string& checkpoint, const std::string& what, const BackboneKey& at,
                    const std::string& digest) {
  EMB_CHECK(std::filesystem::is_directory(at.dir), checkpoint, ": trained on the features of ", what, ", but ",
            at.dir, " is not there: name the folder holding that backbone with --set ", at.key, "=DIR");
  const std::string now = encoders::eagle_weights_digest(WeightSource(at.dir));
  EMB_CHECK(now == digest, checkpoint, ": trained on the features of ", what, ", but ", at.dir,
            " holds another backbone (digest ", now, "): name the folder holding that backbone with --set ", at.key,
            "=DIR");
}

// The encoder the checkpoint records (trained_vl_features.hpp); the deck keys (embsim --set) name
// where its backbone is now.
CheckpointVl recorded_in_checkpoint(const std::string& checkpoint, const RunConfig& run,
                                    const VlFeaturesRecord& record) {
  const std::string evidence = "recorded in the checkpoint";
  if (record.encoder == kVlStandIn) return {CheckpointVl::Kind::stand_in, "", evidence, {}};
  const BackboneKey at = backbone_key(run, record.backbone_dir);
  check_backbone(checkpoint,
                 str("Eagle backbone ", record.backbone_dir, " (digest ", record.digest, ", ", evidence, ")"), at,
                 record.digest);
  return {run.model.tune_visual ? CheckpointVl::Kind::tuned_eagle : CheckpointVl::Kind::eagle, at.dir, evidence, {}};
}

// A checkpoint without the record (written before checkpoints recorded it): the encoder its deck
// names, or the one the training files still there record (the stand-in encoder when none does).
CheckpointVl decided_from_deck_and_files(const std::string& checkpoint, const RunConfig& run,
                                         const std::vector<std::string>& files) {
  const ModelConfig& mc = run.model;
  log_warn(checkpoint, ": records no vl feature encoder (written before checkpoints recorded it); choosing it from "
                       "its deck and the training files still there");
  if (mc.tune_visual) return {CheckpointVl::Kind::tuned_eagle, mc.backbone_dir, "train.tune_visual = on", {}};
  if (mc.online_backbone) return {CheckpointVl::Kind::eagle, mc.backbone_dir, "model.backbone = online", {}};
  if (!run.data.vl_backbone.empty()) return {CheckpointVl::Kind::eagle, run.data.vl_backbone, "data.vl_backbone", {}};
  std::string file;
  const VlFeaturesRecord found = packed_vl_features(files, checkpoint, &file);
  if (found.encoder == kVlStandIn) return {};
  check_backbone(checkpoint, str("Eagle backbone ", found.backbone_dir, " (digest ", found.digest, ", ", file,
                                 "/features/vl)"),
                 {found.backbone_dir, "data.vl_backbone"}, found.digest);
  return {CheckpointVl::Kind::eagle, found.backbone_dir, file, {}};
}

}  // namespace

CheckpointVl checkpoint_vl(const std::string& checkpoint, const RunConfig& run, const VlFeaturesRecord& record) {
  const std::vector<std::string> files = existing_files(run.data.paths);
  CheckpointVl out = record.encoder.empty() ? decided_from_deck_and_files(checkpoint, run, files)
                                            : recorded_in_checkpoint(checkpoint, run, record);
  if (out.kind != CheckpointVl::Kind::stand_in) out.views = trained_views(files, !run.model.online_backbone);
  return out;
}

std::string describe(const CheckpointVl& source) {
  if (source.kind == CheckpointVl::Kind::stand_in) return "stand-in encoder";
  return str("Eagle backbone ", source.backbone_dir,
             source.kind == CheckpointVl::Kind::tuned_eagle ? " with the checkpoint's tuned vision tower" : "", " (",
             source.evidence, ")");
}

ModelConfig with_backbone_of(const CheckpointVl& source, const ModelConfig& mc) {
  ModelConfig out = mc;
  out.backbone_dir = source.backbone_dir;
  return out;
}

std::unique_ptr<VlEncoder> make_vl_encoder(const CheckpointVl& source, const ModelConfig& mc,
                                           const ObservationOptions& o, Ops* ops, const float* tuned_params) {
  EMB_ASSERT((source.kind == CheckpointVl::Kind::tuned_eagle) == (tuned_params != nullptr));
  if (source.kind == CheckpointVl::Kind::stand_in) return std::make_unique<StandInVlEncoder>(o.d_vl, o.vl_grid);
  EMB_ASSERT(ops != nullptr);
  return std::make_unique<EagleVlEncoder>(*ops, with_backbone_of(source, mc), tuned_params, o.views, source.views);
}

}  // namespace emb
