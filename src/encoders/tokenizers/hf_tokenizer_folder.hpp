// The tokenizer files of a HF checkpoint folder that holds a Qwen2 byte-level BPE tokenizer:
// vocab.json + merges.txt, or tokenizer.json; the added tokens with their flags
// (tokenizer_config.json's added_tokens_decoder, added_tokens.json, tokenizer.json's
// added_tokens); eos/pad names; and the processor's chat template (chat_template.json).
// Everything a later step needs is checked here, so that a bad folder fails at load with one
// line naming the file (and line, for merges.txt), never at the first odd text.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "encoders/tokenizers/added_tokens.hpp"
#include "encoders/tokenizers/bpe_model.hpp"

namespace emb::tokenizers {

struct Qwen2TokenizerFiles {
  std::string folder;
  std::unordered_map<std::string, int32_t> vocab;
  std::string vocab_where;  // the file the vocabulary came from
  std::vector<BpeMerge> merges;  // in rank order
  std::vector<AddedToken> added_tokens;
  std::string eos_token, pad_token;  // contents; "" when the folder sets none
  std::string chat_template;         // chat_template.json's "chat_template"; "" when absent
};

Qwen2TokenizerFiles read_qwen2_tokenizer_folder(const std::string& folder);

}  // namespace emb::tokenizers
