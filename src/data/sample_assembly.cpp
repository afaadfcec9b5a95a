#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>

#include "batch/sample_tokens.hpp"
#include "core/error.hpp"
#include "core/half.hpp"
#include "data/dreamzero_alignment.hpp"
#include "data/packed_format.hpp"
#include "data/sample.hpp"

namespace emb {

namespace {

// A step past its episode's end: upstream pads a sub-key marked absolute = false with zeros
// (the others repeat the last step), on the raw values before any normalisation (sample.hpp).
// `row` holds the step's `width` columns.
void zero_relative_keys(const std::vector<std::pair<int64_t, int64_t>>& relative_columns, float* row, int64_t width) {
  for (const auto& [start, stop] : relative_columns)
    std::fill(row + std::min(start, width), row + std::min(stop, width), 0.f);
}

// model.backbone = online: the prompt of the episode's task and the step's frames of every view.
void assemble_online_vl(const PackedFileIndex& x, const ShuffleBuffer& buf, int64_t e, Sample& s) {
  s.prompt = x.task_prompts[size_t(x.episode_task[e])];
  s.views = int32_t(x.video_views.size());
  s.frame_height = int32_t(x.frame_height), s.frame_width = int32_t(x.frame_width);
  const int64_t frame_bytes = x.frame_height * x.frame_width * 3;
  s.frames.resize(size_t(s.views * frame_bytes));
  for (size_t v = 0; v < x.video_views.size(); ++v)
    std::copy_n(buf.frame(s.file, v, s.row), frame_bytes, s.frames.data() + v * size_t(frame_bytes));
  s.context.clear();
}

void assemble_gr00t(const PackedFileIndex& x, const ShuffleBuffer& buf, const TokenConfig& cfg, bool mask_past_end,
                    int64_t e, Sample& s) {
  int64_t t = s.row, end = x.episode_offsets[e + 1];
  s.state.assign(size_t(cfg.state_dim), 0.f);
  std::copy_n(buf.state(s.file, t), x.state_dim, s.state.begin());
  s.actions.assign(size_t(cfg.horizon) * cfg.action_dim, 0.f);
  s.action_mask.assign(s.actions.size(), 0.f);
  int64_t width = x.action_width(e);
  const float* rows = buf.action(s.file, t);  // rows t .. end-1 lie back to back in the buffer
  for (int64_t i = 0; i < cfg.horizon; ++i) {
    const float* a = rows + (std::min(t + i, end - 1) - t) * x.action_dim;
    const float valid = t + i < end || !mask_past_end ? 1.f : 0.f;
    float* row = &s.actions[size_t(i * cfg.action_dim)];
    std::copy_n(a, width, row);
    std::fill_n(&s.action_mask[size_t(i * cfg.action_dim)], width, valid);
    if (t + i >= end) zero_relative_keys(x.relative_action_columns, row, width);
  }
  auto [first, last] = x.feature_rows(t, cfg);
  s.context_tokens = last - first;
  if (x.online_vl()) {
    assemble_online_vl(x, buf, e, s);
    return;
  }
  s.context.resize(size_t(s.context_tokens * cfg.d_ctx));
  if (s.context_tokens > 0) half_to_float(buf.feature(s.file, first), s.context.data(), s.context_tokens * cfg.d_ctx);
}

// The task's text rows, zero-padded to text_len (wan's context).
void assemble_text(const PackedFileIndex& x, const TokenConfig& cfg, int64_t e, Sample& s) {
  int64_t task = x.episode_task[e];
  s.context_tokens = sample_context_tokens(cfg, x.txt_offsets[task + 1] - x.txt_offsets[task]);
  s.context.assign(x.txt.begin() + x.txt_offsets[task] * cfg.d_ctx, x.txt.begin() + x.txt_offsets[task + 1] * cfg.d_ctx);
  s.context.resize(size_t(s.context_tokens * cfg.d_ctx), 0.f);  // text_len's zero rows
}

// The clip's latents and CLIP rows from the file (the DreamZero layout), or with model.encoders =
// online its raw frames [T, V, H, W, 3] (data/dreamzero_alignment.hpp) and the task's prompt ids, its
// text_len padding -1, from which the step's encoders compute them (the latents stay empty).
void assemble_clip_features(const PackedFileIndex& x, const ShuffleBuffer& buf, const TokenConfig& cfg, int64_t e,
                            Sample& s) {
  if (!x.online_vl()) {
    const int64_t frame_elems = int64_t(cfg.latent_height) * cfg.latent_width * s.latent_channels;
    s.latents.resize(size_t(cfg.latent_frames * frame_elems));
    half_to_float(buf.feature(s.file, x.feature_rows(s.row, cfg).first), s.latents.data(), cfg.latent_frames * frame_elems);
    s.clip.resize(size_t(x.clip_tokens * x.clip_dim));
    half_to_float(buf.clip(s.file, s.row, x.clip_tokens), s.clip.data(), x.clip_tokens * x.clip_dim);
    return assemble_text(x, cfg, e, s);
  }
  s.latents.clear(), s.clip.clear(), s.context.clear();
  const std::vector<int32_t>& ids = x.task_prompts[size_t(x.episode_task[e])];
  s.context_tokens = sample_context_tokens(cfg, int64_t(ids.size()));
  s.prompt.assign(ids.begin(), ids.end());
  s.prompt.resize(size_t(s.context_tokens), -1);
  s.views = int32_t(x.video_views.size());
  s.frame_height = int32_t(x.frame_height), s.frame_width = int32_t(x.frame_width);
  const int T = clip_raw_frames(cfg.latent_frames);
  const int64_t frame_bytes = x.frame_height * x.frame_width * 3, end = x.episode_offsets[e + 1];
  s.frames.resize(size_t(T * s.views * frame_bytes));
  for (int k = 0; k < T; ++k)
    for (int32_t v = 0; v < s.views; ++v)
      std::copy_n(buf.frame(s.file, size_t(v), clip_frame_step(s.row, k, x.frame_stride, end)), frame_bytes,
                  s.frames.data() + (k * s.views + v) * frame_bytes);
}

// The DreamZero layout (sample.hpp): the clip at s.row, its blocks' actions and states, its CLIP rows.
void assemble_dreamzero(const PackedFileIndex& x, const ShuffleBuffer& buf, const TokenConfig& cfg, int64_t e,
                        Sample& s) {
  const int64_t end = x.episode_offsets[e + 1], width = x.action_width(e);
  s.dreamzero = true;
  s.latent_channels = int32_t(x.latent_file_channels);
  assemble_clip_features(x, buf, cfg, e, s);
  const int64_t blocks = sample_blocks(cfg, cfg.latent_frames);
  s.block_actions.assign(size_t(blocks * cfg.actions_per_block * cfg.action_dim), 0.f);
  s.act_mask.assign(s.block_actions.size(), 0.f);
  s.state.assign(size_t(blocks * cfg.states_per_block * cfg.state_dim), 0.f);
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t step0 = x.block_step(s.row, b, cfg);
    for (int64_t i = 0; i < cfg.actions_per_block; ++i) {
      const size_t at = size_t((b * cfg.actions_per_block + i) * cfg.action_dim);
      std::copy_n(buf.action(s.file, std::min(step0 + i, end - 1)), x.action_dim, &s.block_actions[at]);
      std::fill_n(&s.act_mask[at], width, 1.f);
      if (step0 + i >= end) zero_relative_keys(x.relative_action_columns, &s.block_actions[at], x.action_dim);
    }
    for (int64_t k = 0; k < cfg.states_per_block; ++k) {
      float* state = &s.state[size_t((b * cfg.states_per_block + k) * cfg.state_dim)];
      std::copy_n(buf.state(s.file, std::min(step0 + k, end - 1)), x.state_dim, state);
      if (step0 + k >= end) zero_relative_keys(x.relative_state_columns, state, x.state_dim);
    }
  }
  s.has_real_action = 1.f;
}

void assemble_wan(const PackedFileIndex& x, const ShuffleBuffer& buf, const TokenConfig& cfg, int64_t e, Sample& s) {
  if (x.dreamzero_layout()) return assemble_dreamzero(x, buf, cfg, e, s);
  int64_t start = x.episode_offsets[e], end = x.episode_offsets[e + 1], spl = x.steps_per_latent;
  int64_t frame_elems = int64_t(cfg.latent_height) * cfg.latent_width * cfg.latent_channels;
  int64_t last = (s.row - start) / spl, first = last - cfg.latent_frames + 1;
  s.latents.resize(size_t(cfg.latent_frames * frame_elems));
  for (int64_t j = first; j <= last; ++j)
    half_to_float(buf.feature(s.file, x.latent_offsets[e] + std::max<int64_t>(j, 0)),
                  &s.latents[size_t((j - first) * frame_elems)], frame_elems);
  int64_t blocks = (cfg.latent_frames + cfg.frames_per_block - 1) / cfg.frames_per_block;
  s.block_actions.assign(size_t(blocks * cfg.actions_per_block * cfg.action_dim), 0.f);
  for (int64_t b = 0; b < blocks; ++b) {
    int64_t step0 = start + std::max<int64_t>(0, first + b * cfg.frames_per_block) * spl;
    for (int64_t i = 0; i < cfg.actions_per_block; ++i) {
      const float* a = buf.action(s.file, std::min(step0 + i, end - 1));
      std::copy_n(a, x.action_dim, &s.block_actions[size_t((b * cfg.actions_per_block + i) * cfg.action_dim)]);
    }
  }
  s.dreamzero = false;
  s.latent_channels = cfg.latent_channels;
  assemble_text(x, cfg, e, s);
}

bool any_non_finite(const std::vector<float>& v) {
  return std::any_of(v.begin(), v.end(), [](float x) { return !std::isfinite(x); });
}

// Index of the first non-finite value of v (v.size() when all are finite).
size_t first_non_finite_index(const std::vector<float>& v) {
  return size_t(std::find_if(v.begin(), v.end(), [](float x) { return !std::isfinite(x); }) - v.begin());
}

// The file row /steps/action row `k` of the sample's action rows came from, as assemble_gr00t
// (k in [0, Hz)) and assemble_wan (k = block · Ha + i) copied them.
int64_t action_source_row(const PackedFileIndex& x, const TokenConfig& cfg, const Sample& s, int64_t k) {
  const int64_t e = x.episode_of(s.row), start = x.episode_offsets[e], end = x.episode_offsets[e + 1];
  if (cfg.family == Family::gr00t) return std::min(s.row + k, end - 1);
  if (x.dreamzero_layout())
    return std::min(x.block_step(s.row, k / cfg.actions_per_block, cfg) + k % cfg.actions_per_block, end - 1);
  const int64_t spl = x.steps_per_latent, last = (s.row - start) / spl, first = last - cfg.latent_frames + 1;
  const int64_t block = k / cfg.actions_per_block, i = k % cfg.actions_per_block;
  return std::min(start + std::max<int64_t>(0, first + block * cfg.frames_per_block) * spl + i, end - 1);
}

}  // namespace

std::string first_non_finite(const PackedDataset& data, const TokenConfig& cfg, const Sample& s) {
  const PackedFileIndex& x = data.file(s.file);
  // The file's name is formatted only for a sample that has a non-finite value (this runs on
  // every sample of every step).
  const auto where = [&x] { return str(clipped_path(x.file.path()), ":"); };
  if (any_non_finite(s.state)) return str(where(), packed::kState, ": non-finite value in row ", s.row);
  const std::vector<float>& actions = cfg.family == Family::gr00t ? s.actions : s.block_actions;
  if (const size_t bad = first_non_finite_index(actions); bad < actions.size())
    return str(where(), packed::kAction, ": non-finite value in row ",
               action_source_row(x, cfg, s, int64_t(bad) / cfg.action_dim), " (an action row of the sample at row ",
               s.row, ")");
  if (any_non_finite(s.latents))
    return str(where(), x.latent_dataset, ": non-finite value in the latent frames of the sample at row ", s.row);
  if (any_non_finite(s.clip))
    return str(where(), packed::kClipFeatures, ": non-finite value in the CLIP rows of step ", s.row);
  if (any_non_finite(s.context))
    return str(where(), x.latent_dataset.empty() ? packed::kVlFeatures : packed::kTxtFeatures,
               ": non-finite value in the context features of the sample at row ", s.row);
  return "";
}

void assemble_sample(const PackedDataset& data, const ShuffleBuffer& buffer, const TokenConfig& cfg,
                     bool mask_past_end, int64_t sample_index, int64_t id, Sample& s) {
  s.id = id;
  std::tie(s.file, s.row) = data.locate(sample_index);
  const PackedFileIndex& x = data.file(s.file);
  int64_t e = x.episode_of(s.row);
  s.emb_id = x.episode_embodiment[e];
  s.query_tokens = data.query_tokens();
  if (cfg.family == Family::gr00t) {
    assemble_gr00t(x, buffer, cfg, mask_past_end, e, s);
  } else {
    assemble_wan(x, buffer, cfg, e, s);
  }
}

}  // namespace emb
