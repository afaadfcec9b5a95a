// DreamZero's three frozen encoders (Wan VAE, umT5-XXL, CLIP ViT-H/14) and umT5's tokenizer,
// loaded once from the released folder (encoder_folder.hpp) onto one Ops backend, and what they
// compute for the DiT: per clip the latents with the I2V conditioning y and the CLIP features of
// its first frame, per task the umT5 rows of DreamZero's prompt. `embpack features --dreamzero`
// stores these and the step computes them with model.encoders = online (train/online_encoders.hpp):
// one implementation for both, so the two runs see the same values (up to the file's float16).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "encoders/clip/clip_encoder.hpp"
#include "encoders/dreamzero/encoder_folder.hpp"
#include "encoders/tokenizers/dreamzero_prompt.hpp"
#include "encoders/tokenizers/umt5_tokenizer.hpp"
#include "encoders/umt5/umt5_encoder.hpp"
#include "encoders/wan_vae/wan_vae_encoder.hpp"

namespace emb::encoders {

// The features of one clip [T, H, W, 3] (values in [−1, 1]).
struct DreamZeroClipFeatures {
  // [F, h, w, 2z + 4]: per latent position upstream's channel order [latents z | mask 4 | image
  // latents z] (the DiT's input x, then y).
  std::vector<float> latents;
  std::vector<float> clip;  // [tokens, d_clip]: CLIP features of the clip's first frame
};

// The umT5 ids (real ids and </s>, no padding) of DreamZero's prompt for a task shown by `views`
// camera views: the robot's template, Wan's cleaning, truncated as umT5's tokenizer does.
std::vector<int32_t> dreamzero_prompt_ids(const tokenizers::Umt5Tokenizer& tokenizer, tokenizers::DreamZeroRobot robot,
                                          const std::string& task, int views);

class DreamZeroEncoders {
 public:
  // storage: the backend's dtype of the weights and activations (bf16 on CUDA as DreamZero runs
  // them; fp32 on the CPU). Every file is checked first: a missing or misshaped tensor, a
  // tokenizer that does not load, is one line naming the file (emb::Error, exit 2).
  DreamZeroEncoders(Ops& ops, const DreamZeroEncoderFiles& files, DType storage);

  const DreamZeroEncoderFiles& files() const { return files_; }
  const tokenizers::Umt5Tokenizer& tokenizer() const { return tokenizer_; }
  const VaeDims& vae_dims() const { return vae_->dims(); }
  const Umt5Dims& t5_dims() const { return t5_->dims(); }
  const ClipDims& clip_dims() const { return clip_->dims(); }
  // "Wan2.1 VAE dim 96 z 16; umT5 d 4096 x 24; CLIP 257 x 1280 x 32": what the features record.
  std::string dims() const;
  int64_t weight_bytes() const;  // the three encoders' weights in the backend's memory

  // One line (emb::Error, exit 2) unless the VAE takes clips of T frames of H × W; `what` names them.
  void check_clip(int T, int H, int W, const std::string& what) const { vae_->check_clip(T, H, W, what); }
  int latent_frames(int T) const { return vae_->latent_frames(T); }

  // video [T, H, W, 3] host fp32: the VAE in causal chunks of chunk_frames after frame 0
  // (0 = one pass), the I2V y of its first frame, CLIP of its first frame.
  DreamZeroClipFeatures encode_clip(const float* video, int T, int H, int W, int chunk_frames);
  // The umT5 rows [ids, d] of one text's ids (dreamzero_prompt_ids).
  std::vector<float> text_rows(const std::vector<int32_t>& ids);

 private:
  DreamZeroEncoderFiles files_;
  tokenizers::Umt5Tokenizer tokenizer_;
  std::unique_ptr<WanVaeEncoder> vae_;
  std::unique_ptr<Umt5Encoder> t5_;
  std::unique_ptr<ClipVisionEncoder> clip_;
};

}  // namespace emb::encoders
