#include "weights/strict_json.hpp"

#include <set>
#include <vector>

#include "core/error.hpp"

namespace emb {

nlohmann::json parse_json_strict(const std::string& text, const std::string& where) {
  using Event = nlohmann::json::parse_event_t;
  struct OpenObject {
    std::string name;  // the key it is the value of ("" at the root)
    std::set<std::string> keys;
    std::string last_key;
  };
  std::vector<OpenObject> open;
  std::string duplicate;  // the first repeated key, described
  auto watch = [&](int, Event event, nlohmann::json& parsed) {
    if (event == Event::object_start) {
      open.push_back({open.empty() ? "" : open.back().last_key, {}, {}});
    } else if (event == Event::object_end) {
      open.pop_back();
    } else if (event == Event::key) {
      OpenObject& object = open.back();
      object.last_key = parsed.get<std::string>();
      if (!object.keys.insert(object.last_key).second && duplicate.empty())
        duplicate = str("key ", emb::quoted_name(object.last_key), " appears twice",
                        object.name.empty() ? "" : str(" in ", emb::quoted_name(object.name)));
    }
    return true;
  };
  nlohmann::json parsed;
  try {
    parsed = nlohmann::json::parse(text, watch);
  } catch (const nlohmann::json::parse_error& e) {
    // "[json.exception.parse_error.101] parse error at line 1, column 9: syntax error ...;
    // last read: '<token>'": keep the position and reason (no raw bytes), drop the id and
    // the token, which can be megabytes of an unterminated string.
    std::string reason = e.what();
    reason = reason.substr(reason.find("] ") + 2);
    reason = reason.substr(0, reason.find("; last read"));
    throw Error(str(where, ": JSON does not parse: ", reason));
  }
  EMB_CHECK(duplicate.empty(), where, ": ", duplicate);
  return parsed;
}

}  // namespace emb
