#include "lerobot_modality.hpp"

#include <nlohmann/json.hpp>

namespace emb {

std::string lerobot_modality_attribute(const LerobotDataset& d) {
  if (!d.has_modality) return "";
  nlohmann::json m;
  for (const auto& [part, slices] : {std::make_pair("state", &d.state), std::make_pair("action", &d.action)}) {
    m[part] = nlohmann::json::object();
    int64_t at = 0;
    for (const ColumnSlice& s : *slices) {
      m[part][s.name] = {{"start", at}, {"end", at + s.end - s.start}, {"absolute", s.absolute},
                         {"rotation_type", s.rotation_type.empty() ? nlohmann::json() : nlohmann::json(s.rotation_type)},
                         {"continuous", s.continuous}};
      at += s.end - s.start;
    }
  }
  m["video"] = nlohmann::json::object();
  for (const LerobotCamera& c : d.cameras)
    m["video"][c.view] = {{"resolution", {c.width, c.height}}, {"channels", c.channels}, {"fps", c.fps}};
  return m.dump();
}

}  // namespace emb
