#include "data/key_transform.hpp"

#include "core/error.hpp"
#include "data/rotation_conversion.hpp"

namespace emb {
namespace {

constexpr NormalizationRule kRules[] = {NormalizationRule::min_max, NormalizationRule::q99, NormalizationRule::mean_std,
                                        NormalizationRule::binary};

NormalizationRule rule_named(const std::string& name, const std::string& where) {
  for (NormalizationRule r : kRules)
    if (name == normalization_rule_name(r)) return r;
  throw Error(str(where, ": unknown normalisation mode '", name, "'"));
}

nlohmann::json keys_json(const std::vector<KeyTransform>& keys) {
  nlohmann::json j = nlohmann::json::array();
  for (const KeyTransform& k : keys)
    j.push_back({{"key", k.key},
                 {"start", k.start},
                 {"width", k.width},
                 {"rotation_from", k.rotation_from},
                 {"rotation_to", k.rotation_to},
                 {"normalization", k.normalization ? normalization_rule_name(*k.normalization) : ""},
                 {"absolute", k.absolute},
                 {"sin_cos", k.sin_cos}});
  return j;
}

std::vector<KeyTransform> keys_from_json(const nlohmann::json& j, const std::string& where) {
  std::vector<KeyTransform> keys;
  for (const nlohmann::json& e : j) {
    KeyTransform k;
    k.key = e.at("key").get<std::string>();
    k.start = e.at("start").get<int64_t>(), k.width = e.at("width").get<int64_t>();
    k.rotation_from = e.at("rotation_from").get<std::string>(), k.rotation_to = e.at("rotation_to").get<std::string>();
    const std::string rule = e.at("normalization").get<std::string>();
    if (!rule.empty()) k.normalization = rule_named(rule, where);
    k.absolute = e.at("absolute").get<bool>(), k.sin_cos = e.at("sin_cos").get<bool>();
    keys.push_back(k);
  }
  return keys;
}

// A record of before its "upstream_config" field: the config named in selected_by, if any.
std::string legacy_upstream_config(const std::string& selected_by) {
  const std::string prefix = kUpstreamConfigSelection;
  return selected_by.rfind(prefix, 0) == 0 ? selected_by.substr(prefix.size()) : "";
}

}  // namespace

const char* normalization_rule_name(NormalizationRule rule) {
  switch (rule) {
    case NormalizationRule::min_max: return "min_max";
    case NormalizationRule::q99: return "q99";
    case NormalizationRule::mean_std: return "mean_std";
    case NormalizationRule::binary: return "binary";
  }
  return "";
}

int64_t KeyTransform::model_width() const {
  if (sin_cos) return 2 * width;
  return rotation_to.empty() ? width : rotation_width(rotation_to);
}

bool KeyTransform::operator==(const KeyTransform& o) const {
  return key == o.key && start == o.start && width == o.width && rotation_from == o.rotation_from &&
         rotation_to == o.rotation_to && normalization == o.normalization && absolute == o.absolute &&
         sin_cos == o.sin_cos;
}

nlohmann::json key_transform_plan_json(const KeyTransformPlan& plan) {
  return {{"selected_by", plan.selected_by},
          {"upstream_config", plan.upstream_config},
          {"state", keys_json(plan.state)},
          {"action", keys_json(plan.action)}};
}

KeyTransformPlan key_transform_plan_from_json(const nlohmann::json& j, const std::string& where) {
  KeyTransformPlan plan;
  try {
    plan.selected_by = j.at("selected_by").get<std::string>();
    plan.upstream_config = j.contains("upstream_config") ? j["upstream_config"].get<std::string>()
                                                         : legacy_upstream_config(plan.selected_by);
    plan.state = keys_from_json(j.at("state"), where);
    plan.action = keys_from_json(j.at("action"), where);
  } catch (const nlohmann::json::exception& e) {
    throw Error(str(where, ": malformed per-key transforms (", e.what(), ")"));
  }
  return plan;
}

}  // namespace emb
