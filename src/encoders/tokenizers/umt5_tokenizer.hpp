// umT5's tokenizer as Wan2.1/DreamZero call it: HuggingfaceTokenizer(name, seq_len=512,
// clean='whitespace') -> the text cleaned (wan_text_clean.hpp), SentencePiece ids, </s>
// appended, truncated to seq_len - 1 ids + </s>, padded with <pad> (id 0 in umT5) to seq_len,
// with the attention mask. The ids come from the checkpoint's SentencePiece model itself
// (libsentencepiece), which HF's T5TokenizerFast is converted from; after the cleaning the text
// has single spaces only, where the two could differ. Not reproduced: HF splits added tokens
// written in the text ("</s>", "<extra_id_0>") out as their ids; here they are plain text.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace emb::tokenizers {

struct Umt5Tokens {
  std::vector<int32_t> ids;   // [seq_len] text ids, </s>, then <pad>
  std::vector<uint8_t> mask;  // [seq_len] 1 on the text and </s>, 0 on padding
  int length = 0;             // number of 1s in mask (Wan's seq_lens)
};

class Umt5Tokenizer {
 public:
  // `path` is the SentencePiece model (spiece.model) or a checkpoint folder holding it; throws
  // emb::Error naming the file when it is missing or does not load, or lacks </s> or <pad>.
  explicit Umt5Tokenizer(const std::string& path);
  ~Umt5Tokenizer();

  Umt5Tokens encode(const std::string& text, int seq_len = 512) const;
  // SentencePiece ids of already cleaned text, nothing appended.
  std::vector<int32_t> encode_pieces(const std::string& cleaned) const;

  int32_t eos_id() const { return eos_id_; }
  int32_t pad_id() const { return pad_id_; }

 private:
  std::string model_path_;
  std::shared_ptr<const sentencepiece::SentencePieceProcessor> processor_;
  int32_t eos_id_ = -1, pad_id_ = -1;
};

}  // namespace emb::tokenizers
