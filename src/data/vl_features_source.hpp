// Which encoder made the vl features of a gr00t run's packed files: the stand-in encoder of
// simulated fixtures (embsim collect, embpack video/libero/lerobot) or GR00T-N1.5's Eagle
// backbone (embpack features --backbone records its folder and digest on /features/vl).
// Training records it in its checkpoints (checkpoint/vl_features_record.hpp).
#pragma once
#include <string>
#include <vector>

namespace emb {

constexpr const char* kVlStandIn = "stand-in";  // the stand-in encoder of simulated fixtures
constexpr const char* kVlEagle = "eagle";       // GR00T-N1.5's Eagle backbone

struct VlFeaturesRecord {
  std::string encoder;       // kVlStandIn or kVlEagle; "" = not recorded (other families, older checkpoints)
  std::string backbone_dir;  // eagle: the GR00T checkpoint folder of the backbone
  std::string digest;        // eagle: encoders::eagle_weights_digest of its tensors
};

// What the files' /features/vl record: the Eagle backbone of the first file whose features carry
// a backbone digest (*evidence = that file), else the stand-in encoder. Throws emb::Error in one
// line naming `who` and both files when some hold Eagle features and others the stand-in's.
VlFeaturesRecord packed_vl_features(const std::vector<std::string>& files, const std::string& who,
                                    std::string* evidence);

}  // namespace emb
