// The byte-level tokenizer of packed files: an instruction's token ids are its UTF-8 bytes
// plus kByteOffset (ids 0..2 are reserved: 0 pad, 1 begin, 2 end; none is inserted into
// /tasks/tokens), so the vocabulary is 259 ids, any text round-trips exactly and the token
// count is the byte count (DATA.md's 5-60 token instructions are 5-60 bytes).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace emb {

constexpr int32_t kByteOffset = 3;
constexpr int32_t kVocabSize = 256 + kByteOffset;

std::vector<int32_t> tokenize(const std::string& text);
// Throws emb::Error on an id outside the byte range.
std::string detokenize(const std::vector<int32_t>& tokens);

}  // namespace emb
