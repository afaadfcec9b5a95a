// The packed files a deck's data.paths name, for --plan's reads of the data (its shape, its
// loader's time), when they are all there; a plan made before the data exists answers without.
#pragma once
#include <string>
#include <vector>

#include "config/data_config.hpp"

namespace emb {

// The files of data.paths (globs expanded), or none when a glob matches nothing or a file is missing.
std::vector<std::string> present_data_files(const DataConfig& dc);

}  // namespace emb
