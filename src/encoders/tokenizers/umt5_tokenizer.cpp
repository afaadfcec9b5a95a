#include "encoders/tokenizers/umt5_tokenizer.hpp"

#include <sentencepiece_processor.h>

#include <filesystem>

#include "core/error.hpp"
#include "core/fs.hpp"
#include "encoders/tokenizers/wan_text_clean.hpp"

namespace emb::tokenizers {

Umt5Tokenizer::Umt5Tokenizer(const std::string& path) {
  model_path_ = std::filesystem::is_directory(path) ? path + "/spiece.model" : path;
  EMB_CHECK(path_exists(model_path_), model_path_, ": missing (umT5's SentencePiece model)");
  auto processor = std::make_shared<sentencepiece::SentencePieceProcessor>();
  const auto status = processor->Load(model_path_);
  EMB_CHECK(status.ok(), model_path_, ": not a SentencePiece model (", status.ToString(), ")");
  // umT5, like T5, ends every text with </s> and pads with <pad>; the ids come from the model.
  eos_id_ = processor->PieceToId("</s>");
  pad_id_ = processor->PieceToId("<pad>");
  EMB_CHECK(eos_id_ != processor->unk_id() && processor->IdToPiece(eos_id_) == "</s>", model_path_,
            ": the model has no </s> piece");
  EMB_CHECK(pad_id_ != processor->unk_id() && processor->IdToPiece(pad_id_) == "<pad>", model_path_,
            ": the model has no <pad> piece");
  processor_ = std::move(processor);
}

Umt5Tokenizer::~Umt5Tokenizer() = default;

std::vector<int32_t> Umt5Tokenizer::encode_pieces(const std::string& cleaned) const {
  std::vector<int> ids;
  const auto status = processor_->Encode(cleaned, &ids);
  EMB_CHECK(status.ok(), model_path_, ": cannot encode ", emb::quoted(cleaned), " (", status.ToString(), ")");
  return std::vector<int32_t>(ids.begin(), ids.end());
}

Umt5Tokens Umt5Tokenizer::encode(const std::string& text, int seq_len) const {
  EMB_CHECK(seq_len >= 1, "umT5 tokenizer: seq_len must be at least 1, got ", seq_len);
  std::vector<int32_t> ids = encode_pieces(wan_clean_text(text));
  // HF truncation keeps room for the </s> it then appends.
  if (ids.size() > size_t(seq_len - 1)) ids.resize(size_t(seq_len - 1));
  ids.push_back(eos_id_);
  Umt5Tokens out;
  out.length = int(ids.size());
  out.mask.assign(size_t(seq_len), 0);
  std::fill(out.mask.begin(), out.mask.begin() + out.length, 1);
  ids.resize(size_t(seq_len), pad_id_);
  out.ids = std::move(ids);
  return out;
}

}  // namespace emb::tokenizers
