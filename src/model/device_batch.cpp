#include "model/device_batch.hpp"

#include <cstring>

namespace emb {
namespace {

constexpr size_t kAlign = 64;

// Upstream's sample loss is a mean over the sample's elements of each kind, and a step the mean
// of its samples' losses (DreamZero trains one sample per device): each row's weight w divided
// by the element count (rows · cols) of its sample's rows of that kind.
void per_sample_weights(const std::vector<int32_t>& rows, const PackedBatch& b, const FlowDraws& d, int cols,
                        std::vector<float>& out) {
  std::vector<int64_t> count(size_t(b.n_samples), 0);
  for (int32_t t : rows) ++count[size_t(b.seq[size_t(t)])];
  out.clear();
  for (int32_t t : rows)
    out.push_back(float(double(d.loss_weight[size_t(t)]) / (double(count[size_t(b.seq[size_t(t)])]) * cols)));
}

}  // namespace

size_t DeviceBatch::stage(const void* src, size_t bytes) {
  const size_t offset = used_;
  pieces_.push_back({src, bytes, offset});
  used_ += (bytes + kAlign - 1) & ~(kAlign - 1);
  return offset;
}

void DeviceBatch::stage_index(RowIndex& field, const std::vector<int32_t>& v) {
  field.n = int64_t(v.size());
  if (v.empty()) return void(field.data = nullptr);
  const size_t at = stage(v.data(), v.size() * sizeof(int32_t));
  place_.push_back([&field, at](uint8_t* base) { field.data = reinterpret_cast<const int32_t*>(base + at); });
}

void DeviceBatch::stage_pointer(const int32_t*& field, const std::vector<int32_t>& v) {
  if (v.empty()) return void(field = nullptr);
  const size_t at = stage(v.data(), v.size() * sizeof(int32_t));
  place_.push_back([&field, at](uint8_t* base) { field = reinterpret_cast<const int32_t*>(base + at); });
}

void DeviceBatch::stage_matrix(View& field, const std::vector<float>& v, int64_t cols) {
  field = View{};
  if (v.empty() || cols <= 0) return;
  field.rows = int64_t(v.size()) / cols, field.cols = cols, field.ld = cols;
  const size_t at = stage(v.data(), v.size() * sizeof(float));
  place_.push_back([&field, at](uint8_t* base) { field.data = base + at; });
}

void DeviceBatch::stage_embodiments(EmbRows& field, EmbGrouping& groups, const std::vector<int32_t>& ids,
                                    int n_embodiments) {
  field = EmbRows{};
  field.n = int64_t(ids.size()), field.n_emb = n_embodiments;
  if (ids.empty()) return;
  groups = group_rows_by_embodiment(ids.data(), field.n, field.n_emb);
  field.offsets = groups.offsets.data();
  const size_t at_ids = stage(ids.data(), ids.size() * sizeof(int32_t));
  const size_t at_perm = stage(groups.perm.data(), groups.perm.size() * sizeof(int32_t));
  place_.push_back([&field, at_ids, at_perm](uint8_t* base) {
    field.ids = reinterpret_cast<const int32_t*>(base + at_ids);
    field.perm = reinterpret_cast<const int32_t*>(base + at_perm);
  });
}

void DeviceBatch::stage_gr00t(const ModelConfig& cfg, const PackedBatch& b, const TokenLayout& L, const FlowDraws& d) {
  const int A = cfg.action_dim;
  stage_matrix(state, b.state, cfg.state_dim);
  stage_matrix(actions, b.actions, A), stage_matrix(action_mask, b.action_mask, A), stage_matrix(noise, d.noise, A);
  tq_.assign(d.tq.begin(), d.tq.end());
  stage_matrix(tau, d.tau, 1), stage_matrix(tq, tq_, 1);
  action_emb_ids_.clear();
  for (int32_t s : L.action_sample) action_emb_ids_.push_back(b.emb_id[size_t(s)]);
  stage_embodiments(sample_emb, sample_groups_, b.emb_id, cfg.n_embodiments);
  stage_embodiments(action_emb, action_groups_, action_emb_ids_, cfg.n_embodiments);
  stage_index(state_tokens, L.state), stage_index(future, L.future);
  stage_index(action_sample, L.action_sample), stage_index(action_target, L.action_target);
  stage_index(action_kind, L.action_kind), stage_index(future_kind, L.future_kind);
  stage_index(state_sample, L.state_sample);
}

void DeviceBatch::stage_wan(const ModelConfig& cfg, const PackedBatch& b, const TokenLayout& L, const FlowDraws& d,
                            const TimeRows& time) {
  stage_matrix(video_x0, b.video_x0, cfg.patch_dim_in()), stage_matrix(video_noise, d.video_noise, cfg.patch_dim_in());
  stage_matrix(act_x0, b.act_x0, cfg.action_dim), stage_matrix(act_noise, d.act_noise, cfg.action_dim);
  stage_matrix(sigma, d.sigma, 1);
  stage_matrix(state, b.state, cfg.state_dim), stage_index(state_tokens, L.state);
  stage_index(video, L.video);
  rope_modes_.clear();
  for (int32_t kind : b.kind)
    rope_modes_.push_back(int32_t(kind == kAction || kind == kState ? RopeMode::d1 : RopeMode::d3));
  stage_pointer(rope_modes, rope_modes_);
  head_time_.clear();
  for (int32_t t : L.noisy) head_time_.push_back(time.row[size_t(t)]);
  per_sample_weights(L.noisy, b, d, cfg.patch_dim_out(), video_weight_);
  per_sample_weights(L.action, b, d, cfg.action_dim, act_weight_);
  if (!b.has_real_action.empty())  // upstream multiplies the action loss by it (a sample without real actions: 0)
    for (size_t r = 0; r < L.action.size(); ++r)
      act_weight_[r] *= b.has_real_action[size_t(b.seq[size_t(L.action[r])])];
  stage_matrix(video_cond, b.video_cond, cfg.cond_patch_dim()), stage_matrix(act_mask, b.act_mask, cfg.action_dim);
  stage_matrix(clip, b.clip, cfg.d_clip);
  clip_seq_.clear();
  for (int32_t s = 0; s < b.n_samples && cfg.clip_tokens > 0; ++s) clip_seq_.insert(clip_seq_.end(), size_t(cfg.clip_tokens), s);
  stage_pointer(clip_seq, clip_seq_);
  stage_matrix(video_weight, video_weight_, 1), stage_matrix(act_weight, act_weight_, 1);
  stage_index(head_rows, L.noisy), stage_index(head_time, head_time_);
  stage_index(noisy_video_row, L.noisy_video_row);
  // Patch elements are flattened (t, h, w, c); the head predicts channels c < out_channels.
  out_to_in_.clear();
  const int n_pix = cfg.patch[0] * cfg.patch[1] * cfg.patch[2];
  for (int p = 0; p < n_pix; ++p)
    for (int c = 0; c < cfg.out_channels; ++c) out_to_in_.push_back(p * cfg.latent_channels + c);
  stage_index(out_to_in, out_to_in_);
  n_noisy = int64_t(L.noisy.size());
}

void DeviceBatch::upload(Ops& ops, const ModelConfig& cfg, const PackedBatch& b, const TokenLayout& L,
                         const FlowDraws& d, const TimeRows& time) {
  if (ops_ != &ops) slots_ = ops.make_input_slots();
  ops_ = &ops;
  pieces_.clear();
  place_.clear();
  used_ = 0;
  stage_pointer(seq, b.seq), stage_pointer(blk, b.blk), stage_pointer(grp, b.grp);
  stage_pointer(cseq, b.cseq), stage_pointer(pos, b.pos);
  stage_pointer(token_in_sample, L.index_in_sample), stage_pointer(context_in_sample, L.context_index);
  sample_id = nullptr;
  if (!b.sample_id.empty()) {
    const size_t at = stage(b.sample_id.data(), b.sample_id.size() * sizeof(int64_t));
    place_.push_back([this, at](uint8_t* base) { sample_id = reinterpret_cast<const int64_t*>(base + at); });
  }
  stage_index(time_row, time.row);
  stage_matrix(time_t, time.t, 2);
  if (b.backend_context)
    context = view(b.backend_context, b.n_context, cfg.d_ctx);
  else
    stage_matrix(context, b.context, cfg.d_ctx);
  action_time_.clear();
  for (int32_t t : L.action) action_time_.push_back(time.row[size_t(t)]);
  stage_index(action, L.action), stage_index(action_time, action_time_);
  if (cfg.family == Family::gr00t) {
    stage_gr00t(cfg, b, L, d);
  } else {
    stage_wan(cfg, b, L, d, time);
  }
  const InputSlots::Slot slot = slots_->stage(used_);
  for (const Piece& p : pieces_)
    if (p.src) std::memcpy(static_cast<uint8_t*>(slot.host) + p.offset, p.src, p.bytes);
  slots_->upload(used_);
  for (auto& f : place_) f(static_cast<uint8_t*>(slot.backend));
}

}  // namespace emb
