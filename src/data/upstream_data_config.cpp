#include "data/upstream_data_config.hpp"

#include <algorithm>
#include <set>

#include "core/error.hpp"
#include "data/packed_format.hpp"
#include "data/rotation_conversion.hpp"
#include "data/state_sin_cos.hpp"

namespace emb {
namespace {

constexpr auto kMinMax = NormalizationRule::min_max;
constexpr auto kBinary = NormalizationRule::binary;

// Keys all normalised by one rule (or none), no rotation, no sin/cos.
std::vector<UpstreamKeySpec> keys(std::initializer_list<const char*> names, std::optional<NormalizationRule> rule) {
  std::vector<UpstreamKeySpec> specs;
  for (const char* n : names) specs.push_back({n, rule, "", false});
  return specs;
}

std::vector<UpstreamKeySpec> sin_cos_keys(std::initializer_list<const char*> names) {
  std::vector<UpstreamKeySpec> specs;
  for (const char* n : names) specs.push_back({n, std::nullopt, "", true});
  return specs;
}

std::vector<UpstreamDataConfig> make_configs() {
  // data_config.py line numbers at 4af2b622 of each class's keys and transforms.
  const std::initializer_list<const char*> gr1_arms = {"left_arm", "right_arm", "left_hand", "right_hand"};
  const std::initializer_list<const char*> gr1_arms_waist = {"left_arm", "right_arm", "left_hand", "right_hand",
                                                             "waist"};
  const std::initializer_list<const char*> gr1_upper = {"left_arm",   "right_arm", "left_hand",
                                                        "right_hand", "waist",     "neck"};
  const std::initializer_list<const char*> so100 = {"single_arm", "gripper"};
  const std::initializer_list<const char*> g1_arms = {"left_arm", "right_arm", "left_hand", "right_hand"};
  const std::initializer_list<const char*> g1_body = {"left_leg", "right_leg",  "waist",     "left_arm",
                                                      "right_arm", "left_hand", "right_hand"};
  const std::initializer_list<const char*> agibot_state = {"left_arm_joint_position",  "right_arm_joint_position",
                                                           "left_effector_position",   "right_effector_position",
                                                           "head_position",            "waist_position"};
  const std::initializer_list<const char*> agibot_action = {
      "left_arm_joint_position", "right_arm_joint_position", "left_effector_position", "right_effector_position",
      "head_position",           "waist_position",           "robot_velocity"};
  return {
      // :601-622 (its transform() is fourier_gr1_arms_only's, :168-205)
      {"fourier_gr1_arms_waist", sin_cos_keys(gr1_arms_waist), keys(gr1_arms_waist, kMinMax)},
      // :150-205
      {"fourier_gr1_arms_only", sin_cos_keys(gr1_arms), keys(gr1_arms, kMinMax)},
      // :348-410
      {"fourier_gr1_full_upper_body", keys(gr1_upper, kMinMax), keys(gr1_upper, kMinMax)},
      // :416-500: the quaternions given as rotation_6d, not normalised; the arms' actions as they are
      {"bimanual_panda_gripper",
       {{"right_arm_eef_pos", kMinMax, "", false},
        {"right_arm_eef_quat", std::nullopt, "rotation_6d", false},
        {"right_gripper_qpos", kMinMax, "", false},
        {"left_arm_eef_pos", kMinMax, "", false},
        {"left_arm_eef_quat", std::nullopt, "rotation_6d", false},
        {"left_gripper_qpos", kMinMax, "", false}},
       {{"right_arm_eef_pos", std::nullopt, "", false},
        {"right_arm_eef_rot", std::nullopt, "", false},
        {"right_gripper_close", kBinary, "", false},
        {"left_arm_eef_pos", std::nullopt, "", false},
        {"left_arm_eef_rot", std::nullopt, "", false},
        {"left_gripper_close", kBinary, "", false}}},
      // :506-546 (bimanual_panda_gripper's transform())
      {"bimanual_panda_hand",
       {{"right_arm_eef_pos", kMinMax, "", false},
        {"right_arm_eef_quat", std::nullopt, "rotation_6d", false},
        {"right_hand", kMinMax, "", false},
        {"left_arm_eef_pos", kMinMax, "", false},
        {"left_arm_eef_quat", std::nullopt, "rotation_6d", false},
        {"left_hand", kMinMax, "", false}},
       {{"right_arm_eef_pos", std::nullopt, "", false},
        {"right_arm_eef_rot", std::nullopt, "", false},
        {"right_hand", kMinMax, "", false},
        {"left_arm_eef_pos", std::nullopt, "", false},
        {"left_arm_eef_rot", std::nullopt, "", false},
        {"left_hand", kMinMax, "", false}}},
      // :552-595 (bimanual_panda_gripper's transform()): rotations converted and min_max-normalised,
      // which upstream does with the fixed bounds of the target representation
      {"single_panda_gripper",
       {{"end_effector_position_relative", kMinMax, "", false},
        {"end_effector_rotation_relative", kMinMax, "rotation_6d", false},
        {"gripper_qpos", kMinMax, "", false},
        {"base_position", kMinMax, "", false},
        {"base_rotation", kMinMax, "rotation_6d", false}},
       {{"end_effector_position", kMinMax, "", false},
        {"end_effector_rotation", kMinMax, "", false},
        {"gripper_close", kBinary, "", false},
        {"base_motion", kMinMax, "", false},
        {"control_mode", kBinary, "", false}}},
      // :211-259
      {"so100", keys(so100, kMinMax), keys(so100, kMinMax)},
      // :265-271 (so100's transform())
      {"so100_dualcam", keys(so100, kMinMax), keys(so100, kMinMax)},
      // :277-325
      {"unitree_g1", keys(g1_arms, kMinMax), keys(g1_arms, kMinMax)},
      // :328-342 (unitree_g1's transform())
      {"unitree_g1_full_body", keys(g1_body, kMinMax), keys(g1_arms, kMinMax)},
      // :628-697: the state rotation as rotation_6d, the rotation delta as axis_angle, both as they
      // are; the position delta as it is; the gripper binary
      {"oxe_droid",
       {{"eef_position", kMinMax, "", false},
        {"eef_rotation", std::nullopt, "rotation_6d", false},
        {"gripper_position", kMinMax, "", false}},
       {{"eef_position_delta", std::nullopt, "", false},
        {"eef_rotation_delta", std::nullopt, "axis_angle", false},
        {"gripper_position", kBinary, "", false}}},
      // :703-770
      {"agibot_genie1", keys(agibot_state, kMinMax), keys(agibot_action, kMinMax)},
  };
}

KeyTransform resolve_key(const UpstreamDataConfig& config, const char* part, const UpstreamKeySpec& spec,
                         const std::vector<ModalitySubKey>& file_keys, const std::string& file) {
  const auto fail = [&](const std::string& why) {
    throw Error(str(file, ": data.upstream_config = ", config.name, ": ", part, ".", spec.key, " ", why), kExitInput);
  };
  const auto it = std::find_if(file_keys.begin(), file_keys.end(),
                               [&](const ModalitySubKey& k) { return k.name == spec.key; });
  if (it == file_keys.end())
    fail(str("is not in the file (its ", part, " sub-keys: ", sub_key_names(file_keys),
             "); convert with embpack lerobot --", part, "-keys naming the config's keys"));
  KeyTransform t;
  t.key = spec.key, t.start = it->start, t.width = it->end - it->start;
  t.normalization = spec.normalization, t.absolute = it->absolute, t.sin_cos = spec.sin_cos;
  const std::string target = spec.rotation_to;
  if (!target.empty() && target != it->rotation_type) {
    if (it->rotation_type.empty())
      fail(str("is to be given as ", target, " but modality.json declares no rotation_type for it"));
    if (!is_rotation_type(it->rotation_type))
      fail(str("has rotation_type '", it->rotation_type, "', not one of upstream's (", rotation_types_text(), ")"));
    if (rotation_width(it->rotation_type) != t.width)
      fail(str("has ", t.width, " columns, a ", it->rotation_type, " has ", rotation_width(it->rotation_type)));
    if (std::string(part) == "action" && rotation_width(target) != t.width)
      fail(str("as ", target, " would be ", rotation_width(target), " columns, its ", it->rotation_type, " ", t.width,
               " (upstream's ConcatTransform keeps an action key's width)"));
    if (spec.normalization && (!it->absolute || *spec.normalization != kMinMax || target == "matrix"))
      fail(str("is a ", it->absolute ? "" : "relative ", "rotation converted to ", target, " and normalised by ",
               normalization_rule_name(*spec.normalization),
               ": upstream normalises only absolute rotations, by min_max, to a representation other than matrix"));
    t.rotation_from = it->rotation_type, t.rotation_to = target;
  }
  if (spec.normalization && t.rotation_to.empty() && !it->continuous && *spec.normalization != kBinary)
    fail(str("is not continuous (modality.json's dtype), so upstream normalises it only by binary, not ",
             normalization_rule_name(*spec.normalization)));
  return t;
}

std::vector<KeyTransform> resolve_keys(const UpstreamDataConfig& config, const char* part,
                                       const std::vector<UpstreamKeySpec>& specs,
                                       const std::vector<ModalitySubKey>& file_keys, const std::string& file) {
  std::vector<KeyTransform> out;
  for (const UpstreamKeySpec& spec : specs) out.push_back(resolve_key(config, part, spec, file_keys, file));
  return out;
}

}  // namespace

const std::vector<UpstreamDataConfig>& upstream_data_configs() {
  static const std::vector<UpstreamDataConfig> configs = make_configs();
  return configs;
}

std::string upstream_data_config_names() {
  std::string names;
  for (const UpstreamDataConfig& c : upstream_data_configs()) names += str(names.empty() ? "" : ", ", c.name);
  return names;
}

const UpstreamDataConfig& upstream_data_config(const std::string& name) {
  for (const UpstreamDataConfig& c : upstream_data_configs())
    if (name == c.name) return c;
  throw Error(str("data.upstream_config = ", name, ": not one of GR00T-N1.5's data configs (",
                  upstream_data_config_names(), ")"),
              kExitInput);
}

std::string KeyTransformChoice::text() const {
  if (!upstream_config.empty()) return kUpstreamConfigSelection + upstream_config;
  if (state_sin_cos) return kStateSinCosSelection;
  return "neither data.upstream_config nor data.state_encoding = sin_cos";
}

KeyTransformPlan upstream_config_plan(const UpstreamDataConfig& config, const std::vector<ModalitySubKey>& state_keys,
                                      const std::vector<ModalitySubKey>& action_keys, const std::string& file) {
  KeyTransformPlan plan;
  plan.selected_by = str(kUpstreamConfigSelection, config.name);
  plan.upstream_config = config.name;
  plan.state = resolve_keys(config, "state", config.state, state_keys, file);
  plan.action = resolve_keys(config, "action", config.action, action_keys, file);
  return plan;
}

KeyTransformPlan key_transform_plan(const H5File& f, const KeyTransformChoice& choice) {
  if (!choice.upstream_config.empty())
    return upstream_config_plan(upstream_data_config(choice.upstream_config), modality_sub_keys(f, "state"),
                                modality_sub_keys(f, "action"), clipped_path(f.path()));
  if (choice.state_sin_cos) return state_sin_cos_plan(modality_sub_keys(f, "state"));
  return {};
}

void check_embodiment_key_widths(const PackedDataset& data, const KeyTransformChoice& choice) {
  for (int64_t i = 0; i < data.files(); ++i) {
    const PackedFileIndex& x = data.file(i);
    const std::set<int32_t> ids(x.episode_embodiment.begin(), x.episode_embodiment.end());
    using WidthOf = int64_t (PackedFileIndex::*)(int32_t) const;  // an embodiment's valid columns
    const auto full = [&](WidthOf width_of, int64_t file_width) {
      return std::all_of(ids.begin(), ids.end(), [&](int32_t id) { return (x.*width_of)(id) == file_width; });
    };
    // The sub-keys tile the file's columns: an embodiment of the file's widths has them all (and
    // the plan is resolved, with its own refusals, where the statistics are).
    if (full(&PackedFileIndex::action_width_of, x.action_dim) && full(&PackedFileIndex::state_width_of, x.state_dim))
      continue;
    const KeyTransformPlan plan = key_transform_plan(x.file, choice);
    const auto check = [&](const char* part, const char* dataset, const std::vector<KeyTransform>& keys,
                           WidthOf width_of) {
      const int64_t needed = raw_width(keys);
      for (int32_t id : ids) {
        const int64_t has = (x.*width_of)(id);
        if (has < needed)
          throw Error(x.file.where(dataset, str("embodiment ", id, " has ", has, " ", part, " columns, ",
                                                plan.selected_by, " needs ", needed, " (its ", part,
                                                " keys' columns of the modality attribute); pack this "
                                                "embodiment in a file of its own")),
                      kExitInput);
      }
    };
    check("action", packed::kEmbodimentActionDim, plan.action, &PackedFileIndex::action_width_of);
    check("state", packed::kEmbodimentStateDim, plan.state, &PackedFileIndex::state_width_of);
  }
}

}  // namespace emb
