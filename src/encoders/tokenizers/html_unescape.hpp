// Python's html.unescape: named references (HTML5 list, the legacy ones also without ';', the
// longest known prefix of an unknown name), decimal/hex references with the HTML5 parser's
// fix-ups (Windows-1252 for 0x80..0x9F, U+FFFD for NUL, surrogates and values past U+10FFFF,
// nothing for non-characters and most controls). Wan's text cleaning applies it twice.
#pragma once
#include <string>

namespace emb::tokenizers {

// `text` must be valid UTF-8.
std::string html_unescape(const std::string& text);

}  // namespace emb::tokenizers
