// The per-robot text templates of DreamZero's collator (groot/vla/model/dreamzero/transform/
// dreamzero_cotrain.py, collate): the instruction is lower-cased (Python's str.lower()) and put
// into a sentence describing the video layout of the embodiment, twice for the multi-view ones.
// Upstream first runs ast.literal_eval on the stored text and takes element 0 of a list; pass
// the instruction itself here.
#pragma once
#include <string>

namespace emb::tokenizers {

// The embodiment tags DreamZero's collate() has a template for.
enum class DreamZeroRobot { kAgibot, kOxeDroid, kGr1Unified, kMeckaHands, kXdof, kYam };

// The tag's name in DreamZero's EmbodimentTag ("oxe_droid", ...), and the reverse; the reverse
// throws emb::Error listing the known names.
const char* dreamzero_robot_name(DreamZeroRobot robot);
DreamZeroRobot dreamzero_robot_from_name(const std::string& name);

// The text collate() hands to the umT5 tokenizer. AgiBot's template needs num_views > 1 (with
// one view upstream has none and fails; so does this, with emb::Error).
std::string dreamzero_prompt(DreamZeroRobot robot, const std::string& instruction, int num_views);

}  // namespace emb::tokenizers
