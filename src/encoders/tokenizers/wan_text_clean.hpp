// The text cleaning of Wan2.1's HuggingfaceTokenizer(clean='whitespace'), which DreamZero uses
// for umT5 prompts (wan/modules/tokenizers.py; DreamZero's dreamzero_cotrain.py has a copy):
//   ftfy.fix_text, html.unescape twice, strip, every \s+ run to one space, strip.
// ftfy cannot be reproduced in full in C++. Of fix_text's steps (ftfy 6 defaults, repeated until
// nothing changes), these are implemented: terminal escapes (ESC[..letter) removed; Latin
// ligatures split (Ĳ ĳ ﬀ ﬁ ﬂ ﬃ ﬄ ﬅ ﬆ); full/half-width forms U+FF01..U+FFEF and U+3000 to
// their NFKC; curly quotes U+2018..U+201B to ' and U+201C..U+201F to "; line breaks to \n;
// control characters removed (U+0000..0008, 000B, 000E..001F, 007F, 206A..206F, FEFF,
// FFF9..FFFC, 1D173..1D17A, E0000..E007F); NFC. Not implemented, so text needing them differs:
// fix_encoding (mojibake repair such as "Ã©" -> "é", and the C1/Windows-1252 and lossy
// sequence repairs that belong to it) and ftfy's own entity unescaping (it unescapes
// ';'-terminated entities on lines without both '<' and '>', repeatedly, so "&amp;amp;amp;"
// ends as "&" upstream but "&amp;" here after html.unescape's two rounds). Ordinary ASCII and
// Latin-1 text goes through none of these and is cleaned exactly (tested).
#pragma once
#include <string>

namespace emb::tokenizers {

// The ftfy.fix_text steps listed above, on valid UTF-8.
std::string fix_text_subset(const std::string& text);
// The whole clean='whitespace' pipeline; throws emb::Error on invalid UTF-8.
std::string wan_clean_text(const std::string& text);

}  // namespace emb::tokenizers
