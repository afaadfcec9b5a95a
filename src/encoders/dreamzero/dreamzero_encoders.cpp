#include "encoders/dreamzero/dreamzero_encoders.hpp"

#include "core/error.hpp"

namespace emb::encoders {

std::vector<int32_t> dreamzero_prompt_ids(const tokenizers::Umt5Tokenizer& tokenizer, tokenizers::DreamZeroRobot robot,
                                          const std::string& task, int views) {
  const tokenizers::Umt5Tokens tokens = tokenizer.encode(tokenizers::dreamzero_prompt(robot, task, views), Umt5Dims{}.text_len);
  return std::vector<int32_t>(tokens.ids.begin(), tokens.ids.begin() + tokens.length);
}

DreamZeroEncoders::DreamZeroEncoders(Ops& ops, const DreamZeroEncoderFiles& files, DType storage)
    : files_(files),
      tokenizer_(files.tokenizer),
      vae_(std::make_unique<WanVaeEncoder>(ops, WeightSource(files.vae), storage)),
      t5_(std::make_unique<Umt5Encoder>(ops, WeightSource(files.t5), storage)),
      clip_(std::make_unique<ClipVisionEncoder>(ops, WeightSource(files.clip), storage)) {}

std::string DreamZeroEncoders::dims() const {
  const VaeDims& v = vae_->dims();
  return str(v.name(), " dim ", v.dim, " z ", v.z, "; umT5 d ", t5_->dims().dim, " x ", t5_->dims().layers, "; CLIP ",
             clip_->dims().tokens(), " x ", clip_->dims().dim, " x ", clip_->dims().layers);
}

int64_t DreamZeroEncoders::weight_bytes() const {
  return vae_->weight_bytes() + t5_->weight_bytes() + clip_->weight_bytes();
}

DreamZeroClipFeatures DreamZeroEncoders::encode_clip(const float* video, int T, int H, int W, int chunk_frames) {
  const std::vector<float> latents = vae_->encode(video, T, H, W, chunk_frames);
  const std::vector<float> y = vae_->i2v_condition(video, T, H, W, chunk_frames);
  const int z = vae_->dims().z;
  const size_t positions = latents.size() / size_t(z);
  DreamZeroClipFeatures out;
  out.latents.reserve(positions * size_t(2 * z + 4));
  for (size_t i = 0; i < positions; ++i) {  // [latents | mask | image latents] per position
    out.latents.insert(out.latents.end(), latents.begin() + i * z, latents.begin() + (i + 1) * z);
    out.latents.insert(out.latents.end(), y.begin() + i * (z + 4), y.begin() + (i + 1) * (z + 4));
  }
  out.clip = clip_->features(video, 1, H, W);
  return out;
}

std::vector<float> DreamZeroEncoders::text_rows(const std::vector<int32_t>& ids) { return t5_->encode({ids}); }

}  // namespace emb::encoders
