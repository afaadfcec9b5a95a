// Byte-level BPE: a vocabulary (token -> id) and ranked merges, applied to one pre-tokenised
// piece at a time as GPT-2/Qwen2's bpe() does: repeatedly merge the adjacent pair of lowest rank
// (all its occurrences, left to right) until no pair has a rank. A heap over pair positions
// gives the same result in O(n log n), so a long run of letters (CJK text has no spaces) stays
// cheap. Results are cached per piece, as upstream caches them.
#pragma once
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace emb::tokenizers {

struct BpeMerge {
  std::string left, right;
  std::string where;  // "merges.txt:12" or "tokenizer.json: model.merges[10]", for errors
};

class BpeModel {
 public:
  // Throws emb::Error naming `vocab_where` or the merge's `where` when a byte's character is
  // missing from the vocabulary, a merge's parts or result are not in it, or a merge repeats.
  BpeModel(std::unordered_map<std::string, int32_t> vocab, const std::vector<BpeMerge>& merges,
           const std::string& vocab_where);

  // Appends the ids of one piece, given as its raw UTF-8 bytes.
  void encode_piece(const std::string& piece, std::vector<int32_t>& ids) const;

  // Token (byte-level characters) of an id; nullptr outside the vocabulary.
  const std::string* token(int32_t id) const;
  // Id of a vocabulary token, -1 when absent.
  int32_t id(const std::string& token) const;
  // One past the largest id.
  size_t id_end() const { return tokens_.size(); }

 private:
  struct MergeTarget {
    int32_t rank, merged;
  };
  std::vector<int32_t> merge_piece(const std::string& piece) const;

  std::unordered_map<std::string, int32_t> vocab_;
  std::vector<std::string> tokens_;  // by id; "" for ids the vocabulary skips
  std::vector<uint8_t> has_token_;
  int32_t byte_ids_[256];
  std::unordered_map<uint64_t, MergeTarget> merges_;  // (left id << 32 | right id) -> rank, result

  // Pieces repeat (" the", " robot"): their ids are kept, up to kCacheLimit pieces.
  static constexpr size_t kCacheLimit = 1 << 16;
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<int32_t>> cache_;
};

}  // namespace emb::tokenizers
