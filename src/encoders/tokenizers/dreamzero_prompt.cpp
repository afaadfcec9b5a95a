#include "encoders/tokenizers/dreamzero_prompt.hpp"

#include "core/error.hpp"
#include "encoders/tokenizers/unicode_text.hpp"

namespace emb::tokenizers {

namespace {

struct Template {
  DreamZeroRobot robot;
  const char* name;
  const char* before;  // text before the instruction
  const char* middle;  // text between the two copies of the instruction; nullptr: one copy
};

// The layout sentences the released DreamZero models were trained with; they must stay
// byte-identical to upstream's collate().
constexpr const char* kFourViewsHeadHands =
    " The video is split into four views: The top-left view shows the camera view from the robot's head, the "
    "top-right view shows the camera view from the right hand, the bottom-left view shows the camera view from the "
    "left hand, and the bottom-right view is a black screen (inactive view). The robot ";

const Template kTemplates[] = {
    {DreamZeroRobot::kAgibot, "agibot", "A multi-view video shows that a robot ", kFourViewsHeadHands},
    {DreamZeroRobot::kOxeDroid, "oxe_droid", "A multi-view video shows that a robot ",
     " The video is split into three views: The top view shows the camera view from the robot's wrist, the "
     "bottom-left view shows the camera view from the left exterior camera, and the bottom-right view shows the "
     "camera view from the right exterior camera. During training, one of the two bottom exterior views may be a "
     "black screen (dropped view). The robot "},
    {DreamZeroRobot::kGr1Unified, "gr1_unified", "A single view video shows that a human ", nullptr},
    {DreamZeroRobot::kMeckaHands, "mecka_hands", "A single view video shows that a human ", nullptr},
    {DreamZeroRobot::kXdof, "xdof", "A multi-view video shows that a robot ", kFourViewsHeadHands},
    {DreamZeroRobot::kYam, "yam", "A multi-view video shows that a robot ",
     " The video is split into four views: The top-left view shows the top camera, the top-right view shows the "
     "right camera, the bottom-left view shows the left camera, and the bottom-right view is a black screen. The "
     "robot "},
};

const Template& template_of(DreamZeroRobot robot) {
  for (const Template& t : kTemplates) {
    if (t.robot == robot) return t;
  }
  throw Error("DreamZero prompt: unknown robot");
}

}  // namespace

const char* dreamzero_robot_name(DreamZeroRobot robot) { return template_of(robot).name; }

DreamZeroRobot dreamzero_robot_from_name(const std::string& name) {
  std::string known;
  for (const Template& t : kTemplates) {
    if (name == t.name) return t.robot;
    known += std::string(known.empty() ? "" : ", ") + t.name;
  }
  throw Error(str("DreamZero prompt: no text template for embodiment ", emb::quoted(name), " (known: ", known, ")"));
}

std::string dreamzero_prompt(DreamZeroRobot robot, const std::string& instruction, int num_views) {
  const Template& t = template_of(robot);
  EMB_CHECK(robot != DreamZeroRobot::kAgibot || num_views > 1,
            "DreamZero prompt: the agibot template is for multi-view data (num_views > 1), got num_views = ", num_views);
  const std::string lower = encode_utf8(python_lower(decode_utf8(instruction, "DreamZero instruction")));
  std::string text = t.before + lower;
  if (t.middle) text += t.middle + lower;
  return text;
}

}  // namespace emb::tokenizers
