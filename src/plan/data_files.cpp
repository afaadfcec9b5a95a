#include "plan/data_files.hpp"

#include <filesystem>

#include "core/error.hpp"
#include "data/packed_dataset.hpp"

namespace emb {

std::vector<std::string> present_data_files(const DataConfig& dc) {
  std::vector<std::string> paths;
  try {
    paths = expand_paths(dc.paths);
  } catch (const Error&) {
    return {};
  }
  for (const std::string& path : paths)
    if (!std::filesystem::exists(path)) return {};
  return paths;
}

}  // namespace emb
