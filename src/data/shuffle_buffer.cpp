#include "data/shuffle_buffer.hpp"

#include <algorithm>

#include "data/packed_format.hpp"

namespace emb {

int64_t ShuffleBuffer::load(const PackedDataset& data, const std::vector<Chunk>& chunks, const ModelConfig& cfg) {
  files_.assign(size_t(data.files()), FileRows{});
  bool gr00t = cfg.family == Family::gr00t;
  for (const Chunk& c : chunks) {
    const PackedFileIndex& x = data.file(c.file);
    FileRows& r = files_[size_t(c.file)];
    r.steps.add(c.begin, c.end);
    if (gr00t) {
      r.actions.add(c.begin, std::min(x.steps, c.end + cfg.horizon - 1));
      r.vl.add(x.vl_offsets[c.begin], x.vl_offsets[c.end]);
    } else {
      int64_t reach = int64_t(cfg.latent_frames) * x.steps_per_latent;
      r.actions.add(std::max<int64_t>(0, c.begin - reach), std::min(x.steps, c.end + cfg.actions_per_block));
      int64_t first = x.latent_offsets[x.episode_of(c.begin)];
      r.latents.add(std::max(first, x.latent_of(c.begin) - cfg.latent_frames + 1), x.latent_of(c.end - 1) + 1);
    }
  }
  int64_t bytes = 0;
  for (int32_t f = 0; f < int32_t(files_.size()); ++f) {
    FileRows& r = files_[size_t(f)];
    if (r.steps.ranges().empty()) continue;  // every rank skips the same files
    const PackedFileIndex& x = data.file(f);
    for (RowRanges* rr : {&r.steps, &r.actions, &r.vl, &r.latents}) rr->finish();
    r.state_dim = x.state_dim, r.action_dim = x.action_dim;
    r.state.resize(size_t(r.steps.rows() * r.state_dim));
    r.action.resize(size_t(r.actions.rows() * r.action_dim));
    bytes += x.file.read_rows(packed::kState, Elem::f32, r.steps, r.state.data());
    bytes += x.file.read_rows(packed::kAction, Elem::f32, r.actions, r.action.data());
    if (gr00t) {
      r.vl_dim = cfg.d_ctx;
      r.vl_values.resize(size_t(r.vl.rows() * r.vl_dim));
      bytes += x.file.read_rows(packed::kVlFeatures, Elem::f16, r.vl, r.vl_values.data());
    } else {
      r.latent_elems = int64_t(cfg.latent_height) * cfg.latent_width * cfg.latent_channels;
      r.latent_values.resize(size_t(r.latents.rows() * r.latent_elems));
      bytes += x.file.read_rows(x.latent_dataset, Elem::f16, r.latents, r.latent_values.data());
    }
  }
  return bytes;
}

const float* ShuffleBuffer::state(int32_t file, int64_t row) const {
  const FileRows& r = files_[size_t(file)];
  return &r.state[size_t(r.steps.locate(row) * r.state_dim)];
}

const float* ShuffleBuffer::action(int32_t file, int64_t row) const {
  const FileRows& r = files_[size_t(file)];
  return &r.action[size_t(r.actions.locate(row) * r.action_dim)];
}

const uint16_t* ShuffleBuffer::vl(int32_t file, int64_t feature_row) const {
  const FileRows& r = files_[size_t(file)];
  return &r.vl_values[size_t(r.vl.locate(feature_row) * r.vl_dim)];
}

const uint16_t* ShuffleBuffer::latent(int32_t file, int64_t frame) const {
  const FileRows& r = files_[size_t(file)];
  return &r.latent_values[size_t(r.latents.locate(frame) * r.latent_elems)];
}

}  // namespace emb
