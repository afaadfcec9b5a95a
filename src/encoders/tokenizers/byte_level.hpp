// GPT-2's reversible byte <-> character map (bytes_to_unicode): byte-level BPE vocabularies
// spell every byte as a printable character, the printable Latin-1 bytes as themselves and the
// other 68 as U+0100.. in byte order, so that no vocabulary entry holds a space or a control.
#pragma once
#include <array>
#include <string>

namespace emb::tokenizers {

// UTF-8 of the character that stands for each byte.
const std::array<std::string, 256>& byte_level_chars();
// The byte a character stands for, or -1 for a character outside the map.
int byte_level_byte(char32_t c);

}  // namespace emb::tokenizers
