#include "core/error.hpp"

#include <cstdio>

namespace emb {

std::string clipped(const std::string& text) {
  constexpr size_t kMax = 80, kShown = 60;
  const size_t shown = text.size() > kMax ? kShown : text.size();
  std::string out;
  for (size_t i = 0; i < shown; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += char(c);
    }
  }
  if (shown < text.size()) out += str("... (", text.size(), " bytes, truncated)");
  return out;
}

std::string quoted(const std::string& text) { return "'" + clipped(text) + "'"; }

}  // namespace emb
