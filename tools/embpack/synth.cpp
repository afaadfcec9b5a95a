#include "synth.hpp"

#include <cmath>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "core/half.hpp"
#include "context_features.hpp"
#include "progress.hpp"

namespace emb {

namespace {

// Independent draws per purpose: (what, index) picks the Philox substream.
enum Draw : uint64_t { kTaskText, kEpisode, kPhase, kWeights, kBias };

struct Draws {
  uint64_t seed;
  CounterRng rng(Draw what, uint64_t index) const { return CounterRng(seed, RngStream::synth, what, index); }
};

std::string instruction(const Draws& d, int task) {
  static const char* verbs[] = {"pick up", "push", "open", "close", "stack", "move", "put", "turn on", "slide", "lift"};
  static const char* colors[] = {"red", "green", "blue", "yellow", "black", "white", "wooden", "metal"};
  static const char* objects[] = {"block", "mug", "bowl", "drawer", "cube", "bottle", "lid", "plate", "can"};
  static const char* places[] = {"into the basket", "onto the plate", "to the left", "on the top shelf",
                                 "next to the sink", "behind the box", "in the drawer"};
  CounterRng r = d.rng(kTaskText, uint64_t(task));
  auto pick = [&](int i, int n) { return int(r.bits(uint64_t(i)) % uint32_t(n)); };
  std::string text = verbs[pick(0, 10)];
  int words = 1 + pick(1, 3);  // short "open drawer" to long "pick up the red mug ... basket"
  if (words >= 2) text += std::string(" the ") + colors[pick(2, 8)];
  text += std::string(" ") + objects[pick(3, 9)];
  if (words >= 3) text += std::string(" ") + places[pick(4, 7)];
  if (words >= 3 && pick(5, 2)) text += " and then let go slowly";
  if (text.size() > 60) text.resize(60);
  return text;
}

// Smooth features of a (state, token index) pair: what a frozen encoder would see.
float token_feature(const float* state, int state_dim, int token, int d) {
  return std::sin(1.3f * state[d % state_dim] * float(1 + token % 3) + 0.37f * float(token) + 0.11f * float(d));
}

// The dataset's attributes, its tasks' instructions and its embodiments' widths.
PackedData synth_tables(const SynthOptions& o, const Draws& draws) {
  EMB_CHECK(o.family == "gr00t" || o.family == "wan", "synth: --family must be gr00t or wan, got ", quoted(o.family));
  EMB_CHECK(o.episodes >= 1 && o.min_steps >= 1 && o.max_steps >= o.min_steps, "synth: need episodes >= 1 and 1 <= min-steps <= max-steps");
  EMB_CHECK(o.views >= 1 && o.views <= 3, "synth: --views must be 1..3");
  EMB_CHECK(o.embodiments >= 1 && o.tasks >= 1 && o.state_dim >= 2 && o.action_dim >= 1, "synth: bad dimensions");
  PackedData p;
  p.family = o.family;
  p.fps = o.fps;
  p.source = "synthetic";
  p.state_dim = o.state_dim;
  p.action_dim = o.action_dim;
  for (int t = 0; t < o.tasks; ++t) p.task_text.push_back(instruction(draws, t));
  for (int e = 0; e < o.embodiments; ++e) {  // narrower embodiments drop trailing columns
    p.embodiment_state_dim.push_back(std::max(2, o.state_dim - (e % 3) * o.state_dim / 4));
    p.embodiment_action_dim.push_back(std::max(1, o.action_dim - (e % 3) * o.action_dim / 4));
  }
  return p;
}

// The action map: a = tanh(W_e s + b_task), fixed for the whole dataset.
struct ActionMap {
  std::vector<float> W;  // [embodiments, action_dim, state_dim]
  std::vector<float> B;  // [tasks, action_dim]
};

ActionMap action_map(const SynthOptions& o, const Draws& draws) {
  ActionMap m{std::vector<float>(size_t(o.embodiments) * o.action_dim * o.state_dim),
              std::vector<float>(size_t(o.tasks) * o.action_dim)};
  CounterRng wr = draws.rng(kWeights, 0), br = draws.rng(kBias, 0);
  for (size_t i = 0; i < m.W.size(); ++i) m.W[i] = float(wr.normal(i) / std::sqrt(double(o.state_dim)));
  for (size_t i = 0; i < m.B.size(); ++i) m.B[i] = float(0.5 * br.normal(i));
  return m;
}

// wan: each task's text features and the latent views (their frames come per episode).
void add_wan_context(const SynthOptions& o, PackedData& p, ContextFeatures& text_features, VarlenFeatures& ctx) {
  for (const std::string& text : p.task_text) {
    text_features.add_instruction(text, ctx.values);
    ctx.offsets.push_back(int64_t(ctx.values.size()) / ctx.dim);
  }
  for (int v = 0; v < o.views; ++v) {
    LatentView l;
    l.name = str("view", v);
    l.height = o.latent_height, l.width = o.latent_width, l.channels = o.latent_channels;
    l.steps_per_latent = o.steps_per_latent;
    p.latents.push_back(l);
  }
}

// One episode's step t: its state (sines of random phase), action, reward, done flag and,
// for gr00t, its vl features (views of the state, then the instruction's).
struct EpisodeDraw {
  int64_t len;
  int32_t task, emb;
  int sd, ad, views;  // the embodiment's widths, its camera views
  CounterRng phase;
};

void add_step(const SynthOptions& o, PackedData& p, const ActionMap& m, const EpisodeDraw& e, int64_t t,
              ContextFeatures& text_features, VarlenFeatures& ctx) {
  float* s = &*p.state.insert(p.state.end(), size_t(o.state_dim), 0.f);
  for (int i = 0; i < e.sd; ++i) {
    double omega = 0.5 + 1.5 * double(i) / double(e.sd);
    s[i] = float(std::sin(omega * double(t) / o.fps + 6.2832 * e.phase.uniform(uint64_t(i))));
  }
  float* a = &*p.action.insert(p.action.end(), size_t(o.action_dim), 0.f);
  for (int j = 0; j < e.ad; ++j) {
    double z = m.B[size_t(e.task) * o.action_dim + j];
    for (int i = 0; i < e.sd; ++i) z += m.W[(size_t(e.emb) * o.action_dim + j) * o.state_dim + i] * s[i];
    a[j] = float(std::tanh(z));
  }
  p.reward.push_back(t == e.len - 1 ? 1.f : 0.f);
  p.done.push_back(t == e.len - 1 ? 1 : 0);
  if (o.family != "gr00t") return;
  for (int v = 0; v < e.views; ++v)
    for (int k = 0; k < o.vl_tokens_per_view; ++k)
      for (int c = 0; c < ctx.dim; ++c)
        ctx.values.push_back(float_to_half(token_feature(s, e.sd, v * o.vl_tokens_per_view + k, c)));
  text_features.add_instruction(p.task_text[e.task], ctx.values);
  ctx.offsets.push_back(int64_t(ctx.values.size()) / ctx.dim);
}

// One latent frame per steps_per_latent steps of episode `ep`, from the state of its first step.
void add_latent_frames(PackedData& p, int64_t ep, const EpisodeDraw& e) {
  for (LatentView& l : p.latents) {
    int64_t frames = (e.len + l.steps_per_latent - 1) / l.steps_per_latent;
    int64_t ep_start = p.episode_offsets[size_t(ep)];
    for (int64_t j = 0; j < frames; ++j) {
      const float* s = &p.state[size_t(ep_start + j * l.steps_per_latent) * p.state_dim];
      for (int64_t h = 0; h < l.height; ++h)
        for (int64_t w = 0; w < l.width; ++w)
          for (int64_t c = 0; c < l.channels; ++c)
            l.values.push_back(float_to_half(std::sin(0.5f * float(h) + 0.7f * float(w) + float(c) +
                                                      2.f * s[c % e.sd] + float(l.name.back()))));
    }
    l.offsets.push_back(l.offsets.back() + frames);
  }
}

}  // namespace

PackedData synthesize(const SynthOptions& o) {
  Draws draws{o.seed};
  PackedData p = synth_tables(o, draws);
  const ActionMap map = action_map(o, draws);
  const bool gr00t = o.family == "gr00t";
  ContextFeatures text_features(gr00t ? o.d_vl : o.d_txt, o.seed);
  VarlenFeatures& ctx = p.features[gr00t ? "vl" : "txt"];
  ctx.dim = gr00t ? o.d_vl : o.d_txt;
  if (!gr00t) add_wan_context(o, p, text_features, ctx);
  Progress progress("synth", o.episodes, o.progress);
  for (int64_t ep = 0; ep < o.episodes; ++ep) {
    CounterRng er = draws.rng(kEpisode, uint64_t(ep));
    EpisodeDraw e{o.min_steps + int64_t(er.bits(0) % uint32_t(o.max_steps - o.min_steps + 1)),
                  int32_t(er.bits(1) % uint32_t(o.tasks)), int32_t(er.bits(2) % uint32_t(o.embodiments)),
                  0, 0, 0, draws.rng(kPhase, uint64_t(ep))};
    e.sd = p.embodiment_state_dim[e.emb], e.ad = p.embodiment_action_dim[e.emb], e.views = 1 + e.emb % o.views;
    p.add_episode(e.len, e.task, e.emb);
    for (int64_t t = 0; t < e.len; ++t) add_step(o, p, map, e, t, text_features, ctx);
    add_latent_frames(p, ep, e);
    progress.advance();
  }
  return p;
}

}  // namespace emb
