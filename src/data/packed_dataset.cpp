#include "data/packed_dataset.hpp"

#include <glob.h>

#include <algorithm>
#include <cmath>

#include "batch/sample_tokens.hpp"
#include "core/error.hpp"
#include "core/half.hpp"
#include "data/dreamzero_alignment.hpp"
#include "data/modality_sub_keys.hpp"
#include "data/packed_format.hpp"
#include "data/packed_verify.hpp"

namespace emb {

namespace {

const char* family_text(Family f) { return f == Family::gr00t ? "gr00t" : "wan"; }

// Features made by another backbone than the model's would train a head that cannot run on
// its backbone: the file's /features/vl must name `digest` as what made them.
void check_vl_backbone(const H5File& f, const std::string& digest) {
  if (digest.empty()) return;
  if (!f.has_attr(packed::kVlFeatures, packed::kBackboneDigest))
    f.fail(packed::kVlFeatures, str("made without a backbone digest (the stand-in encoder of the simulated tasks), "
                                    "but data.vl_backbone asks for the backbone ", digest,
                                    "; compute them with embpack features --backbone"));
  const std::string made_by = f.attr_string(packed::kVlFeatures, packed::kBackboneDigest);
  if (made_by != digest) {
    const std::string checkpoint = f.has_attr(packed::kVlFeatures, "checkpoint")
                                       ? " (" + f.attr_string(packed::kVlFeatures, "checkpoint") + ")"
                                       : std::string();
    f.fail(packed::kVlFeatures, str("made by the backbone ", made_by, checkpoint, ", not data.vl_backbone's ", digest,
                                    "; recompute them with embpack features --backbone"));
  }
}

// Input to fix before any run can use the file (features of other encoders, a missing group):
// the one-line data error with exit code 2.
[[noreturn]] void fail_input(const H5File& f, const std::string& ds, const std::string& message) {
  throw Error(f.where(ds, message), kExitInput);
}

// data.dreamzero_encoders: each DreamZero array names the encoders that made it.
void check_dreamzero_encoders(const H5File& f, const std::string& latents, const std::string& digest) {
  if (digest.empty()) return;
  for (const std::string& ds : {latents, std::string(packed::kTxtFeatures), std::string(packed::kClipFeatures)}) {
    const std::string made_by = f.has_attr(ds, packed::kEncodersDigest) ? f.attr_string(ds, packed::kEncodersDigest) : "";
    if (made_by != digest)
      fail_input(f, ds, str("made by the encoders ", made_by.empty() ? std::string("(no digest)") : made_by,
                     ", not data.dreamzero_encoders' ", digest, "; recompute them with embpack features --dreamzero"));
  }
}

// The DreamZero layout's groups (embpack features --dreamzero) that a first_frame_block deck reads:
// per-step clips of F latent frames with their I2V channels, CLIP rows per step, states wide enough.
void open_dreamzero(const H5File& f, const TokenConfig& cfg, const std::vector<int64_t>& latent_dims,
                    const std::string& digest, PackedFileIndex& x) {
  const std::string& ds = x.latent_dataset;
  if (!f.has_attr(ds, packed::kClipFrames))
    fail_input(f, ds, "missing the DreamZero layout (attribute clip_frames: a clip of latent frames per step), which "
               "model.first_frame_block needs; compute it with embpack features --dreamzero");
  if (!f.has(packed::kClipFeatures))
    fail_input(f, packed::kClipFeatures, "missing (the CLIP image context of the DreamZero layout); compute it with embpack "
                                  "features --dreamzero");
  x.clip_frames = std::stoll(f.attr_string(ds, packed::kClipFrames));
  x.frame_stride = std::stoll(f.attr_string(ds, packed::kFrameStride));
  if (x.clip_frames != cfg.latent_frames)
    fail_input(f, ds, str("clips of ", x.clip_frames, " latent frames, the model trains on ", cfg.latent_frames,
                   " (embpack features --dreamzero --frames ", 1 + 4 * (cfg.latent_frames - 1), ")"));
  x.latent_file_channels = latent_dims[3];
  const int64_t cond = f.has_attr(ds, packed::kCondChannels) ? std::stoll(f.attr_string(ds, packed::kCondChannels)) : 0;
  if (cond != cfg.cond_channels)
    fail_input(f, ds, str(cond, " I2V channels (cond_channels), the model reads ", cfg.cond_channels,
                          " (model.cond_channels)"));
  if (cfg.latent_channels != x.latent_file_channels - cond)
    fail_input(f, ds, str(x.latent_file_channels - cond, " latent channels (", x.latent_file_channels, " minus ", cond,
                          " I2V), the model reads ", cfg.latent_channels, " (model.latent_channels)"));
  if (x.state_dim > cfg.state_dim) fail_input(f, packed::kState, str("state width ", x.state_dim, " > model state_dim ", cfg.state_dim));
  const std::vector<int64_t> clip = f.dims(packed::kClipFeatures);
  const std::vector<int64_t> clip_offsets = f.read_all<int64_t>(packed::kClipOffsets);
  x.clip_tokens = x.steps > 0 ? clip_offsets[1] - clip_offsets[0] : 0, x.clip_dim = clip[1];
  if (clip[0] != x.clip_tokens * x.steps)
    fail_input(f, packed::kClipFeatures, str(clip[0], " rows, expected ", x.clip_tokens, " per step"));
  if (x.clip_tokens != cfg.clip_tokens || x.clip_dim != cfg.d_clip)
    fail_input(f, packed::kClipFeatures, str(x.clip_tokens, " rows of width ", x.clip_dim, " per step, the model reads ",
                                             cfg.clip_tokens, " of width ", cfg.d_clip, " (model.clip_tokens, model.d_clip)"));
  check_dreamzero_encoders(f, ds, digest);
}

// data.vl_augment: the file's stored augmented variants (embpack features --augment K).
int64_t augmented_variants(const H5File& f) {
  const int64_t k = f.has_attr(packed::kVlFeatures, packed::kAugmentVariants)
                        ? std::stoll(f.attr_string(packed::kVlFeatures, packed::kAugmentVariants))
                        : 0;
  if (k <= 0)
    f.fail(packed::kVlFeatures, "holds no augmented variants, but data.vl_augment = on; compute them with embpack "
                                "features --augment K, or set data.vl_augment = off");
  return k;
}

// Online encoders: every /video view (they must share one resolution: GR00T stacks a sample's
// views, DreamZero tiles them) and the prompt of every task, whose lengths are the steps' context
// tokens. `online` names the deck's choice in the message.
void open_online_vl(const H5File& f, const PackedSummary& s, const VlPrompt& prompt, const std::string& online,
                    PackedFileIndex& x) {
  if (s.video_views.empty())
    fail_input(f, packed::kVideo, str("no camera frames, but ", online, " = online computes its features from them; "
                                      "pack the videos (embpack lerobot) or use ", online, " = offline"));
  for (const std::string& view : s.video_views) {
    const std::string ds = str(packed::kVideo, "/", view);
    const std::vector<int64_t> d = f.dims(ds);
    if (!x.video_views.empty() && (d[1] != x.frame_height || d[2] != x.frame_width))
      f.fail(ds, str("frames ", d[1], "x", d[2], " differ from ", packed::kVideo, "/", x.video_views[0], "'s ",
                     x.frame_height, "x", x.frame_width, " (", online, " = online stacks or tiles a sample's views: "
                     "they must share one resolution)"));
    x.frame_height = d[1], x.frame_width = d[2];
    x.video_views.push_back(view);
  }
  for (const std::string& text : f.read_strings(packed::kTaskText))
    x.task_prompts.push_back(prompt(text, int(x.video_views.size())));
  x.vl_offsets.assign(1, 0);
  for (size_t e = 0; e + 1 < x.episode_offsets.size(); ++e)
    for (int64_t t = x.episode_offsets[e]; t < x.episode_offsets[e + 1]; ++t)
      x.vl_offsets.push_back(x.vl_offsets.back() + int64_t(x.task_prompts[size_t(x.episode_task[e])].size()));
}

// wan: no task's text longer than model.max_text_tokens.
void check_text_tokens(const H5File& f, const TokenConfig& cfg, const std::vector<int64_t>& txt_offsets) {
  for (size_t t = 0; t + 1 < txt_offsets.size(); ++t)
    if (cfg.max_text_tokens > 0 && txt_offsets[t + 1] - txt_offsets[t] > cfg.max_text_tokens)
      f.fail(packed::kTxtOffsets, str("task ", t, " has ", txt_offsets[t + 1] - txt_offsets[t],
                                      " text tokens > model max_text_tokens ", cfg.max_text_tokens));
}

// wan, model.encoders = online: the DreamZero layout the step's encoders make from the file's
// frames and task texts (any family's packed file: its /features and /latents are not read).
void open_online_dreamzero(const H5File& f, const PackedSummary& s, const TokenConfig& cfg, const VlFeatureChoice& vl,
                           PackedFileIndex& x) {
  if (x.state_dim > cfg.state_dim) fail_input(f, packed::kState, str("state width ", x.state_dim, " > model state_dim ", cfg.state_dim));
  open_online_vl(f, s, vl.online_prompt, "model.encoders", x);
  x.clip_frames = cfg.latent_frames, x.frame_stride = vl.frame_stride;
  x.latent_file_channels = cfg.latent_channels + cfg.cond_channels;
  x.clip_tokens = cfg.clip_tokens, x.clip_dim = cfg.d_clip;
  x.txt_offsets.assign(1, 0);
  for (const std::vector<int32_t>& ids : x.task_prompts) x.txt_offsets.push_back(x.txt_offsets.back() + int64_t(ids.size()));
  check_text_tokens(f, cfg, x.txt_offsets);
}

PackedFileIndex open_file(MPI_Comm comm, MpioTransfer transfer, const std::string& path, const TokenConfig& cfg,
                          const std::string& view, const VlFeatureChoice& vl) {
  PackedFileIndex x;
  x.file = H5File::open(path, comm, transfer);
  const H5File& f = x.file;
  PackedSummary s = verify_structure(f);
  // model.encoders = online reads no features: any family's file (embpack lerobot's) will do.
  const bool online_dreamzero = cfg.family == Family::wan && vl.online_prompt;
  if (s.family != family_text(cfg.family) && !online_dreamzero)
    f.fail("/", str("family '", s.family, "' but the model is ", family_text(cfg.family)));
  x.steps = s.steps, x.state_dim = s.state_dim, x.action_dim = s.action_dim;
  if (x.action_dim > cfg.action_dim)
    f.fail(packed::kAction, str("action width ", x.action_dim, " > model action_dim ", cfg.action_dim));
  x.episode_offsets = f.read_all<int64_t>(packed::kEpisodeOffsets);
  x.episode_task = f.read_all<int32_t>(packed::kEpisodeTask);
  x.episode_embodiment = f.read_all<int32_t>(packed::kEpisodeEmbodiment);
  if (s.embodiments > 0) {
    x.embodiment_state_dim = f.read_all<int32_t>(packed::kEmbodimentStateDim);
    x.embodiment_action_dim = f.read_all<int32_t>(packed::kEmbodimentActionDim);
  }
  for (const ModalitySubKey& k : modality_sub_keys(f, "action"))
    if (!k.absolute) x.relative_action_columns.emplace_back(k.start, k.end);
  if (cfg.family == Family::wan)  // gr00t reads the state at the sample's step only, never past the end
    for (const ModalitySubKey& k : modality_sub_keys(f, "state"))
      if (!k.absolute) x.relative_state_columns.emplace_back(k.start, k.end);
  if (online_dreamzero) {
    open_online_dreamzero(f, s, cfg, vl, x);
    return x;
  }
  if (cfg.family == Family::gr00t) {
    if (x.state_dim > cfg.state_dim)
      f.fail(packed::kState, str("state width ", x.state_dim, " > model state_dim ", cfg.state_dim));
    for (int32_t e : x.episode_embodiment)
      if (e < 0 || e >= cfg.n_embodiments)
        f.fail(packed::kEpisodeEmbodiment, str("embodiment ", e, " outside the model's ", cfg.n_embodiments));
    if (vl.online_prompt) {
      open_online_vl(f, s, vl.online_prompt, "model.backbone", x);
      return x;
    }
    int64_t d = f.dims(packed::kVlFeatures)[1];
    if (d != cfg.d_ctx) f.fail(packed::kVlFeatures, str("feature dim ", d, " != model context dim ", cfg.d_ctx));
    check_vl_backbone(f, vl.backbone_digest);
    if (vl.augmented) x.vl_variants = augmented_variants(f);
    x.vl_offsets = f.read_all<int64_t>(packed::kVlOffsets);
    return x;
  }
  std::string v = view.empty() ? s.latent_views.front() : view;
  if (std::find(s.latent_views.begin(), s.latent_views.end(), v) == s.latent_views.end())
    f.fail(str(packed::kLatents, "/", v), "missing (deck data.view)");
  x.latent_dataset = str(packed::kLatents, "/", v);
  std::vector<int64_t> ld = f.dims(x.latent_dataset);
  if (ld[1] != cfg.latent_height || ld[2] != cfg.latent_width || (ld[3] != cfg.latent_channels && !f.has_attr(x.latent_dataset, packed::kClipFrames)))
    f.fail(x.latent_dataset, str("latent shape [", ld[1], ", ", ld[2], ", ", ld[3], "] != model [", cfg.latent_height,
                                 ", ", cfg.latent_width, ", ", cfg.latent_channels, "]"));
  x.latent_offsets = f.read_all<int64_t>(x.latent_dataset + "_offsets");
  x.steps_per_latent = int64_t(f.attr_double(x.latent_dataset, packed::kStepsPerLatent));
  if (cfg.first_frame_block || f.has_attr(x.latent_dataset, packed::kClipFrames))
    open_dreamzero(f, cfg, ld, vl.dreamzero_digest, x);
  int64_t d = f.dims(packed::kTxtFeatures)[1];
  if (d != cfg.d_ctx) f.fail(packed::kTxtFeatures, str("feature dim ", d, " != model context dim ", cfg.d_ctx));
  x.txt_offsets = f.read_all<int64_t>(packed::kTxtOffsets);
  check_text_tokens(f, cfg, x.txt_offsets);
  std::vector<uint16_t> raw = f.read_all<uint16_t>(packed::kTxtFeatures);
  x.txt.resize(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) x.txt[i] = half_to_float(raw[i]);
  return x;
}

// data.dreamzero_episode_end = skip: the samples are the steps whose clip window ends inside their
// episode (upstream's DROID loader never pads a window).
void keep_fitting_windows(const TokenConfig& cfg, PackedFileIndex& x) {
  const int64_t window = x.clip_window(cfg);
  x.every_step_a_sample = false;
  for (size_t e = 0; e + 1 < x.episode_offsets.size(); ++e)
    for (int64_t t = x.episode_offsets[e]; t + window < x.episode_offsets[e + 1]; ++t) x.sample_rows.push_back(t);
}

}  // namespace

int64_t PackedFileIndex::episode_of(int64_t row) const {
  return int64_t(std::upper_bound(episode_offsets.begin(), episode_offsets.end(), row) - episode_offsets.begin()) - 1;
}

int64_t PackedFileIndex::latent_of(int64_t row) const {
  int64_t e = episode_of(row);
  return latent_offsets[e] + (row - episode_offsets[e]) / steps_per_latent;
}

int64_t PackedFileIndex::episode_samples(int64_t e) const {
  const int64_t begin = episode_offsets[size_t(e)], end = episode_offsets[size_t(e) + 1];
  if (every_step_a_sample) return end - begin;
  return int64_t(std::lower_bound(sample_rows.begin(), sample_rows.end(), end) -
                 std::lower_bound(sample_rows.begin(), sample_rows.end(), begin));
}

int64_t PackedFileIndex::action_width(int64_t episode) const { return action_width_of(episode_embodiment[episode]); }

int64_t PackedFileIndex::state_width_of(int32_t id) const {
  return embodiment_state_dim.empty() ? state_dim : int64_t(embodiment_state_dim.at(size_t(id)));
}

int64_t PackedFileIndex::action_width_of(int32_t id) const {
  return embodiment_action_dim.empty() ? action_dim : int64_t(embodiment_action_dim.at(size_t(id)));
}

int64_t PackedFileIndex::block_step(int64_t row, int64_t b, const TokenConfig& cfg) const {
  return row + block_anchor_frame(b, cfg) * frame_stride;
}

int64_t PackedFileIndex::clip_reach(const TokenConfig& cfg) const {
  const int64_t blocks = block_step(0, sample_blocks(cfg, cfg.latent_frames) - 1, cfg) +
                         std::max(cfg.actions_per_block, cfg.states_per_block);
  if (!online_vl()) return blocks;
  return std::max(blocks, (clip_raw_frames(cfg.latent_frames) - 1) * frame_stride + 1);  // the clip's last raw frame
}

int64_t PackedFileIndex::clip_window(const TokenConfig& cfg) const {
  return std::max(4 * int64_t(cfg.latent_frames - 1) * frame_stride, clip_reach(cfg) - 1);
}

std::pair<int64_t, int64_t> PackedFileIndex::feature_rows(int64_t row, const TokenConfig& cfg) const {
  if (cfg.family == Family::gr00t) return {vl_offsets[row], vl_offsets[row + 1]};
  if (dreamzero_layout()) return {row * clip_frames, (row + 1) * clip_frames};
  int64_t e = episode_of(row);
  int64_t last = (row - episode_offsets[e]) / steps_per_latent, first = std::max<int64_t>(0, last - cfg.latent_frames + 1);
  return {latent_offsets[e] + first, latent_offsets[e] + last + 1};
}

std::string PackedFileIndex::feature_dataset(int64_t epoch) const {
  if (!latent_dataset.empty()) return latent_dataset;
  if (online_vl()) return "";
  return vl_variants > 0 ? str(packed::kVlAugmented, epoch % vl_variants) : std::string(packed::kVlFeatures);
}

PackedDataset::PackedDataset(MPI_Comm comm, MpioTransfer transfer, const std::vector<std::string>& paths,
                             const TokenConfig& cfg, const std::string& view, const VlFeatureChoice& vl) {
  EMB_CHECK(!paths.empty(), "data.paths: no files");
  if (cfg.family == Family::wan)
    EMB_CHECK(cfg.latent_frames % cfg.patch[0] == 0 && cfg.latent_height % cfg.patch[1] == 0 &&
                  cfg.latent_width % cfg.patch[2] == 0,
              "model: latent frames/height/width must be multiples of the patch size");
  for (const std::string& p : paths) {
    files_.push_back(open_file(comm, transfer, p, cfg, view, vl));
    if (files_.back().dreamzero_layout() && !vl.dreamzero_repeat_end) keep_fitting_windows(cfg, files_.back());
    const PackedFileIndex& x = files_.back();
    if (x.dreamzero_layout() != files_.front().dreamzero_layout())
      x.file.fail(x.latent_dataset, str("the DreamZero layout ", x.dreamzero_layout() ? "here" : "missing here",
                                        " but ", x.dreamzero_layout() ? "not" : "", " in ", files_.front().file.path(),
                                        ": a run's files share one layout"));
    sample_begin_.push_back(sample_begin_.back() + x.samples());
    if (cfg.family == Family::gr00t) {
      for (size_t s = 0; s + 1 < x.vl_offsets.size(); ++s) add_context(1, x.vl_offsets[s + 1] - x.vl_offsets[s]);
    } else {
      for (size_t t = 0; t + 1 < x.txt_offsets.size(); ++t)
        max_context_ = std::max(max_context_, sample_context_tokens(cfg, x.txt_offsets[t + 1] - x.txt_offsets[t]));
      for (size_t e = 0; e + 1 < x.episode_offsets.size(); ++e) {  // a wan sample reads its episode's task text
        const size_t t = size_t(x.episode_task[e]);
        add_context(x.episode_samples(int64_t(e)), sample_context_tokens(cfg, x.txt_offsets[t + 1] - x.txt_offsets[t]));
      }
    }
  }
  query_tokens_ = sample_query_tokens(cfg, cfg.latent_frames);
  if (samples() == 0 && files_.front().dreamzero_layout())
    throw Error(str("data.paths: no step's DreamZero window (", files_.front().clip_window(cfg) + 1,
                    " steps of clip, actions and states) fits in its episode; use longer episodes or "
                    "data.dreamzero_episode_end = repeat"),
                kExitInput);
}

void PackedDataset::add_context(int64_t samples, int64_t tokens) {
  max_context_ = std::max(max_context_, tokens);
  context_sum_ += double(samples) * double(tokens);
  context_square_sum_ += double(samples) * double(tokens) * double(tokens);
}

double PackedDataset::context_tokens_std() const {
  if (samples() == 0) return 0.0;
  const double mean = mean_context_tokens();
  return std::sqrt(std::max(0.0, context_square_sum_ / double(samples()) - mean * mean));
}

std::pair<int32_t, int64_t> PackedDataset::locate(int64_t sample) const {
  int32_t f = int32_t(std::upper_bound(sample_begin_.begin(), sample_begin_.end(), sample) - sample_begin_.begin()) - 1;
  return {f, files_[size_t(f)].sample_row(sample - sample_begin_[size_t(f)])};
}

std::vector<Chunk> PackedDataset::chunks(int64_t chunk_rows) const {
  std::vector<Chunk> out;
  for (int32_t f = 0; f < int32_t(files_.size()); ++f) {
    const PackedFileIndex& x = files_[size_t(f)];
    for (int64_t i = 0; i < x.samples(); i += chunk_rows) {
      const int64_t last = std::min(x.samples(), i + chunk_rows) - 1;
      out.push_back(Chunk{f, x.sample_row(i), x.sample_row(last) + 1, last + 1 - i});
    }
  }
  return out;
}

std::vector<std::string> expand_paths(const std::vector<std::string>& patterns) {
  std::vector<std::string> out;
  for (const std::string& p : patterns) {
    if (p.find_first_of("*?[") == std::string::npos) {
      out.push_back(p);
      continue;
    }
    glob_t g{};
    int rc = glob(p.c_str(), 0, nullptr, &g);
    std::vector<std::string> matches(g.gl_pathv, g.gl_pathv + (rc == 0 ? g.gl_pathc : 0));
    globfree(&g);
    EMB_CHECK(!matches.empty(), "data.paths: '", clipped_path(p), "' matches no file");
    std::sort(matches.begin(), matches.end());
    out.insert(out.end(), matches.begin(), matches.end());
  }
  return out;
}

}  // namespace emb
