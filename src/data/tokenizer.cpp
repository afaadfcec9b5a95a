#include "data/tokenizer.hpp"

#include "core/error.hpp"

namespace emb {

std::vector<int32_t> tokenize(const std::string& text) {
  std::vector<int32_t> out;
  out.reserve(text.size());
  for (unsigned char c : text) out.push_back(int32_t(c) + kByteOffset);
  return out;
}

std::string detokenize(const std::vector<int32_t>& tokens) {
  std::string out;
  for (int32_t t : tokens) {
    EMB_CHECK(t >= kByteOffset && t < kVocabSize, "token id ", t, " is not a byte token");
    out.push_back(char(t - kByteOffset));
  }
  return out;
}

}  // namespace emb
