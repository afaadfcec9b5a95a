#include "data/vl_features_source.hpp"

#include "core/error.hpp"
#include "data/h5_file.hpp"
#include "data/packed_format.hpp"

namespace emb {

VlFeaturesRecord packed_vl_features(const std::vector<std::string>& files, const std::string& who,
                                    std::string* evidence) {
  VlFeaturesRecord found{kVlStandIn, "", ""};
  std::string stand_in_file;
  for (const std::string& path : files) {
    const H5File f = H5File::open(path);
    if (!f.has(packed::kVlFeatures)) continue;
    if (!f.has_attr(packed::kVlFeatures, packed::kBackboneDigest)) {
      if (stand_in_file.empty()) stand_in_file = path;
      continue;
    }
    if (found.encoder == kVlStandIn) {
      found = {kVlEagle, f.attr_string(packed::kVlFeatures, "checkpoint"),
               f.attr_string(packed::kVlFeatures, packed::kBackboneDigest)};
      *evidence = path;
    }
  }
  EMB_CHECK(found.encoder == kVlStandIn || stand_in_file.empty(), who, ": trained on Eagle backbone features (",
            *evidence, ") and stand-in encoder features (", stand_in_file, "): no one encoder can evaluate it");
  return found;
}

}  // namespace emb
