#include "dreamzero_features.hpp"

#include <algorithm>
#include <chrono>
#include <memory>

#include "core/error.hpp"
#include "core/half.hpp"
#include "data/dreamzero_alignment.hpp"
#include "data/packed_format.hpp"
#include "encoders/dreamzero/dreamzero_encoders.hpp"
#include "encoders/dreamzero/view_tiling.hpp"
#include "features_driver.hpp"
#include "generated/git_commit.hpp"
#include "kernels/make_ops.hpp"
#include "progress.hpp"

namespace emb {

namespace {

// The encoders and the tokenizer, loaded once per rank on the option's device.
struct Encoders {
  std::unique_ptr<Ops> ops;
  std::unique_ptr<encoders::DreamZeroEncoders> dz;

  Encoders(const DreamZeroFeaturesOptions& o, const World& world) {
    const encoders::DreamZeroEncoderFiles files = encoders::dreamzero_encoder_files(o.checkpoint, o.files);
    const bool cuda = o.device == "cuda";
    ops = make_ops(BackendConfig{cuda ? Device::cuda : Device::cpu}, world.local_rank);
    // DreamZero runs all three in bf16
    dz = std::make_unique<encoders::DreamZeroEncoders>(*ops, files, cuda ? DType::bf16 : DType::f32);
  }
};

// Per task, the umT5 rows of its DreamZero prompt (real rows only).
VarlenFeatures text_features(encoders::DreamZeroEncoders& enc, const PackedData& p, const DreamZeroFeaturesOptions& o,
                             int views) {
  const tokenizers::DreamZeroRobot robot = tokenizers::dreamzero_robot_from_name(o.robot);
  VarlenFeatures txt;
  txt.dim = enc.t5_dims().dim;
  for (const std::string& text : p.task_text) {
    const std::vector<int32_t> ids = encoders::dreamzero_prompt_ids(enc.tokenizer(), robot, text, views);
    for (float x : enc.text_rows(ids)) txt.values.push_back(float_to_half(x));
    txt.offsets.push_back(txt.offsets.back() + int64_t(ids.size()));
  }
  return txt;
}

// What produced the features, on each of the three arrays (the loader checks the digest).
std::map<std::string, std::string> provenance(const DreamZeroFeaturesOptions& o, const encoders::DreamZeroEncoders& enc,
                                              const std::string& digest, const std::string& views) {
  return {{"encoders", "dreamzero: wan2.1 vae, umt5-xxl, clip vit-h/14"},
          {packed::kEncodersDigest, digest},
          {"checkpoint", o.checkpoint},
          {"recipe", str("embtrain ", EMBTRAIN_GIT_COMMIT)},
          {"preprocessing",
           str("views ", views, " tiled ", o.tiling, " of ", o.tile, " (bilinear, x/127.5 - 1, empty tiles -1); clip of ",
               o.frames, " frames every ", o.frame_stride, " step(s) from each step, the episode's last frame "
               "repeated past its end; VAE in causal chunks of 1 then ", o.chunk_frames, "; y = [mask 4 | VAE(first frame, "
               "zeros)]; CLIP of the first frame (bicubic 224); text: DreamZero's ", o.robot, " template, umT5 cleaning, </s>")},
          {"dims", enc.dims()}};
}

// The clip of step s (share row), tiled: [T, H, W, 3] in [-1, 1].
void tile_clip(const PackedData& p, const std::vector<size_t>& views, const encoders::ViewTiler& tiler,
               const DreamZeroFeaturesOptions& o, int64_t s, int64_t episode_end, float* clip) {
  const int64_t frame_bytes = p.videos[views[0]].height * p.videos[views[0]].width * 3;
  tiler.tile_clip(
      [&](int k, int v) {
        return p.videos[views[size_t(v)]].frames.data() + clip_frame_step(s, k, o.frame_stride, episode_end) * frame_bytes;
      },
      o.frames, clip);
}

PackedData compute_share(const DreamZeroFeaturesOptions& o, const World& world, DreamZeroFeaturesReport& report) {
  const auto start = std::chrono::steady_clock::now();
  EMB_CHECK(o.frame_stride > 0 && o.chunk_frames >= 0, "features: --frame-stride must be positive, --vae-chunk >= 0");
  PackedData p = std::move(read_episode_share(o.input, world).data);
  const std::vector<size_t> views = view_order(p, o.views, o.input);
  const encoders::ViewTiling tiling = encoders::parse_view_tiling(o.tiling, o.tile);
  const encoders::ViewTiler tiler(tiling, int(views.size()), p.videos[views[0]].height, p.videos[views[0]].width);
  Encoders loaded(o, world);
  encoders::DreamZeroEncoders& enc = *loaded.dz;
  const int H = tiling.height(), W = tiling.width();
  enc.check_clip(o.frames, H, W, str("--frames ", o.frames, " of the ", o.tiling, " tiling of ", o.tile, " tiles"));
  report.digest = encoders::dreamzero_encoders_digest(enc.files());
  report.dims = enc.dims();
  report.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const int F = enc.latent_frames(o.frames), z = enc.vae_dims().z, f = enc.vae_dims().spatial_factor();
  LatentView lat{"dreamzero", H / f, W / f, 2 * z + 4, 1, {}, {0}, {}};
  VarlenFeatures clip;
  clip.dim = enc.clip_dims().dim;
  std::vector<float> video(size_t(o.frames) * H * W * 3);
  Progress progress(str("features --dreamzero (rank ", world.rank, " of ", world.size, ")"), p.steps(), o.progress,
                    world.rank == 0);
  for (int64_t e = 0; e < p.episodes(); ++e) {
    for (int64_t s = p.episode_offsets[size_t(e)]; s < p.episode_offsets[size_t(e) + 1]; ++s) {
      tile_clip(p, views, tiler, o, s, p.episode_offsets[size_t(e) + 1], video.data());
      const encoders::DreamZeroClipFeatures made = enc.encode_clip(video.data(), o.frames, H, W, o.chunk_frames);
      for (float x : made.latents) lat.values.push_back(float_to_half(x));
      for (float x : made.clip) clip.values.push_back(float_to_half(x));
      clip.offsets.push_back(clip.offsets.back() + enc.clip_dims().tokens());
      progress.advance(1);
    }
    lat.offsets.push_back(lat.offsets.back() + F * (p.episode_offsets[size_t(e) + 1] - p.episode_offsets[size_t(e)]));
  }
  const std::map<std::string, std::string> made_by = provenance(o, enc, report.digest, joined_names(p, views));
  lat.attributes = made_by;
  lat.attributes[packed::kClipFrames] = std::to_string(F);
  lat.attributes[packed::kFrameStride] = std::to_string(o.frame_stride);
  lat.attributes[packed::kCondChannels] = std::to_string(z + 4);
  lat.attributes["frames"] = std::to_string(o.frames);
  clip.attributes = made_by;
  VarlenFeatures txt;  // per task: rank 0 holds every task's rows, the others none (one collective write)
  txt.dim = enc.t5_dims().dim;
  if (world.rank == 0) txt = text_features(enc, p, o, int(views.size()));
  txt.attributes = made_by;
  p.family = "wan";
  p.features = {{"txt", std::move(txt)}, {"clip", std::move(clip)}};
  p.latents = {std::move(lat)};
  report.latent_frames = int64_t(F) * p.steps();
  return p;
}

}  // namespace

PackedData compute_dreamzero_features(const DreamZeroFeaturesOptions& o, const World& world,
                                      DreamZeroFeaturesReport& report) {
  const auto start = std::chrono::steady_clock::now();
  PackedData share = compute_share_agreed(world, [&] { return compute_share(o, world, report); });
  const std::vector<int64_t> sums =
      sum_over_ranks({share.steps(), report.latent_frames, share.features["txt"].offsets.back()}, world);
  report.steps = sums[0], report.latent_frames = sums[1], report.text_rows = sums[2];
  report.ranks = world.size;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return share;
}

}  // namespace emb
