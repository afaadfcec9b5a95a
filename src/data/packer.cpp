#include "data/packer.hpp"

#include <algorithm>
#include <numeric>

#include "batch/sample_tokens.hpp"
#include "core/error.hpp"

namespace emb {

namespace {

// Online encoders: the sample's frames and prompt ids, which the step's encoders turn into its
// features; they stack or tile the batch's frames, so these share one shape.
void add_online_inputs(PackedBatch& b, const Sample& s, int32_t slot) {
  EMB_CHECK(slot == 0 || (s.views == b.views && s.frame_height == b.frame_height && s.frame_width == b.frame_width),
            "online encoders: sample ", s.id, " (step ", s.row, ") has ", s.views, " views of ",
            s.frame_height, "x", s.frame_width, " frames, its micro-batch ", b.views, " of ", b.frame_height, "x",
            b.frame_width, ": every file of data.paths must have the same /video views and resolution");
  b.views = s.views, b.frame_height = s.frame_height, b.frame_width = s.frame_width;
  b.prompt.insert(b.prompt.end(), s.prompt.begin(), s.prompt.end());
  b.frames.insert(b.frames.end(), s.frames.begin(), s.frames.end());
}

void add_gr00t_sample(PackedBatch& b, const Sample& s, int32_t slot, const TokenConfig& cfg) {
  append_sample_tokens(cfg, cfg.latent_frames, slot, b);
  b.state.insert(b.state.end(), s.state.begin(), s.state.end());
  b.actions.insert(b.actions.end(), s.actions.begin(), s.actions.end());
  b.action_mask.insert(b.action_mask.end(), s.action_mask.begin(), s.action_mask.end());
  if (s.views > 0) add_online_inputs(b, s, slot);
}

void add_wan_sample(PackedBatch& b, const Sample& s, int32_t slot, const TokenConfig& cfg) {
  append_sample_tokens(cfg, cfg.latent_frames, slot, b);
  if (s.views > 0)
    add_online_inputs(b, s, slot);
  else
    append_video_rows(s.latents.data(), s.latent_channels, cfg, b);
  b.act_x0.insert(b.act_x0.end(), s.block_actions.begin(), s.block_actions.end());
  if (!s.dreamzero) return;
  b.state.insert(b.state.end(), s.state.begin(), s.state.end());
  b.act_mask.insert(b.act_mask.end(), s.act_mask.begin(), s.act_mask.end());
  b.has_real_action.push_back(s.has_real_action);
  b.clip.insert(b.clip.end(), s.clip.begin(), s.clip.end());
}

}  // namespace

void append_video_rows(const float* latents, int channels, const TokenConfig& cfg, PackedBatch& b) {
  auto [pt, ph, pw] = cfg.patch;
  const int H = cfg.latent_height, W = cfg.latent_width, C = cfg.latent_channels;
  const int fp = cfg.latent_frames / pt, hp = H / ph, wp = W / pw;
  for (int32_t grp = 0; grp < 2; ++grp)
    for (int f = 0; f < fp; ++f)
      for (int h = 0; h < hp; ++h)
        for (int w = 0; w < wp; ++w)
          for (int dt = 0; dt < pt; ++dt)
            for (int dh = 0; dh < ph; ++dh)
              for (int dw = 0; dw < pw; ++dw) {
                const float* px = &latents[size_t(((f * pt + dt) * H + h * ph + dh) * W + w * pw + dw) * channels];
                b.video_x0.insert(b.video_x0.end(), px, px + C);
                b.video_cond.insert(b.video_cond.end(), px + C, px + channels);
              }
}

namespace {

PackedBatch build_batch(const std::vector<const Sample*>& samples, const TokenConfig& cfg, const PackerConfig& p) {
  PackedBatch b;
  b.family = cfg.family == Family::gr00t ? "gr00t" : "wan";
  b.n_samples = int32_t(samples.size());
  for (int32_t slot = 0; slot < b.n_samples; ++slot) {
    const Sample& s = *samples[size_t(slot)];
    b.sample_id.push_back(s.id);
    b.emb_id.push_back(s.emb_id);
    if (cfg.family == Family::gr00t) {
      add_gr00t_sample(b, s, slot, cfg);
    } else {
      add_wan_sample(b, s, slot, cfg);
    }
    b.cseq.insert(b.cseq.end(), size_t(s.context_tokens), slot);
    b.context.insert(b.context.end(), s.context.begin(), s.context.end());
    b.n_real_tokens += s.tokens();
    if (p.packing) continue;
    append_padding_tokens(p.pad_query - s.query_tokens, b);
    b.cseq.insert(b.cseq.end(), size_t(p.pad_context - s.context_tokens), -1);
    if (s.views > 0) b.prompt.resize(b.cseq.size(), -1);
    b.context.resize(b.cseq.size() * size_t(cfg.d_ctx), 0.f);
  }
  b.n_tokens = int64_t(b.seq.size());
  b.n_context = int64_t(b.cseq.size());
  return b;
}

}  // namespace

std::vector<std::vector<size_t>> plan_micro_batches(const std::vector<int64_t>& tokens, const PackerConfig& p) {
  std::vector<std::vector<size_t>> bins;
  if (!p.packing) {
    int64_t per_mb = p.tokens_per_mb / (p.pad_query + p.pad_context);
    EMB_ASSERT(per_mb >= 1);
    for (size_t i = 0; i < tokens.size(); i += size_t(per_mb)) {
      bins.emplace_back();
      for (size_t j = i; j < std::min(tokens.size(), i + size_t(per_mb)); ++j) bins.back().push_back(j);
    }
    return bins;
  }
  size_t window = p.lookahead > 0 ? size_t(p.lookahead) : std::max<size_t>(tokens.size(), 1);
  for (size_t w0 = 0; w0 < tokens.size(); w0 += window) {
    size_t w1 = std::min(tokens.size(), w0 + window);
    std::vector<size_t> order(w1 - w0);
    std::iota(order.begin(), order.end(), w0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return tokens[a] > tokens[b]; });
    size_t first_bin = bins.size();
    std::vector<int64_t> used;
    for (size_t i : order) {
      size_t k = 0;
      while (k < used.size() && used[k] + tokens[i] > p.tokens_per_mb) ++k;
      if (k == used.size()) used.push_back(0), bins.emplace_back();
      used[k] += tokens[i];
      bins[first_bin + k].push_back(i);
    }
    for (size_t k = first_bin; k < bins.size(); ++k) std::sort(bins[k].begin(), bins[k].end());
  }
  return bins;
}

std::vector<PackedBatch> pack_step(const std::vector<Sample>& samples, const TokenConfig& cfg, const PackerConfig& p,
                                   const std::vector<std::string>& file_names) {
  std::vector<int64_t> tokens;
  for (const Sample& s : samples) {
    int64_t need = p.packing ? s.tokens() : p.pad_query + p.pad_context;
    EMB_CHECK(need <= p.tokens_per_mb, file_names[size_t(s.file)], ": sample ", s.id, " (step ", s.row, ") needs ", need,
              " tokens (", s.query_tokens, " query + ", p.packing ? s.context_tokens : p.pad_context,
              " context", p.packing ? "" : ", padded", ") > data.tokens_per_mb = ", p.tokens_per_mb);
    tokens.push_back(s.tokens());
  }
  std::vector<PackedBatch> out;
  for (const std::vector<size_t>& bin : plan_micro_batches(tokens, p)) {
    std::vector<const Sample*> members;
    for (size_t i : bin) members.push_back(&samples[i]);
    out.push_back(build_batch(members, cfg, p));
  }
  return out;
}

}  // namespace emb
