#include "data/shuffle_buffer.hpp"

#include <algorithm>
#include <cstring>

#include "comm/host_collectives.hpp"
#include "core/error.hpp"
#include "data/packed_format.hpp"

namespace emb {

namespace {

// Grows without shrinking (a remap would first-touch every page again); +25% headroom so
// buffers of slightly different sizes reuse one mapping.
void fit(Arena& a, size_t bytes) {
  if (bytes > a.capacity()) a.reserve(bytes + bytes / 4);
  a.reset();
}

size_t aligned(size_t bytes) { return (bytes + 63) & ~size_t(63); }

// Calls f(begin, end) for the parts of `rows` (intervals of buffer rows) inside [lo, hi).
template <class F>
void for_each_within(const RowRanges& rows, int64_t lo, int64_t hi, F f) {
  for (const auto& r : rows.ranges()) {
    int64_t b = std::max(r[0], lo), e = std::min(r[1], hi);
    if (b < e) f(b, e);
  }
}

int64_t rows_within(const RowRanges& rows, int64_t lo, int64_t hi) {
  int64_t n = 0;
  for_each_within(rows, lo, hi, [&](int64_t b, int64_t e) { n += e - b; });
  return n;
}

}  // namespace

int64_t ShuffleBuffer::load(const PackedDataset& data, const std::vector<Chunk>& chunks, const TokenConfig& cfg,
                            const std::vector<BufferSample>& samples, const NodeLayout& nodes, int64_t epoch) {
  files_.resize(size_t(data.files()));
  for (FileRows& r : files_)
    for (RowRanges* rr : {&r.steps, &r.actions, &r.features, &r.clip_rows}) rr->clear();
  bool gr00t = cfg.family == Family::gr00t;
  for (const Chunk& c : chunks) {
    const PackedFileIndex& x = data.file(c.file);
    FileRows& r = files_[size_t(c.file)];
    if (gr00t) {
      r.steps.add(c.begin, c.end);
      r.actions.add(c.begin, std::min(x.steps, c.end + cfg.horizon - 1));
    } else if (x.dreamzero_layout()) {  // a clip's states and actions lie ahead of its first step
      r.steps.add(c.begin, std::min(x.steps, c.end + x.clip_reach(cfg)));
      r.actions.add(c.begin, std::min(x.steps, c.end + x.clip_reach(cfg)));
      if (!x.online_vl()) r.clip_rows.add(c.begin * x.clip_tokens, c.end * x.clip_tokens);
    } else {
      r.steps.add(c.begin, c.end);
      int64_t reach = int64_t(cfg.latent_frames) * x.steps_per_latent;
      r.actions.add(std::max<int64_t>(0, c.begin - reach), std::min(x.steps, c.end + cfg.actions_per_block));
    }
    if (!x.online_vl()) r.features.add(x.feature_rows(c.begin, cfg).first, x.feature_rows(c.end - 1, cfg).second);
  }
  size_t bytes = 0, feature_bytes = 0;
  for (int32_t f = 0; f < int32_t(files_.size()); ++f) {
    FileRows& r = files_[size_t(f)];
    const PackedFileIndex& x = data.file(f);
    for (RowRanges* rr : {&r.steps, &r.actions, &r.features, &r.clip_rows}) rr->finish();
    r.state_dim = x.state_dim, r.action_dim = x.action_dim, r.clip_dim = x.clip_dim;
    const int64_t channels = x.dreamzero_layout() ? x.latent_file_channels : cfg.latent_channels;
    r.feature_elems = gr00t ? cfg.d_ctx : int64_t(cfg.latent_height) * cfg.latent_width * channels;
    r.frame_bytes = x.frame_height * x.frame_width * 3;
    bytes += aligned(size_t(r.steps.rows() * r.state_dim) * 4) + aligned(size_t(r.actions.rows() * r.action_dim) * 4);
    bytes += x.video_views.size() * aligned(size_t(r.steps.rows() * r.frame_bytes));
    bytes += aligned(size_t(r.clip_rows.rows() * r.clip_dim) * 2);
    feature_bytes += aligned(size_t(r.features.rows() * r.feature_elems) * 2);
  }
  fit(rows_, bytes);
  features_.fit(feature_bytes, nodes.node);  // the same size on every rank: the same chunks
  file_bytes_ = 0;
  for (const FileRows& r : files_)
    file_bytes_ += (r.steps.rows() * r.state_dim + r.actions.rows() * r.action_dim) * 4 +
                   (r.features.rows() * r.feature_elems + r.clip_rows.rows() * r.clip_dim) * 2;
  for (int32_t f = 0; f < int32_t(files_.size()); ++f)
    file_bytes_ += files_[size_t(f)].steps.rows() * files_[size_t(f)].frame_bytes * int64_t(data.file(f).video_views.size());
  int64_t read = 0;
  char* block = features_.data();
  for (int32_t f = 0; f < int32_t(files_.size()); ++f) {
    FileRows& r = files_[size_t(f)];
    if (r.steps.ranges().empty()) continue;  // every rank skips the same files
    const PackedFileIndex& x = data.file(f);
    r.state = rows_.alloc<float>(size_t(r.steps.rows() * r.state_dim));
    r.action = rows_.alloc<float>(size_t(r.actions.rows() * r.action_dim));
    r.feature_values = reinterpret_cast<uint16_t*>(block);
    block += aligned(size_t(r.features.rows() * r.feature_elems) * 2);
    read += x.file.read_rows(packed::kState, Elem::f32, r.steps, r.state);
    read += x.file.read_rows(packed::kAction, Elem::f32, r.actions, r.action);
    if (x.dreamzero_layout() && !x.online_vl()) {  // every rank reads the CLIP rows whole, as the state rows
      r.clip = rows_.alloc<uint16_t>(size_t(r.clip_rows.rows() * r.clip_dim));
      read += x.file.read_rows(packed::kClipFeatures, Elem::f16, r.clip_rows, r.clip);
    }
    if (x.online_vl()) {
      read += read_frames(x, r);
      continue;
    }
    read += x.file.read_rows(x.feature_dataset(epoch), Elem::f16, r.features, r.feature_values, nodes.rank, nodes.size);
    if (nodes.nodes() > 1) exchange_between_nodes(x, r, f, cfg, samples, nodes);
  }
  features_.publish();
  return read;
}

// Online vl: every rank reads the buffer's frames of every view whole, as it reads the state rows.
int64_t ShuffleBuffer::read_frames(const PackedFileIndex& x, FileRows& r) {
  r.frames.clear();
  int64_t read = 0;
  for (const std::string& view : x.video_views) {
    r.frames.push_back(rows_.alloc<uint8_t>(size_t(r.steps.rows() * r.frame_bytes)));
    read += x.file.read_rows(str(packed::kVideo, "/", view), Elem::u8, r.steps, r.frames.back());
  }
  return read;
}

void ShuffleBuffer::exchange_between_nodes(const PackedFileIndex& x, FileRows& r, int32_t file, const TokenConfig& cfg,
                                           const std::vector<BufferSample>& samples, const NodeLayout& nodes) {
  int rank = nodes.rank, ranks = nodes.size, home = nodes.node_of[size_t(rank)];
  // need[n]: the buffer rows of the features node n's samples read; rank k read the share
  // [R·k/N, R·(k+1)/N) into its node's block. Every rank derives every node's needs, so no
  // requests are sent.
  std::vector<RowRanges> need(size_t(nodes.nodes()));
  for (const BufferSample& s : samples) {
    if (s.file != file || s.rank < 0) continue;
    auto [b, e] = x.feature_rows(s.row, cfg);
    if (e > b) need[size_t(nodes.node_of[size_t(s.rank)])].add(r.features.locate(b), r.features.locate(b) + e - b);
  }
  for (RowRanges& n : need) n.finish();
  int64_t total = r.features.rows();
  auto share_begin = [&](int k) { return total * k / ranks; };
  // The rows of rank k's share that node n needs go to one rank of n, spread over its members.
  auto receiver = [&](int k, int n) {
    const std::vector<int>& m = nodes.members[size_t(n)];
    return m[size_t(k) % m.size()];
  };
  auto sends_to = [&](int k) { return nodes.node_of[size_t(k)] != home && receiver(rank, nodes.node_of[size_t(k)]) == k; };
  auto receives_from = [&](int k) { return nodes.node_of[size_t(k)] != home && receiver(k, home) == rank; };
  std::vector<int> send_count(size_t(ranks), 0), send_at(size_t(ranks), 0), recv_count(size_t(ranks), 0),
      recv_at(size_t(ranks), 0);
  int64_t sent = 0, received = 0;
  for (int k = 0; k < ranks; ++k) {
    int64_t to = sends_to(k) ? rows_within(need[size_t(nodes.node_of[size_t(k)])], share_begin(rank), share_begin(rank + 1)) : 0;
    int64_t from = receives_from(k) ? rows_within(need[size_t(home)], share_begin(k), share_begin(k + 1)) : 0;
    EMB_CHECK(sent + to < (int64_t(1) << 31) && received + from < (int64_t(1) << 31),
              "data.shuffle_buffer too large for one feature exchange");
    send_at[size_t(k)] = int(sent), send_count[size_t(k)] = int(to), sent += to;
    recv_at[size_t(k)] = int(received), recv_count[size_t(k)] = int(from), received += from;
  }
  size_t row_bytes = size_t(r.feature_elems) * 2;
  fit(staging_, aligned(size_t(sent) * row_bytes) + size_t(received) * row_bytes);
  char* out = staging_.alloc<char>(size_t(sent) * row_bytes);
  char* in = staging_.alloc<char>(size_t(received) * row_bytes);
  char* rows = reinterpret_cast<char*>(r.feature_values);
  char* at = out;
  for (int k = 0; k < ranks; ++k) {
    if (!sends_to(k)) continue;
    for_each_within(need[size_t(nodes.node_of[size_t(k)])], share_begin(rank), share_begin(rank + 1), [&](int64_t b, int64_t e) {
      std::memcpy(at, rows + size_t(b) * row_bytes, size_t(e - b) * row_bytes);
      at += size_t(e - b) * row_bytes;
    });
  }
  exchange_rows(nodes.ranks, out, send_count, send_at, in, recv_count, recv_at, row_bytes);
  at = in;
  for (int k = 0; k < ranks; ++k) {
    if (!receives_from(k)) continue;
    for_each_within(need[size_t(home)], share_begin(k), share_begin(k + 1), [&](int64_t b, int64_t e) {
      std::memcpy(rows + size_t(b) * row_bytes, at, size_t(e - b) * row_bytes);
      at += size_t(e - b) * row_bytes;
    });
  }
}

const float* ShuffleBuffer::state(int32_t file, int64_t row) const {
  const FileRows& r = files_[size_t(file)];
  return r.state + r.steps.locate(row) * r.state_dim;
}

const float* ShuffleBuffer::action(int32_t file, int64_t row) const {
  const FileRows& r = files_[size_t(file)];
  return r.action + r.actions.locate(row) * r.action_dim;
}

const uint16_t* ShuffleBuffer::clip(int32_t file, int64_t row, int64_t tokens) const {
  const FileRows& r = files_[size_t(file)];
  return r.clip + r.clip_rows.locate(row * tokens) * r.clip_dim;
}

const uint16_t* ShuffleBuffer::feature(int32_t file, int64_t feature_row) const {
  const FileRows& r = files_[size_t(file)];
  return r.feature_values + r.features.locate(feature_row) * r.feature_elems;
}

const uint8_t* ShuffleBuffer::frame(int32_t file, size_t view, int64_t row) const {
  const FileRows& r = files_[size_t(file)];
  return r.frames[view] + r.steps.locate(row) * r.frame_bytes;
}

}  // namespace emb
