// experiment_cfg/metadata.json of a GR00T-N1.5 export: what upstream inference
// (Gr00tPolicy._load_metadata, Isaac-GR00T gr00t/model/policy.py 279-297) reads to normalise
// states and actions: {embodiment tag: DatasetMetadata} (gr00t/data/schema.py), each
//   {"statistics": {"state": {sub-key: {max, min, mean, std, q01, q99}}, "action": {...}},
//    "modalities": {"video": {view: {resolution [w, h], channels, fps}},
//                   "state": {sub-key: {absolute, rotation_type, shape [n], continuous}},
//                   "action": {...}},
//    "embodiment_tag": tag}
// from the statistics the run normalised with (the checkpoint's `normalization`; a checkpoint
// without: the files' /stats, data/normalization_statistics.hpp, the same numbers) sliced per sub-key,
// and the `modality` attribute embpack lerobot copies from meta/modality.json and
// meta/info.json (without it, one sub-key "state" / "action" spans the whole vector).
// The tag of a packed file's embodiment id is upstream's (data/gr00t_embodiment_tags.hpp);
// several files of one tag combine as upstream mixes datasets (normalization_statistics.hpp).
#pragma once
#include <nlohmann/json.hpp>

#include "config/run_config.hpp"

namespace emb {

// Where an export (GR00T-N1.5 or DreamZero, the same schema) writes it.
constexpr const char* kExportMetadataPath = "experiment_cfg/metadata.json";

// `recorded`: the checkpoint's normalization attribute ("" = none: the files' statistics).
// Throws emb::Error (exit code 2) naming the data file: no /stats, an embodiment id without an
// upstream tag, a file whose episodes have several embodiments.
nlohmann::json gr00t_metadata(const RunConfig& cfg, const std::string& recorded);

// The same entries, DreamZero's metadata.json being of the same schema; with upstream_tags
// false an embodiment id without a GR00T tag is keyed embodiment_<id> (DreamZero's export puts
// its one entry under the released tag: dreamzero_metadata.hpp).
nlohmann::json metadata_entries(const RunConfig& cfg, const std::string& recorded, bool upstream_tags);

}  // namespace emb
