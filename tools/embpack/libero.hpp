// `embpack libero`: robomimic / LIBERO demonstration files to a gr00t packed file.
// Layout read: /data/demo_<i>/{actions [T, A], obs/joint_states, obs/gripper_states,
// obs/ee_states (optional), obs/agentview_rgb, obs/eye_in_hand_rgb [T, H, W, 3] uint8
// (each optional), rewards, dones (optional)}. State = joint ‖ gripper ‖ ee states.
// The instruction comes from /data attributes (`problem_info` JSON with
// "language_instruction", or `language_instruction`), else from the file name
// ("pick_up_the_bowl_demo.hdf5" → "pick up the bowl"). Camera views are kept as
// /video/<view> and turned into vl tokens by the ContextFeatures stand-in encoder.
#pragma once
#include <string>
#include <vector>

#include "packed_data.hpp"

namespace emb {

struct LiberoOptions {
  int d_vl = 32;
  int vl_grid = 2;  // vl tokens per view = grid²
  double fps = 20;
  bool progress = false;
};

PackedData convert_libero(const std::vector<std::string>& inputs, const LiberoOptions& o);

}  // namespace emb
