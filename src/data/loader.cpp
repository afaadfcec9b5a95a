#include "data/loader.hpp"

#include <algorithm>
#include <chrono>

#include "comm/agreement.hpp"
#include "comm/host_collectives.hpp"
#include "core/error.hpp"
#include "data/packed_format.hpp"
#include "data/state_action_normalization.hpp"
#include "data/upstream_data_config.hpp"

namespace emb {
namespace {

// Every embodiment of every file has statistics of the file's state and action widths (the
// recorded ones of a resumed run may be of other data). Every rank sees the same files and
// statistics, so every rank throws alike.
void check_statistics_cover(const PackedDataset& data, const NormalizationStatistics& stats) {
  for (int64_t i = 0; i < data.files(); ++i) {
    const PackedFileIndex& x = data.file(i);
    for (int32_t id : x.episode_embodiment) {
      const auto it = stats.find(id);
      const char* field = it == stats.end() || int64_t(it->second.state.width()) != x.state_dim ? packed::kState
                          : int64_t(it->second.action.width()) != x.action_dim                 ? packed::kAction
                                                                                               : nullptr;
      if (field)
        throw AgreedError(x.file.where(field, str("embodiment ", id, ": the resumed checkpoint's normalisation "
                                                  "statistics ", it == stats.end() ? "lack it" : "have another width",
                                                  "; resume on the data it was trained on")),
                          kExitInput);
    }
  }
}

// Relative actions subtract a block's anchor state: only the DreamZero layout has one per block;
// a resumed run keeps the relative keys it recorded.
void check_relative_actions(const PackedDataset& data, const NormalizationStatistics* recorded,
                            const RelativeActionChoice& relative) {
  if (!relative.keys.empty())
    for (int64_t i = 0; i < data.files(); ++i)
      if (!data.file(i).dreamzero_layout())
        throw AgreedError(data.file(i).file.where("/", str("data.relative_action_keys = ", joined_keys(relative.keys),
                                                           ": not a DreamZero-layout file (embpack features "
                                                           "--dreamzero, or model.encoders = online)")),
                          kExitInput);
  if (!recorded) return;
  for (const auto& [id, e] : *recorded) {
    std::vector<std::string> keys;
    for (const RelativeColumns& c : e.relative_action) keys.push_back(c.key);
    if (keys != relative.keys)
      throw AgreedError(str("embodiment ", id, ": the resumed checkpoint trained relative action keys '", joined_keys(keys),
                            "', the deck's data.relative_action_keys is '", joined_keys(relative.keys),
                            "'; resume with the keys it was trained on"),
                        kExitInput);
  }
}

// A resumed run keeps the per-key transforms it recorded (data.upstream_config, data.state_encoding).
void check_key_transforms(const NormalizationStatistics* recorded, const KeyTransformChoice& choice) {
  if (!recorded) return;
  for (const auto& [id, e] : *recorded) {
    const std::string trained = e.key_transforms.empty() ? KeyTransformChoice{}.text() : e.key_transforms.selected_by;
    if (trained != choice.text())
      throw AgreedError(str("embodiment ", id, ": the resumed checkpoint trained with ", trained, ", the deck has ",
                            choice.text(), "; resume with what it was trained on"),
                        kExitInput);
  }
}

// Every embodiment's per-key transformed state and actions fit the model's widths (a raw width is
// checked where the files are opened; wan outside the DreamZero layout has no state).
void check_model_widths(const NormalizationBoundsMap& bounds, const TokenConfig& model) {
  const auto check = [](int32_t id, const char* field, int64_t needed, const char* key, int64_t has) {
    if (needed > has)
      throw AgreedError(str("embodiment ", id, ": its per-key transforms give the model ", needed, " ", field,
                            " columns, ", key, " is ", has, "; set ", key, " to at least ", needed),
                        kExitInput);
  };
  for (const auto& [id, b] : bounds) {
    if (!b.state_keys.empty())
      check(id, "state", model_state_width(b, int64_t(b.state.low.size())), "model.state_dim", model.state_dim);
    if (!b.action_keys.empty())
      check(id, "action", model_action_width(b, int64_t(b.action.low.size())), "model.action_dim", model.action_dim);
  }
}

NormalizationStatistics run_statistics(const PackedDataset& data, const NormalizationStatistics* recorded,
                                       const RelativeActionChoice& relative, const KeyTransformChoice& key_transforms) {
  check_relative_actions(data, recorded, relative);
  check_key_transforms(recorded, key_transforms);
  if (recorded) {
    check_statistics_cover(data, *recorded);
    return *recorded;
  }
  std::vector<const H5File*> files;
  for (int64_t i = 0; i < data.files(); ++i) files.push_back(&data.file(i).file);
  return normalization_statistics(files, relative, key_transforms);
}

}  // namespace

Loader::Loader(MPI_Comm dp_comm, const DataConfig& data, const TokenConfig& model,
               const NormalizationStatistics* recorded)
    : dc_(data), mc_(model) {
  EMB_CHECK(data.prefetch == 0 || mpi_thread_multiple(),
            "data.prefetch > 0 needs MPI initialised with MPI_THREAD_MULTIPLE");
  EMB_CHECK(data.global_batch >= 1 && data.tokens_per_mb >= 1 && data.chunk_rows >= 1, "data: bad batch/budget settings");
  comm_ = duplicate(dp_comm);
  rank_ = rank_in(comm_), ranks_ = ranks_in(comm_);
  node_comm_ = split_by_node(comm_);
  nodes_ = NodeLayout::of(comm_, node_comm_);
  file_names_ = expand_paths(dc_.paths);
  data_ = std::make_unique<PackedDataset>(comm_, dc_.mpio_transfer, file_names_, mc_, dc_.view,
                                          VlFeatureChoice{dc_.vl_backbone_digest, dc_.vl_augment, dc_.online_prompt,
                                                          dc_.dreamzero_encoders_digest, dc_.frame_stride,
                                                          dc_.dreamzero_repeat_end});
  if (dc_.normalize) {
    check_embodiment_key_widths(*data_, KeyTransformChoice{dc_.state_sin_cos, dc_.upstream_config});
    normalization_ = run_statistics(*data_, recorded, {dc_.relative_action_keys, mc_.actions_per_block},
                                    KeyTransformChoice{dc_.state_sin_cos, dc_.upstream_config});
    bounds_ = normalization_bounds(normalization_rule(mc_.family), normalization_);
    check_model_widths(bounds_, mc_);
  }
  chunks_ = data_->chunks(dc_.chunk_rows);
  std::vector<int64_t> sizes;
  for (const Chunk& c : chunks_) sizes.push_back(c.samples);
  sampler_ = std::make_unique<Sampler>(sizes, std::max<int64_t>(1, dc_.shuffle_buffer / dc_.chunk_rows), dc_.seed);
  EMB_CHECK(dc_.global_batch <= sampler_->size(), "train.global_batch = ", dc_.global_batch, " exceeds the dataset's ",
            sampler_->size(), " samples");
  pack_.packing = dc_.packing;
  pack_.tokens_per_mb = dc_.tokens_per_mb;
  pack_.lookahead = dc_.lookahead;
  pack_.pad_query = data_->query_tokens();
  pack_.pad_context = data_->max_context_tokens();
  if (!dc_.packing && dc_.pad_context > 0) {
    EMB_CHECK(dc_.pad_context >= pack_.pad_context, "data.pad_context = ", dc_.pad_context,
              " is shorter than the longest context in the data (", pack_.pad_context, " tokens)");
    pack_.pad_context = dc_.pad_context;
  }
  if (!dc_.packing)
    EMB_CHECK(pack_.pad_query + pack_.pad_context <= dc_.tokens_per_mb, "data.tokens_per_mb = ", dc_.tokens_per_mb,
              " is smaller than the longest sample (", pack_.pad_query + pack_.pad_context, " tokens) with packing = off");
  prefetcher_ = std::make_unique<Prefetcher>([this] { return produce(); }, dc_.prefetch);
}

Loader::~Loader() {
  prefetcher_.reset();
  buffers_.clear();  // frees their shared blocks, collectively over the node
  data_.reset();
  free_communicator(node_comm_);
  free_communicator(comm_);
}

int Loader::owner(int64_t epoch, int64_t pos) const {
  int64_t offset = epoch * sampler_->size() + pos - origin_;
  return offset < 0 ? -1 : int(offset % dc_.global_batch % ranks_);
}

const ShuffleBuffer& Loader::buffer(const BufferKey& key, const std::vector<BufferKey>& keep) {
  for (const BufferSlot& b : buffers_)
    if (b.key == key) return *b.buffer;
  auto slot = std::find_if(buffers_.begin(), buffers_.end(), [&](const BufferSlot& b) {
    return std::find(keep.begin(), keep.end(), b.key) == keep.end();
  });
  if (slot == buffers_.end()) slot = buffers_.insert(buffers_.end(), BufferSlot{key, std::make_unique<ShuffleBuffer>()});
  slot->key = key;
  std::vector<Chunk> chunks;
  for (int64_t c : sampler_->buffer_chunks(key.first, key.second)) chunks.push_back(chunks_[size_t(c)]);
  std::vector<BufferSample> samples;
  auto [begin, end] = sampler_->buffer_positions(key.first, key.second);
  for (int64_t pos = begin; pos < end; ++pos) {
    auto [file, row] = data_->locate(sampler_->at(key.first, pos).sample);
    samples.push_back(BufferSample{file, row, owner(key.first, pos)});
  }
  auto start = std::chrono::steady_clock::now();  // the read path: the reads and the feature exchange
  bytes_read_ += slot->buffer->load(*data_, chunks, mc_, samples, nodes_, key.first);
  buffer_bytes_ += slot->buffer->file_bytes();
  read_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  return *slot->buffer;
}

void Loader::normalize(Sample& s) const {
  const PackedFileIndex& x = data_->file(s.file);
  const RelativeActions& relative = normalization_.at(s.emb_id).relative_action;
  if (!relative.empty()) make_block_actions_relative(relative, mc_, s);
  normalize_sample(bounds_.at(s.emb_id), mc_, x.action_width(x.episode_of(s.row)), s);
}

LoadedStep Loader::produce() {
  const auto start = std::chrono::steady_clock::now();
  // Every rank loads the buffers of the whole global range, in order (matched MPI-IO calls).
  std::vector<BufferKey> used;
  for (int64_t j = 0; j < dc_.global_batch; ++j) {
    int64_t pos = next_.cursor + j, epoch = next_.epoch + pos / sampler_->size();
    pos %= sampler_->size();
    BufferKey key(epoch, sampler_->buffer_of(epoch, pos));
    if (used.empty() || used.back() != key) used.push_back(key);
  }
  std::vector<const ShuffleBuffer*> loaded;
  for (const BufferKey& key : used) loaded.push_back(&buffer(key, used));

  std::vector<Position> mine = sampler_->step(next_, dc_.global_batch, rank_, ranks_);
  samples_.resize(mine.size());
  std::string bad_data;
  for (size_t i = 0; i < mine.size(); ++i) {
    const Position& p = mine[i];
    size_t b = size_t(std::find(used.begin(), used.end(), BufferKey(p.epoch, sampler_->buffer_of(p.epoch, p.pos))) - used.begin());
    assemble_sample(*data_, *loaded[b], mc_, dc_.mask_past_end, p.sample, p.epoch * sampler_->size() + p.pos,
                    samples_[i]);
    if (bad_data.empty()) bad_data = first_non_finite(*data_, mc_, samples_[i]);
    if (dc_.normalize) normalize(samples_[i]);
  }
  LoadedStep step;
  step.batches = pack_step(samples_, mc_, pack_, file_names_);
  // One reduction agrees on the micro-batch count and on whether any rank met bad data.
  int64_t most_counts[2] = {int64_t(step.batches.size()), bad_data.empty() ? 0 : 1};
  max_over_ranks(comm_, most_counts, 2);
  // Every rank then throws the lowest such rank's line alike, which rank 0 prints: the rank that
  // met the data cannot be ended by another's abort before it says where.
  if (most_counts[1] != 0)
    throw_if_any_rank_failed(comm_, bad_data.empty() ? "" : bad_data + " (embpack verify lists every such value)");
  const int64_t most = most_counts[0];
  while (int64_t(step.batches.size()) < most) {
    step.batches.emplace_back();
    step.batches.back().family = mc_.family == Family::gr00t ? "gr00t" : "wan";
  }
  for (const PackedBatch& b : step.batches) {
    step.samples += b.n_samples;
    step.real_tokens += b.n_real_tokens;
    step.computed_tokens += b.n_tokens + b.n_context;
  }
  next_ = sampler_->advance(next_, dc_.global_batch);
  step.after = next_;
  produce_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  return step;
}

std::vector<PackedBatch> Loader::next_step(double* waited) {
  LoadedStep step = prefetcher_->pop(waited);
  consumed_ = step.after;
  stats_.steps += 1;
  stats_.samples += step.samples;
  stats_.real_tokens += step.real_tokens;
  stats_.computed_tokens += step.computed_tokens;
  return std::move(step.batches);
}

void Loader::restore(const SamplerState& s) {
  EMB_CHECK(s.epoch >= 0 && s.cursor >= 0 && s.cursor < sampler_->size(), "sampler state (", s.epoch, ", ", s.cursor,
            ") outside this dataset's ", sampler_->size(), " samples per epoch");
  prefetcher_.reset();
  next_ = consumed_ = s;
  origin_ = s.epoch * sampler_->size() + s.cursor;
  for (BufferSlot& b : buffers_) b.key = {-1, -1};  // they hold the rows of the old ranks' samples
  prefetcher_ = std::make_unique<Prefetcher>([this] { return produce(); }, dc_.prefetch);
}

void Loader::quiesce() { prefetcher_->quiesce(); }

LoaderStats Loader::stats() const {
  LoaderStats s = stats_;
  s.bytes_read = bytes_read_;
  s.buffer_bytes = buffer_bytes_;
  s.read_seconds = double(read_ns_) * 1e-9;
  s.produce_seconds = double(produce_ns_) * 1e-9;
  return s;
}

}  // namespace emb
