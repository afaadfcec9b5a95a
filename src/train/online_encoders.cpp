#include "train/online_encoders.hpp"

#include <algorithm>
#include <functional>
#include <numeric>

#include "core/error.hpp"
#include "data/dreamzero_alignment.hpp"
#include "data/packer.hpp"

namespace emb {
namespace {

// The VAE's causal chunks after frame 0: upstream's 4 (embpack's --vae-chunk default).
constexpr int kChunkFrames = 4;

[[noreturn]] void encoders_error(const RunConfig& cfg, const std::string& key, const std::string& message) {
  throw Error(str(cfg.origins.where(key), ": ", key, ": ", message), kExitInput);
}

encoders::ViewTiling online_tiling(const RunConfig& cfg) {
  return encoders::parse_view_tiling(cfg.data.view_tiling, cfg.data.view_tile, "data.view_tiling", "data.view_tile");
}

// `what` of the encoders (file) disagrees with the DiT's `key`.
void check_dim(const RunConfig& cfg, const std::string& file, const std::string& what, int64_t have,
               const std::string& key, int64_t want) {
  if (have != want)
    throw Error(str(file, ": ", what, " ", have, " disagrees with the DiT's ", key, " = ", want,
                    " (model.encoders_dir ", cfg.model.encoders_dir, ")"),
                kExitInput);
}

}  // namespace

encoders::DreamZeroEncoderFiles online_encoder_files(const RunConfig& cfg) {
  const ModelConfig& mc = cfg.model;
  if (mc.encoders_dir.empty())
    encoders_error(cfg, "model.encoders_dir", "empty, but model.encoders = online needs the folder of DreamZero's "
                   "released encoders (Wan VAE, umT5, CLIP, spiece.model)");
  encoders::DreamZeroEncoderFiles files;
  try {
    files = encoders::dreamzero_encoder_files(mc.encoders_dir);
  } catch (const Error& e) {
    encoders_error(cfg, "model.encoders_dir", e.what());
  }
  const encoders::VaeDims vae = encoders::read_vae_dims(WeightSource(files.vae));
  check_dim(cfg, files.vae, "the VAE's latent channels", vae.z, "model.latent_channels", mc.latent_channels);
  check_dim(cfg, files.vae, "the VAE's I2V channels (4 + latent channels)", vae.z + 4, "model.cond_channels",
            mc.cond_channels);
  const encoders::ViewTiling tiling = online_tiling(cfg);
  const int f = vae.spatial_factor();
  if (tiling.height() % f || tiling.width() % f || tiling.height() / f != mc.latent_height ||
      tiling.width() / f != mc.latent_width)
    encoders_error(cfg, "data.view_tile",
                   str(cfg.data.view_tiling, " tiles of ", cfg.data.view_tile, " make ", tiling.height(), "x",
                       tiling.width(), " pictures; the VAE (stride ", f, ") needs ", mc.latent_height * f, "x",
                       mc.latent_width * f, " for model.latent_height x latent_width = ", mc.latent_height, "x",
                       mc.latent_width));
  check_dim(cfg, files.t5, "umT5's width", encoders::read_umt5_dims(WeightSource(files.t5)).dim, "model.d_ctx", mc.d_ctx);
  const encoders::ClipDims clip = encoders::read_clip_dims(WeightSource(files.clip));
  check_dim(cfg, files.clip, "CLIP's feature rows", clip.tokens(), "model.clip_tokens", mc.clip_tokens);
  check_dim(cfg, files.clip, "CLIP's feature width", clip.dim, "model.d_clip", mc.d_clip);
  return files;
}

int64_t online_encoders_weight_bytes(const RunConfig& cfg, DType storage) {
  const encoders::DreamZeroEncoderFiles files = online_encoder_files(cfg);
  int64_t values = 0;
  for (const auto& shapes : {encoders::vae_tensor_shapes(encoders::read_vae_dims(WeightSource(files.vae))),
                             encoders::umt5_tensor_shapes(encoders::read_umt5_dims(WeightSource(files.t5))),
                             encoders::clip_tensor_shapes(encoders::read_clip_dims(WeightSource(files.clip)))})
    for (const auto& [name, shape] : shapes) values += std::accumulate(shape.begin(), shape.end(), int64_t(1), std::multiplies<>());
  return values * int64_t(dtype_size(storage));
}

VlPrompt online_encoders_prompt(const RunConfig& cfg) {
  const tokenizers::DreamZeroRobot robot = tokenizers::dreamzero_robot_from_name(cfg.data.prompt_robot);
  auto tokenizer = std::make_shared<const tokenizers::Umt5Tokenizer>(online_encoder_files(cfg).tokenizer);
  const encoders::ViewTiling tiling = online_tiling(cfg);
  const std::string where = cfg.origins.where("data.view_tiling");
  return [tokenizer, robot, tiling, where](const std::string& task_text, int views) {
    if (views > tiling.rows * tiling.cols)
      throw Error(str(where, ": data.view_tiling ", tiling.rows, "x", tiling.cols, ": the files' ", views,
                      " /video views do not fit in its ", tiling.rows * tiling.cols, " tiles"),
                  kExitInput);
    return encoders::dreamzero_prompt_ids(*tokenizer, robot, task_text, views);
  };
}

OnlineEncoders::OnlineEncoders(Ops& ops, const RunConfig& cfg, DType storage)
    : tokens_(cfg.model), encoders_(ops, online_encoder_files(cfg), storage), tiling_(online_tiling(cfg)) {}

void OnlineEncoders::compute(PackedBatch& b) {
  const int V = b.views, T = clip_raw_frames(tokens_.latent_frames), H = tiling_.height(), W = tiling_.width();
  const int64_t frame_bytes = int64_t(b.frame_height) * b.frame_width * 3;
  EMB_ASSERT(int64_t(b.frames.size()) == b.n_samples * T * V * frame_bytes && int64_t(b.prompt.size()) == b.n_context);
  const encoders::ViewTiler tiler(tiling_, V, b.frame_height, b.frame_width);
  std::vector<float> video(size_t(T) * H * W * 3);
  b.video_x0.clear(), b.video_cond.clear(), b.clip.clear();
  for (int32_t s = 0; s < b.n_samples; ++s) {
    const uint8_t* clip_frames = b.frames.data() + s * T * V * frame_bytes;
    tiler.tile_clip([&](int k, int v) { return clip_frames + (k * V + v) * frame_bytes; }, T, video.data());
    const encoders::DreamZeroClipFeatures made = encoders_.encode_clip(video.data(), T, H, W, kChunkFrames);
    append_video_rows(made.latents.data(), tokens_.latent_channels + tokens_.cond_channels, tokens_, b);
    b.clip.insert(b.clip.end(), made.clip.begin(), made.clip.end());
  }
  // Each sample's prompt ids are its real context rows; its umT5 rows go there, the rest stay 0.
  const int d = tokens_.d_ctx;
  b.context.assign(size_t(b.n_context * d), 0.f);
  for (int32_t s = 0; s < b.n_samples; ++s) {
    std::vector<int32_t> ids, rows;
    for (int64_t t = 0; t < b.n_context; ++t)
      if (b.cseq[size_t(t)] == s && b.prompt[size_t(t)] >= 0) ids.push_back(b.prompt[size_t(t)]), rows.push_back(int32_t(t));
    const std::vector<float> text = encoders_.text_rows(ids);
    for (size_t i = 0; i < rows.size(); ++i) std::copy_n(text.data() + i * d, d, b.context.data() + rows[i] * d);
  }
}

}  // namespace emb
