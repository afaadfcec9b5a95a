// The packed file's `modality` attribute (src/data/packed_format.hpp) of a LeRobot dataset
// that GR00T's meta/modality.json describes: its state/action sub-keys at their positions in
// the packed vectors (the slices concatenated in order) and its views with the recorded
// videos' resolution, channels and fps (meta/info.json), as upstream's metadata.json holds
// them. "" when the dataset has no modality.json.
#pragma once
#include <string>

#include "lerobot_dataset.hpp"

namespace emb {

std::string lerobot_modality_attribute(const LerobotDataset& d);

}  // namespace emb
