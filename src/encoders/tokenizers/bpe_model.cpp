#include "encoders/tokenizers/bpe_model.hpp"

#include <queue>
#include <tuple>

#include "core/error.hpp"
#include "encoders/tokenizers/byte_level.hpp"

namespace emb::tokenizers {

namespace {

uint64_t pair_key(int32_t left, int32_t right) { return (uint64_t(uint32_t(left)) << 32) | uint32_t(right); }

}  // namespace

BpeModel::BpeModel(std::unordered_map<std::string, int32_t> vocab, const std::vector<BpeMerge>& merges,
                   const std::string& vocab_where)
    : vocab_(std::move(vocab)) {
  int32_t max_id = -1;
  for (const auto& [token, id] : vocab_) {
    EMB_CHECK(id >= 0, vocab_where, ": token ", emb::quoted(token), " has negative id ", id);
    max_id = std::max(max_id, id);
  }
  tokens_.assign(size_t(max_id + 1), std::string());
  has_token_.assign(size_t(max_id + 1), 0);
  for (const auto& [token, id] : vocab_) {
    EMB_CHECK(!has_token_[size_t(id)], vocab_where, ": id ", id, " is given to both ", emb::quoted(tokens_[size_t(id)]),
              " and ", emb::quoted(token));
    tokens_[size_t(id)] = token;
    has_token_[size_t(id)] = 1;
  }
  // Byte-level BPE starts from one symbol per byte, so every byte's character must be a token.
  for (int b = 0; b < 256; ++b) {
    const auto it = vocab_.find(byte_level_chars()[size_t(b)]);
    EMB_CHECK(it != vocab_.end(), vocab_where, ": no token for byte ", b, " (",
              emb::quoted(byte_level_chars()[size_t(b)]), "); not a byte-level BPE vocabulary");
    byte_ids_[b] = it->second;
  }
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const BpeMerge& m = merges[rank];
    const auto left = vocab_.find(m.left), right = vocab_.find(m.right), merged = vocab_.find(m.left + m.right);
    EMB_CHECK(left != vocab_.end(), m.where, ": merge part ", emb::quoted(m.left), " is not in the vocabulary");
    EMB_CHECK(right != vocab_.end(), m.where, ": merge part ", emb::quoted(m.right), " is not in the vocabulary");
    EMB_CHECK(merged != vocab_.end(), m.where, ": merge result ", emb::quoted(m.left + m.right),
              " is not in the vocabulary");
    const bool fresh = merges_.emplace(pair_key(left->second, right->second),
                                       MergeTarget{int32_t(rank), merged->second}).second;
    EMB_CHECK(fresh, m.where, ": merge ", emb::quoted(m.left + " " + m.right), " repeats an earlier line");
  }
}

const std::string* BpeModel::token(int32_t id) const {
  if (id < 0 || size_t(id) >= tokens_.size() || !has_token_[size_t(id)]) return nullptr;
  return &tokens_[size_t(id)];
}

int32_t BpeModel::id(const std::string& token) const {
  const auto it = vocab_.find(token);
  return it == vocab_.end() ? -1 : it->second;
}

std::vector<int32_t> BpeModel::merge_piece(const std::string& piece) const {
  struct Symbol {
    int32_t id;
    int prev, next;  // neighbours in the shrinking word, -1 at the ends
  };
  std::vector<Symbol> word(piece.size());
  for (size_t i = 0; i < piece.size(); ++i) {
    word[i] = {byte_ids_[static_cast<unsigned char>(piece[i])], int(i) - 1, i + 1 < piece.size() ? int(i) + 1 : -1};
  }
  // Candidates ordered by (rank, position): the lowest rank first and, within one rank (one
  // pair), left to right, which is the order upstream's loop merges in. A merge never creates
  // a pair of the rank being merged, so popping stale entries lazily is enough.
  using Candidate = std::tuple<int32_t, int, int32_t, int32_t>;  // rank, left position, left id, right id
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> heap;
  const auto push_pair = [&](int left) {
    if (left < 0 || word[size_t(left)].next < 0) return;
    const int32_t a = word[size_t(left)].id, b = word[size_t(word[size_t(left)].next)].id;
    const auto it = merges_.find(pair_key(a, b));
    if (it != merges_.end()) heap.emplace(it->second.rank, left, a, b);
  };
  for (size_t i = 0; i + 1 < word.size(); ++i) push_pair(int(i));
  std::vector<uint8_t> alive(word.size(), 1);
  while (!heap.empty()) {
    const auto [rank, left, a, b] = heap.top();
    heap.pop();
    Symbol& s = word[size_t(left)];
    if (!alive[size_t(left)] || s.next < 0 || s.id != a || word[size_t(s.next)].id != b) continue;
    const int right = s.next;
    s.id = merges_.at(pair_key(a, b)).merged;
    alive[size_t(right)] = 0;
    s.next = word[size_t(right)].next;
    if (s.next >= 0) word[size_t(s.next)].prev = left;
    push_pair(s.prev);
    push_pair(left);
  }
  std::vector<int32_t> ids;
  for (int i = word.empty() ? -1 : 0; i >= 0; i = word[size_t(i)].next) ids.push_back(word[size_t(i)].id);
  return ids;
}

void BpeModel::encode_piece(const std::string& piece, std::vector<int32_t>& ids) const {
  {
    const std::lock_guard<std::mutex> lock(cache_mutex_);
    const auto it = cache_.find(piece);
    if (it != cache_.end()) {
      ids.insert(ids.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<int32_t> merged = merge_piece(piece);
  ids.insert(ids.end(), merged.begin(), merged.end());
  const std::lock_guard<std::mutex> lock(cache_mutex_);
  if (cache_.size() >= kCacheLimit) cache_.clear();
  cache_.emplace(piece, std::move(merged));
}

}  // namespace emb::tokenizers
