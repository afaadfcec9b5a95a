#include "encoders/tokenizers/qwen2_tokenizer.hpp"

#include "core/error.hpp"
#include "encoders/tokenizers/byte_level.hpp"
#include "encoders/tokenizers/hf_tokenizer_folder.hpp"
#include "encoders/tokenizers/qwen2_pretokenizer.hpp"
#include "encoders/tokenizers/unicode_text.hpp"

namespace emb::tokenizers {

namespace {

// Length of the UTF-8 sequence at bytes[pos] when it is well formed, else the length of its
// maximal valid prefix as a negative number (at least -1): the unit that one U+FFFD replaces
// in Python's errors="replace" and Rust's from_utf8_lossy.
int utf8_sequence(const std::string& bytes, size_t pos) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(bytes[k]); };
  const unsigned char lead = byte(pos);
  if (lead < 0x80) return 1;
  int need;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    need = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    need = 3;
    if (lead == 0xE0) lo = 0xA0;
    if (lead == 0xED) hi = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    need = 4;
    if (lead == 0xF0) lo = 0x90;
    if (lead == 0xF4) hi = 0x8F;
  } else {
    return -1;
  }
  int have = 1;
  for (; have < need && pos + size_t(have) < bytes.size(); ++have) {
    const unsigned char b = byte(pos + size_t(have));
    const bool ok = have == 1 ? (b >= lo && b <= hi) : (b >= 0x80 && b <= 0xBF);
    if (!ok) break;
  }
  return have == need ? need : -have;
}

std::string replace_invalid_utf8(const std::string& bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (size_t pos = 0; pos < bytes.size();) {
    const int n = utf8_sequence(bytes, pos);
    if (n > 0) {
      out.append(bytes, pos, size_t(n));
      pos += size_t(n);
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD
      pos += size_t(-n);
    }
  }
  return out;
}

}  // namespace

Qwen2Tokenizer::Qwen2Tokenizer(const std::string& folder) {
  Qwen2TokenizerFiles files = read_qwen2_tokenizer_folder(folder);
  folder_ = folder;
  bpe_ = std::make_shared<const BpeModel>(std::move(files.vocab), files.merges, files.vocab_where);
  added_ = std::make_shared<const std::vector<AddedToken>>(std::move(files.added_tokens));
  size_t id_end = bpe_->id_end();
  for (const AddedToken& t : *added_) id_end = std::max(id_end, size_t(t.id) + 1);
  added_by_id_.assign(id_end, nullptr);
  for (const AddedToken& t : *added_) {
    (t.normalized ? normalized_tokens_ : raw_tokens_).push_back(&t);
    added_by_id_[size_t(t.id)] = &t;
  }
  eos_token_ = files.eos_token;
  pad_token_ = files.pad_token;
  chat_template_ = files.chat_template;
}

void Qwen2Tokenizer::encode_plain(const std::string& text, std::vector<int32_t>& ids) const {
  const std::u32string code_points = decode_utf8(text, folder_ + ": text to encode");
  for (const auto& [begin, end] : qwen2_pretokenize(code_points)) {
    bpe_->encode_piece(encode_utf8(code_points.substr(begin, end - begin)), ids);
  }
}

std::vector<int32_t> Qwen2Tokenizer::encode(const std::string& text) const {
  decode_utf8(text, folder_ + ": text to encode");  // refuse bad input before any work
  std::vector<int32_t> ids;
  for (const TextSegment& raw : split_added_tokens(text, raw_tokens_)) {
    if (raw.token >= 0) {
      ids.push_back(raw.token);
      continue;
    }
    // HF normalises what is left between the raw-matched tokens, then matches the others.
    const std::string normalized = nfc(text.substr(raw.begin, raw.end - raw.begin));
    for (const TextSegment& seg : split_added_tokens(normalized, normalized_tokens_)) {
      if (seg.token >= 0) {
        ids.push_back(seg.token);
      } else {
        encode_plain(normalized.substr(seg.begin, seg.end - seg.begin), ids);
      }
    }
  }
  return ids;
}

std::string Qwen2Tokenizer::decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const {
  std::string bytes;
  for (const int32_t id : ids) {
    const AddedToken* added = id >= 0 && size_t(id) < added_by_id_.size() ? added_by_id_[size_t(id)] : nullptr;
    if (added && added->special && skip_special_tokens) continue;
    const std::string* token = added ? &added->content : bpe_->token(id);
    EMB_CHECK(token, folder_, ": cannot decode token id ", id, " (not in the vocabulary or the added tokens)");
    // HF's ByteLevel decoder maps every character of every token, added ones included, back to
    // its byte; a character outside the byte map stays as its own UTF-8.
    for (const char32_t c : decode_utf8(*token, folder_ + ": token")) {
      const int b = byte_level_byte(c);
      if (b >= 0) {
        bytes.push_back(char(b));
      } else {
        append_utf8(bytes, c);
      }
    }
  }
  return replace_invalid_utf8(bytes);
}

int32_t Qwen2Tokenizer::token_id(const std::string& added_token) const {
  for (const AddedToken& t : *added_) {
    if (t.content == added_token) return t.id;
  }
  throw Error(str(folder_, ": the tokenizer has no added token ", emb::quoted(added_token),
                  " (tokenizer_config.json, added_tokens.json, tokenizer.json)"));
}

int32_t Qwen2Tokenizer::named_token_id(const std::string& content, const char* role) const {
  EMB_CHECK(!content.empty(), folder_, ": tokenizer_config.json sets no ", role);
  const int32_t vocab_id = bpe_->id(content);
  for (const AddedToken& t : *added_) {
    if (t.content == content) return t.id;
  }
  EMB_CHECK(vocab_id >= 0, folder_, ": ", role, " ", emb::quoted(content), " is not a token of the tokenizer");
  return vocab_id;
}

int32_t Qwen2Tokenizer::eos_id() const { return named_token_id(eos_token_, "eos_token"); }
int32_t Qwen2Tokenizer::pad_id() const { return named_token_id(pad_token_, "pad_token"); }

}  // namespace emb::tokenizers
