#include "checkpoint_vl.hpp"

#include <filesystem>
#include <sstream>

#include "core/error.hpp"
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

// The Eagle backbone the training files' /features/vl record (embpack features --backbone), or
// the stand-in encoder when none does.
CheckpointVl recorded_vl(const std::string& checkpoint, const std::vector<std::string>& files) {
  CheckpointVl found;
  std::string stand_in_file, digest;
  for (const std::string& path : files) {
    const H5File f = H5File::open(path);
    if (!f.has(packed::kVlFeatures)) continue;
    if (!f.has_attr(packed::kVlFeatures, packed::kBackboneDigest)) {
      if (stand_in_file.empty()) stand_in_file = path;
      continue;
    }
    if (found.kind == CheckpointVl::Kind::stand_in) {
      found = {CheckpointVl::Kind::eagle, f.attr_string(packed::kVlFeatures, "checkpoint"), path, {}};
      digest = f.attr_string(packed::kVlFeatures, packed::kBackboneDigest);
    }
  }
  if (found.kind == CheckpointVl::Kind::stand_in) return found;
  EMB_CHECK(stand_in_file.empty(), checkpoint, ": trained on Eagle backbone features (", found.evidence,
            ") and stand-in encoder features (", stand_in_file, "): no one encoder can evaluate it");
  EMB_CHECK(std::filesystem::is_directory(found.backbone_dir), checkpoint, ": trained on Eagle backbone features of ",
            found.backbone_dir, " (", found.evidence, "/features/vl), which is not there: name its folder with --set "
            "data.vl_backbone=DIR");
  EMB_CHECK(encoders::eagle_weights_digest(WeightSource(found.backbone_dir)) == digest, checkpoint,
            ": trained on Eagle backbone features of digest ", digest, " (", found.evidence, "/features/vl), but ",
            found.backbone_dir, " now holds another backbone: name its folder with --set data.vl_backbone=DIR");
  return found;
}

}  // namespace

CheckpointVl checkpoint_vl(const std::string& checkpoint, const RunConfig& run) {
  const ModelConfig& mc = run.model;
  const std::vector<std::string> files = existing_files(run.data.paths);
  CheckpointVl out;
  if (mc.tune_visual)
    out = {CheckpointVl::Kind::tuned_eagle, mc.backbone_dir, "train.tune_visual = on", {}};
  else if (mc.online_backbone)
    out = {CheckpointVl::Kind::eagle, mc.backbone_dir, "model.backbone = online", {}};
  else if (!run.data.vl_backbone.empty())
    out = {CheckpointVl::Kind::eagle, run.data.vl_backbone, "data.vl_backbone", {}};
  else
    out = recorded_vl(checkpoint, files);
  if (out.kind != CheckpointVl::Kind::stand_in) out.views = trained_views(files, !mc.online_backbone);
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
