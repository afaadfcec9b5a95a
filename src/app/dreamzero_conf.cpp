#include "app/dreamzero_conf.hpp"

#include <sstream>

namespace emb {

namespace {

bool starts_with(const std::string& line, const char* prefix) { return line.rfind(prefix, 0) == 0; }

// A line of the value of the top-level key above it: a list item or an indented line.
bool continues_value(const std::string& line) { return starts_with(line, "- ") || starts_with(line, " ") || line == "-"; }

std::string keys_entry(const std::vector<std::string>& keys) {
  if (keys.empty()) return "relative_action_keys: []\n";
  std::string s = "relative_action_keys:\n";
  for (const std::string& k : keys) s += "- " + k + "\n";
  return s;
}

}  // namespace

std::string conf_with_relative_actions(const std::string& yaml, const std::vector<std::string>& keys) {
  const std::string flag = keys.empty() ? "relative_action: false\n" : "relative_action: true\n";
  std::istringstream in(yaml);
  std::string out, line;
  bool has_flag = false, has_keys = false, skipping = false;
  while (std::getline(in, line)) {
    if (skipping && continues_value(line)) continue;
    skipping = false;
    if (starts_with(line, "relative_action:")) {
      out += flag, has_flag = true;
    } else if (starts_with(line, "relative_action_keys:")) {
      out += keys_entry(keys), has_keys = skipping = true;
    } else {
      out += line + "\n";
    }
  }
  if (!has_flag) out += flag;
  if (!has_keys) out += keys_entry(keys);
  return out;
}

}  // namespace emb
