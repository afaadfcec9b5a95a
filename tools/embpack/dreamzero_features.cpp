#include "dreamzero_features.hpp"

#include <algorithm>
#include <chrono>
#include <memory>

#include "core/error.hpp"
#include "core/half.hpp"
#include "data/dreamzero_alignment.hpp"
#include "data/packed_format.hpp"
#include "encoders/clip/clip_encoder.hpp"
#include "encoders/tokenizers/dreamzero_prompt.hpp"
#include "encoders/tokenizers/umt5_tokenizer.hpp"
#include "encoders/umt5/umt5_encoder.hpp"
#include "encoders/wan_vae/wan_vae_encoder.hpp"
#include "features_driver.hpp"
#include "generated/git_commit.hpp"
#include "kernels/make_ops.hpp"
#include "progress.hpp"
#include "view_tiling.hpp"

namespace emb {

namespace {

// The three encoders and the tokenizer, loaded once per rank (every file is checked first:
// a missing or misshaped tensor is one line naming the file and the tensor).
struct Encoders {
  encoders::DreamZeroEncoderFiles files;
  tokenizers::Umt5Tokenizer tokenizer;
  std::unique_ptr<Ops> ops;
  std::unique_ptr<encoders::WanVaeEncoder> vae;
  std::unique_ptr<encoders::Umt5Encoder> t5;
  std::unique_ptr<encoders::ClipVisionEncoder> clip;

  Encoders(const DreamZeroFeaturesOptions& o, const World& world)
      : files(encoders::dreamzero_encoder_files(o.checkpoint, o.files)), tokenizer(files.tokenizer) {
    const bool cuda = o.device == "cuda";
    ops = make_ops(BackendConfig{cuda ? Device::cuda : Device::cpu}, world.local_rank);
    const DType storage = cuda ? DType::bf16 : DType::f32;  // DreamZero runs all three in bf16
    vae = std::make_unique<encoders::WanVaeEncoder>(*ops, WeightSource(files.vae), storage);
    t5 = std::make_unique<encoders::Umt5Encoder>(*ops, WeightSource(files.t5), storage);
    clip = std::make_unique<encoders::ClipVisionEncoder>(*ops, WeightSource(files.clip), storage);
  }
  std::string dims() const {
    const encoders::VaeDims& v = vae->dims();
    return str(v.name(), " dim ", v.dim, " z ", v.z, "; umT5 d ", t5->dims().dim, " x ", t5->dims().layers,
               "; CLIP ", clip->dims().tokens(), " x ", clip->dims().dim, " x ", clip->dims().layers);
  }
};

// Per task, the umT5 rows of its DreamZero prompt (real rows only).
VarlenFeatures text_features(Encoders& enc, const PackedData& p, const DreamZeroFeaturesOptions& o, int views) {
  const tokenizers::DreamZeroRobot robot = tokenizers::dreamzero_robot_from_name(o.robot);
  VarlenFeatures txt;
  txt.dim = enc.t5->dims().dim;
  for (const std::string& text : p.task_text) {
    const tokenizers::Umt5Tokens tokens =
        enc.tokenizer.encode(tokenizers::dreamzero_prompt(robot, text, views), enc.t5->dims().text_len);
    const std::vector<int32_t> ids(tokens.ids.begin(), tokens.ids.begin() + tokens.length);
    for (float x : enc.t5->encode({ids})) txt.values.push_back(float_to_half(x));
    txt.offsets.push_back(txt.offsets.back() + tokens.length);
  }
  return txt;
}

// What produced the features, on each of the three arrays (the loader checks the digest).
std::map<std::string, std::string> provenance(const DreamZeroFeaturesOptions& o, const Encoders& enc,
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
void tile_clip(const PackedData& p, const std::vector<size_t>& views, const ViewTiler& tiler,
               const DreamZeroFeaturesOptions& o, int64_t s, int64_t episode_end, int64_t frame_values, float* clip) {
  const int64_t frame_bytes = p.videos[views[0]].height * p.videos[views[0]].width * 3;
  std::vector<const uint8_t*> frames(views.size());
  for (int k = 0; k < o.frames; ++k) {
    const int64_t step = clip_frame_step(s, k, o.frame_stride, episode_end);
    for (size_t v = 0; v < views.size(); ++v) frames[v] = p.videos[views[v]].frames.data() + step * frame_bytes;
    tiler.tile(frames, clip + k * frame_values);
  }
}

PackedData compute_share(const DreamZeroFeaturesOptions& o, const World& world, DreamZeroFeaturesReport& report) {
  const auto start = std::chrono::steady_clock::now();
  EMB_CHECK(o.frame_stride > 0 && o.chunk_frames >= 0, "features: --frame-stride must be positive, --vae-chunk >= 0");
  PackedData p = std::move(read_episode_share(o.input, world).data);
  const std::vector<size_t> views = view_order(p, o.views, o.input);
  const ViewTiling tiling = parse_view_tiling(o.tiling, o.tile);
  const ViewTiler tiler(tiling, int(views.size()), p.videos[views[0]].height, p.videos[views[0]].width);
  Encoders enc(o, world);
  const int H = tiling.height(), W = tiling.width();
  enc.vae->check_clip(o.frames, H, W, str("--frames ", o.frames, " of the ", o.tiling, " tiling of ", o.tile, " tiles"));
  report.digest = encoders::dreamzero_encoders_digest(enc.files);
  report.dims = enc.dims();
  report.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const int F = enc.vae->latent_frames(o.frames), z = enc.vae->dims().z, f = enc.vae->dims().spatial_factor();
  LatentView lat{"dreamzero", H / f, W / f, 2 * z + 4, 1, {}, {0}, {}};
  VarlenFeatures clip;
  clip.dim = enc.clip->dims().dim;
  const int64_t frame_values = int64_t(H) * W * 3, positions = int64_t(F) * lat.height * lat.width;
  std::vector<float> video(size_t(o.frames * frame_values));
  Progress progress(str("features --dreamzero (rank ", world.rank, " of ", world.size, ")"), p.steps(), o.progress,
                    world.rank == 0);
  for (int64_t e = 0; e < p.episodes(); ++e) {
    for (int64_t s = p.episode_offsets[size_t(e)]; s < p.episode_offsets[size_t(e) + 1]; ++s) {
      tile_clip(p, views, tiler, o, s, p.episode_offsets[size_t(e) + 1], frame_values, video.data());
      const std::vector<float> latents = enc.vae->encode(video.data(), o.frames, H, W, o.chunk_frames);
      const std::vector<float> y = enc.vae->i2v_condition(video.data(), o.frames, H, W, o.chunk_frames);
      for (int64_t i = 0; i < positions; ++i) {  // [latents | mask | image latents] per position
        for (int c = 0; c < z; ++c) lat.values.push_back(float_to_half(latents[size_t(i * z + c)]));
        for (int c = 0; c < z + 4; ++c) lat.values.push_back(float_to_half(y[size_t(i * (z + 4) + c)]));
      }
      for (float x : enc.clip->features(video.data(), 1, H, W)) clip.values.push_back(float_to_half(x));
      clip.offsets.push_back(clip.offsets.back() + enc.clip->dims().tokens());
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
  txt.dim = enc.t5->dims().dim;
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
