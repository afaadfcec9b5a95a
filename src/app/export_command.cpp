// `embtrain export RUN_OR_CHECKPOINT -o DIR` (README "Fine-tuning released weights"): a run's
// trained parameters written as the released checkpoint the run started from
// (train.init_from), so that upstream inference loads DIR unchanged:
//   the source folder's other files copied as they are, config.json kept (its action_horizon
//   updated when the run trained another horizon, as gr00t_finetune.py does);
//   the safetensors files with the source's shard assignment: every trained tensor under its
//   upstream name, in upstream's layout and the dtype the source stored it in (with
//   train.tune_visual, the Eagle vision tower and mlp1 too); every other tensor (GR00T's
//   Eagle backbone, DreamZero's encoders) copied byte for byte;
//   GR00T: experiment_cfg/metadata.json, the training data's statistics and modalities under
//   upstream's embodiment tag (gr00t_metadata.hpp);
//   DreamZero: the released experiment_cfg/conf.yaml with relative_action and relative_action_keys
//   set to the run's data.relative_action_keys (dreamzero_conf.hpp), and the released
//   experiment_cfg/metadata.json with its embodiment's statistics the run's (dreamzero_metadata.hpp).
// DIR appears only when complete: everything is written into a temporary sibling folder that
// is renamed at the end; a failure removes it. An existing DIR is refused unless --force.
#include <algorithm>
#include <filesystem>
#include <map>

#include "app/commands.hpp"
#include "app/dreamzero_conf.hpp"
#include "app/dreamzero_metadata.hpp"
#include "app/gr00t_metadata.hpp"
#include "app/init_from_source.hpp"
#include "app/run_config_from_deck.hpp"
#include "checkpoint/checkpoint.hpp"
#include "checkpoint/checkpoint_dir.hpp"
#include "config/deck.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/log.hpp"
#include "model/model.hpp"
#include "train/tuned_backbone.hpp"
#include "weights/checkpoint_writer.hpp"
#include "weights/hf_folder.hpp"
#include "weights/mapped_tensor.hpp"
#include "weights/upstream_config.hpp"

namespace emb {
namespace {

namespace fs = std::filesystem;

// Where `out` is written before it is renamed into place.
std::string staging_of(const std::string& out) { return out + ".export-tmp"; }

// The source folder's files other than what the export writes itself.
void copy_other_files(const WeightSource& source, const std::string& staging, bool writes_metadata) {
  const fs::path root(source.path());
  if (!fs::is_directory(root)) return;
  std::vector<fs::path> skip = {root / kSafetensorsIndexName, root / "config.json"};
  for (const std::string& f : source.files()) skip.push_back(fs::path(f));
  if (writes_metadata) skip.push_back(root / kExportMetadataPath);
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(root)) {
    if (!e.is_regular_file() || std::find(skip.begin(), skip.end(), e.path()) != skip.end()) continue;
    const fs::path target = fs::path(staging) / fs::relative(e.path(), root);
    fs::create_directories(target.parent_path());
    fs::copy_file(e.path(), target);
  }
}

// config.json as the source has it, its action_horizon set to what the run trained.
std::string exported_config(const UpstreamConfig& u, const ModelConfig& mc) {
  const UpstreamDim* horizon = u.find("horizon");
  if (u.family != UpstreamFamily::gr00t_n15 || !horizon || horizon->value == mc.horizon) return read_file_text(u.path);
  nlohmann::json j = u.json;
  j["action_head_cfg"]["action_horizon"] = mc.horizon;
  if (j.contains("action_horizon")) j["action_horizon"] = mc.horizon;
  return j.dump(2) + "\n";
}

// The safetensors files: the source's tensors in the source's shards, trained ones from the
// checkpoint under their upstream names, layouts and dtypes, the rest copied raw.
void write_weights(const std::string& staging, const InitFrom& init, const ParamRegistry& reg,
                   const CheckpointReader& ckpt) {
  const WeightSource& source = init.source();
  std::map<std::string, int> trained;  // upstream name -> registry tensor
  for (size_t i = 0; i < init.tensors().size(); ++i) trained[init.tensors()[i].upstream.name] = int(i);
  const std::vector<std::string> files = source.files();
  std::vector<std::vector<TensorSpec>> shards(files.size());
  for (const TensorInfo& t : source.tensors())
    shards[size_t(std::find(files.begin(), files.end(), t.file) - files.begin())].push_back({t.name, t.dtype, t.shape});
  std::map<std::string, std::string> metadata = source.metadata();
  if (metadata.empty()) metadata["format"] = "pt";  // what save_pretrained writes
  CheckpointWriter writer(staging, shards, metadata);
  std::vector<float> ours, theirs;
  std::vector<unsigned char> raw;
  for (const TensorSpec& t : writer.order()) {
    const auto it = trained.find(t.name);
    if (it != trained.end()) {
      const ParamInfo& p = reg[it->second];
      ours.resize(size_t(p.numel)), theirs.resize(size_t(p.numel));
      ckpt.read_param(p.name, p.shape, ours.data());
      to_upstream_order(init.tensors()[size_t(it->second)].upstream, ours.data(), theirs.data());
      writer.write(theirs.data(), p.numel);
      continue;
    }
    const int64_t element = int64_t(weight_dtype_size(t.dtype)), chunk = std::max<int64_t>(1, (64 << 20) / element);
    raw.resize(size_t(std::min(chunk, t.numel()) * element));
    for (int64_t at = 0; at < t.numel(); at += chunk) {
      const int64_t n = std::min(chunk, t.numel() - at);
      source.read_raw(t.name, at, at + n, raw.data());
      writer.write_raw(raw.data(), n);
    }
  }
  writer.finish();
}

// DreamZero: the copied conf.yaml says whether the run trained relative actions (dreamzero_conf.hpp).
void write_dreamzero_conf(const std::string& staging, const RunConfig& cfg) {
  const fs::path conf = fs::path(staging) / kDreamZeroConfPath;
  if (fs::is_regular_file(conf)) {
    write_file_atomic(conf.string(), conf_with_relative_actions(read_file_text(conf.string()), cfg.data.relative_action_keys));
  } else if (!cfg.data.relative_action_keys.empty()) {
    log_warn("export: ", cfg.train.init_from, " has no ", kDreamZeroConfPath, "; upstream inference reads "
             "relative_action and relative_action_keys there to add the observed state to the relative actions");
  }
}

// DreamZero: the released metadata.json with the run's statistics in its embodiment's entry
// (dreamzero_metadata.hpp); null (the released file, if any, copied as it is) for a run on raw
// states and actions, whose checkpoint records no statistics, or a release without the file.
nlohmann::json dreamzero_export_metadata(const WeightSource& source, const RunConfig& cfg, const CheckpointReader& ckpt) {
  const fs::path released_path = fs::path(source.path()) / kExportMetadataPath;
  if (ckpt.meta().normalization.empty()) return nlohmann::json();  // export_weights warns
  if (!fs::is_regular_file(released_path)) {
    log_warn("export: ", released_path.string(), " is missing, so the export has none; upstream inference reads the "
             "statistics it normalises with there");
    return nlohmann::json();
  }
  nlohmann::json released;
  try {
    released = nlohmann::json::parse(read_file_text(released_path.string()));
  } catch (const nlohmann::json::exception& e) {
    throw Error(str(released_path.string(), ": not JSON (", e.what(), ")"), kExitInput);
  }
  const DreamZeroMetadata m =
      dreamzero_metadata(released, metadata_entries(cfg, ckpt.meta().normalization, false), released_path.string());
  log_info("export: ", kExportMetadataPath, ": the run's statistics under ", m.tag);
  if (!m.note.empty()) log_warn("export: ", kExportMetadataPath, ": ", m.note);
  return m.json;
}

// Renames the completed staging folder to `out` (replacing it with --force).
void publish_folder(const std::string& staging, const std::string& out) {
  const std::string old = out + ".export-old";
  const bool replace = fs::exists(out);
  if (replace) {
    fs::remove_all(old);
    fs::rename(out, old);
  }
  fs::rename(staging, out);
  if (replace) fs::remove_all(old);
}

}  // namespace

void export_weights(const std::string& source, const std::string& out, bool force) {
  if (fs::exists(out) && !force)
    throw Error(str(out, ": exists; embtrain export writes a new folder (--force replaces it)"), kExitInput);
  const std::string ckpt_path = verified_checkpoints(source, CheckedTensors::parameters, 1).front();
  const CheckpointReader ckpt(ckpt_path);
  const RunConfig cfg = run_config_from_deck(load_deck_text(ckpt.meta().deck_text, ckpt_path + ":deck"));
  if (cfg.train.init_from.empty())
    throw Error(str(ckpt_path, ": a run without train.init_from; export writes the released checkpoint a run "
                               "fine-tuned (its backbone, encoders and config.json come from there)"),
                kExitInput);
  const std::unique_ptr<InitFrom> init = open_init_from(cfg);
  const UpstreamConfig upstream = read_upstream_config(config_json_of(cfg.train.init_from));
  const bool gr00t = upstream.family == UpstreamFamily::gr00t_n15;
  if (ckpt.meta().normalization.empty())
    log_warn(ckpt_path, ": trained on raw states and actions (data.normalize = none or an older checkpoint); "
                        "upstream inference normalises them with metadata.json's statistics");
  const nlohmann::json metadata =  // before writing anything
      gr00t ? gr00t_metadata(cfg, ckpt.meta().normalization) : dreamzero_export_metadata(init->source(), cfg, ckpt);
  const auto described = make_model(with_tuned_backbone(cfg.model), nullptr);

  const std::string staging = staging_of(out);
  fs::remove_all(staging);  // a torn export of before
  try {
    fs::create_directories(staging);
    copy_other_files(init->source(), staging, !metadata.is_null());
    write_weights(staging, *init, described->params(), ckpt);
    write_file_atomic(staging + "/config.json", exported_config(upstream, cfg.model));
    if (!metadata.is_null()) {
      fs::create_directories(fs::path(staging) / fs::path(kExportMetadataPath).parent_path());
      write_file_atomic(staging + "/" + kExportMetadataPath, metadata.dump(4) + "\n");
    }
    if (!gr00t) write_dreamzero_conf(staging, cfg);
    publish_folder(staging, out);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(staging, ignored);
    throw;
  }
  log_info("export: wrote ", out, " from ", ckpt_path, " (step ", ckpt.meta().step, "): ",
           upstream_family_name(upstream.family), " as ", init->path(), " holds it, ", init->tensors().size(),
           " trained tensors replaced, ", init->source().tensors().size() - init->tensors().size(), " passed through");
}

}  // namespace emb
