#include "encoders/tokenizers/byte_level.hpp"

#include "encoders/tokenizers/unicode_text.hpp"

namespace emb::tokenizers {

namespace {

bool maps_to_itself(int b) { return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); }

struct ByteMap {
  std::array<std::string, 256> chars;
  std::array<int, 256> shifted_bytes{};  // byte of U+0100 + k, for k < shifted
  int shifted = 0;
  ByteMap() {
    for (int b = 0; b < 256; ++b) {
      // The bytes that are not printable take U+0100.. in byte order.
      const char32_t c = maps_to_itself(b) ? char32_t(b) : char32_t(0x100 + shifted);
      if (!maps_to_itself(b)) shifted_bytes[size_t(shifted++)] = b;
      append_utf8(chars[size_t(b)], c);
    }
  }
};

const ByteMap& byte_map() {
  static const ByteMap map;
  return map;
}

}  // namespace

const std::array<std::string, 256>& byte_level_chars() { return byte_map().chars; }

int byte_level_byte(char32_t c) {
  if (c < 0x100) return maps_to_itself(int(c)) ? int(c) : -1;
  const char32_t k = c - 0x100;
  return k < char32_t(byte_map().shifted) ? byte_map().shifted_bytes[k] : -1;
}

}  // namespace emb::tokenizers
