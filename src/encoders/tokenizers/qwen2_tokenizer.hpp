// Qwen2's byte-level BPE tokenizer as HF transformers 4.51.3 applies it (Qwen2TokenizerFast,
// converted from Qwen2Tokenizer's files when the folder has no tokenizer.json, as GR00T's Eagle
// 2.5 folder does): added tokens cut out first, NFC, Qwen2's split pattern, GPT-2's byte map,
// BPE by merge rank, ids from the vocabulary; no BOS/EOS is added.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "encoders/tokenizers/added_tokens.hpp"
#include "encoders/tokenizers/bpe_model.hpp"

namespace emb::tokenizers {

class Qwen2Tokenizer {
 public:
  // Reads the tokenizer files of a checkpoint folder (see hf_tokenizer_folder.hpp); throws
  // emb::Error naming the file that is missing or malformed.
  explicit Qwen2Tokenizer(const std::string& folder);

  // Ids of a UTF-8 text; throws emb::Error on bytes that are not UTF-8.
  std::vector<int32_t> encode(const std::string& text) const;
  // Text of ids (invalid UTF-8 from partial byte sequences becomes U+FFFD, as HF's
  // errors="replace"); added tokens marked special are dropped when skip_special_tokens.
  std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens = false) const;

  // Id of an added token such as "<IMG_CONTEXT>"; throws emb::Error naming the folder when the
  // tokenizer has no such token.
  int32_t token_id(const std::string& added_token) const;
  int32_t eos_id() const;  // tokenizer_config.json's eos_token (<|im_end|> for Eagle 2.5)
  int32_t pad_id() const;  // its pad_token (<|endoftext|>); GR00T pads batches on the left with it
  const std::string& folder() const { return folder_; }
  // The processor's chat template (chat_template.json), "" when the folder has none.
  const std::string& chat_template() const { return chat_template_; }

 private:
  void encode_plain(const std::string& text, std::vector<int32_t>& ids) const;
  int32_t named_token_id(const std::string& content, const char* role) const;

  std::string folder_;
  std::shared_ptr<const BpeModel> bpe_;
  // Shared, so that the pointers below stay valid in copies of the tokenizer.
  std::shared_ptr<const std::vector<AddedToken>> added_;
  std::vector<const AddedToken*> raw_tokens_, normalized_tokens_;  // matched before / after NFC
  std::vector<const AddedToken*> added_by_id_;                    // indexed by id, nullptr if none
  std::string eos_token_, pad_token_, chat_template_;
};

}  // namespace emb::tokenizers
