#include "model/token_layout.hpp"

#include "core/error.hpp"

namespace emb {

void build_token_layout(const ModelConfig& cfg, const PackedBatch& b, TokenLayout& L) {
  const int64_t T = b.n_tokens;
  const int B = b.n_samples;
  EMB_CHECK(int64_t(b.seq.size()) == T && int64_t(b.kind.size()) == T && int64_t(b.blk.size()) == T &&
                int64_t(b.grp.size()) == T && int64_t(b.pos.size()) == 3 * T && int64_t(b.cseq.size()) == b.n_context &&
                (b.backend_context ? b.context.empty() : int64_t(b.context.size()) == b.n_context * cfg.d_ctx) &&
                int64_t(b.sample_id.size()) == B,
            "packed batch: token arrays do not match n_tokens = ", T, ", n_context = ", b.n_context,
            ", n_samples = ", B, " and context width ", cfg.d_ctx);
  L.index_in_sample.assign(size_t(T), -1);
  L.kind_index.assign(size_t(T), -1);
  L.video_row.assign(size_t(T), -1);
  L.action_row.assign(size_t(T), -1);
  for (auto* v : {&L.clean, &L.noisy, &L.video, &L.action, &L.state, &L.future}) v->clear();
  std::vector<int32_t> in_sample(size_t(B), 0), per_kind(size_t(B) * kPad, 0);
  int32_t video = 0, act = 0;
  for (int64_t t = 0; t < T; ++t) {
    const int32_t s = b.seq[size_t(t)], k = b.kind[size_t(t)];
    if (s < 0) {
      EMB_CHECK(k == kPad, "packed batch: token ", t, " has seq < 0 but kind ", k, " (expected padding)");
      continue;
    }
    EMB_CHECK(s < B && k >= 0 && k < kPad, "packed batch: token ", t, " has seq ", s, " kind ", k);
    L.index_in_sample[size_t(t)] = in_sample[size_t(s)]++;
    L.kind_index[size_t(t)] = per_kind[size_t(s) * kPad + size_t(k)]++;
    if (k == kClean || k == kNoisyVideo) L.video.push_back(int32_t(t)), L.video_row[size_t(t)] = video++;
    switch (k) {
      case kClean: L.clean.push_back(int32_t(t)); break;
      case kNoisyVideo: L.noisy.push_back(int32_t(t)); break;
      case kAction: L.action.push_back(int32_t(t)), L.action_row[size_t(t)] = act++; break;
      case kState: L.state.push_back(int32_t(t)); break;
      case kFuture: L.future.push_back(int32_t(t)); break;
    }
  }
  L.n_video = video;
  L.context_index.assign(size_t(b.n_context), -1);
  std::vector<int32_t> in_context(size_t(B), 0);
  for (int64_t j = 0; j < b.n_context; ++j) {
    const int32_t s = b.cseq[size_t(j)];
    EMB_CHECK(s < B, "packed batch: context token ", j, " has seq ", s, " of ", B, " samples");
    if (s >= 0) L.context_index[size_t(j)] = in_context[size_t(s)]++;
  }
  for (auto* v : {&L.action_sample, &L.action_kind, &L.action_target, &L.future_kind, &L.state_sample,
                  &L.noisy_video_row})
    v->clear();
  for (int32_t t : L.action) {
    L.action_sample.push_back(b.seq[size_t(t)]), L.action_kind.push_back(L.kind_index[size_t(t)]);
    L.action_target.push_back(b.seq[size_t(t)] * cfg.horizon + L.kind_index[size_t(t)]);
  }
  for (int32_t t : L.future) L.future_kind.push_back(L.kind_index[size_t(t)]);
  for (int32_t t : L.state) L.state_sample.push_back(b.seq[size_t(t)]);
  for (int32_t t : L.noisy) L.noisy_video_row.push_back(L.video_row[size_t(t)]);
  if (cfg.family == Family::gr00t) {
    for (int s = 0; s < B; ++s) {
      const int32_t* n = &per_kind[size_t(s) * kPad];
      EMB_CHECK(n[kState] == 1 && n[kFuture] == cfg.n_future && n[kAction] == cfg.horizon && n[kClean] == 0 &&
                    n[kNoisyVideo] == 0,
                "packed batch: gr00t sample ", s, " has ", n[kState], " state, ", n[kFuture], " future and ",
                n[kAction], " action tokens; the model expects 1, ", cfg.n_future, " and ", cfg.horizon);
    }
    EMB_CHECK(int64_t(b.state.size()) == int64_t(B) * cfg.state_dim &&
                  int64_t(b.actions.size()) == int64_t(B) * cfg.horizon * cfg.action_dim &&
                  b.action_mask.size() == b.actions.size() && int64_t(b.emb_id.size()) == B,
              "packed batch: gr00t per-sample arrays do not match ", B, " samples of state ", cfg.state_dim,
              " and actions ", cfg.horizon, "x", cfg.action_dim);
    for (int s = 0; s < B; ++s)
      EMB_CHECK(b.emb_id[size_t(s)] >= 0 && b.emb_id[size_t(s)] < cfg.n_embodiments, "packed batch: sample ", s,
                " has embodiment ", b.emb_id[size_t(s)], ", the model has ", cfg.n_embodiments, " slots");
  } else {
    EMB_CHECK(L.future.empty() && (cfg.states_per_block > 0 || L.state.empty()),
              "packed batch: wan batches have no future tokens, and state tokens only with model.states_per_block");
    const int64_t n_state = int64_t(L.state.size());
    EMB_CHECK(int64_t(b.video_x0.size()) == L.n_video * cfg.patch_dim_in() &&
                  int64_t(b.act_x0.size()) == int64_t(act) * cfg.action_dim &&
                  int64_t(b.state.size()) == n_state * cfg.state_dim,
              "packed batch: video_x0/act_x0/state do not match ", L.n_video, " video tokens of ", cfg.patch_dim_in(),
              ", ", act, " action tokens of ", cfg.action_dim, " and ", n_state, " state tokens of ", cfg.state_dim);
  }
}

}  // namespace emb
