#include "data/gr00t_embodiment_tags.hpp"

#include <array>
#include <utility>

namespace emb {
namespace {

constexpr std::array<std::pair<int, const char*>, 4> kTags{
    {{31, "new_embodiment"}, {17, "oxe_droid"}, {26, "agibot_genie1"}, {24, "gr1"}}};

}  // namespace

const char* gr00t_embodiment_tag(int id) {
  for (const auto& [tag_id, tag] : kTags)
    if (tag_id == id) return tag;
  return "";
}

int gr00t_embodiment_id(const std::string& tag) {
  for (const auto& [tag_id, name] : kTags)
    if (tag == name) return tag_id;
  return -1;
}

const char* gr00t_embodiment_tags_text() { return "new_embodiment 31, oxe_droid 17, agibot_genie1 26, gr1 24"; }

}  // namespace emb
