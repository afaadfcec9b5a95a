#include "core/error.hpp"

#include <cstdio>

namespace emb {

namespace {

// `text` with control bytes escaped; longer than `longest` bytes, its first `shown_when_cut`
// bytes and the length.
std::string clip(const std::string& text, size_t longest, size_t shown_when_cut) {
  const size_t shown = text.size() > longest ? shown_when_cut : text.size();
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

}  // namespace

std::string clipped(const std::string& text) { return clip(text, 80, 60); }

std::string clipped_path(const std::string& path) { return clip(path, 4096, 4000); }

std::string quoted(const std::string& text) { return "'" + clipped(text) + "'"; }

std::string quoted_name(const std::string& name) { return "'" + clip(name, 1024, 1000) + "'"; }

}  // namespace emb
