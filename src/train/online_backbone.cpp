#include "train/online_backbone.hpp"

#include <algorithm>
#include <memory>

#include "core/error.hpp"
#include "encoders/eagle/frame_transform.hpp"
#include "encoders/tokenizers/eagle_prompt.hpp"

namespace emb {

std::string online_eagle_folder(const ModelConfig& mc) { return mc.backbone_dir + "/eagle2_hg_model"; }

encoders::EagleDims online_backbone_dims(const ModelConfig& mc) {
  const encoders::EagleDims d = encoders::read_eagle_dims(online_eagle_folder(mc), mc.backbone_dir);
  if (d.llm_hidden != mc.d_ctx)
    throw Error(str(online_eagle_folder(mc), "/config.json: text_config.hidden_size ", d.llm_hidden,
                    " (the backbone's width) disagrees with the head's backbone_embedding_dim model.d_ctx = ", mc.d_ctx),
                kExitInput);
  return d;
}

VlPrompt online_prompt(const ModelConfig& mc) {
  const int tokens_per_image = online_backbone_dims(mc).tokens_per_image();
  auto tokenizer = std::make_shared<const tokenizers::Qwen2Tokenizer>(online_eagle_folder(mc));
  return [tokenizer, tokens_per_image](const std::string& task_text, int views) {
    return tokenizers::gr00t_prompt(*tokenizer, views, task_text, tokens_per_image).ids;
  };
}

OnlineBackbone::OnlineBackbone(Ops& ops, const ModelConfig& mc, DType storage, uint64_t seed)
    : backbone_(ops, online_backbone_dims(mc), WeightSource(mc.backbone_dir), storage), seed_(seed) {}

void OnlineBackbone::compute_context(PackedBatch& b, int64_t step, bool augment) {
  const encoders::EagleDims& d = backbone_.dims();
  const int64_t V = b.views, H = b.frame_height, W = b.frame_width, frame_bytes = H * W * 3;
  const int64_t patch_values = d.tokens_per_image() * d.patch_features();
  EMB_ASSERT(int64_t(b.prompt.size()) == b.n_context && int64_t(b.frames.size()) == b.n_samples * V * frame_bytes);
  // A sample's context rows lie together, in prompt order (data/packer.cpp).
  std::vector<encoders::EagleSample> samples(size_t(b.n_samples));
  std::vector<int64_t> first_row(size_t(b.n_samples), 0);
  for (int64_t t = 0; t < b.n_context; ++t) {
    const int32_t slot = b.cseq[size_t(t)];
    if (slot < 0) continue;
    if (samples[size_t(slot)].ids.empty()) first_row[size_t(slot)] = t;
    samples[size_t(slot)].ids.push_back(b.prompt[size_t(t)]);
  }
  std::vector<float> rows(size_t(b.n_samples * V * patch_values));
  for (int32_t s = 0; s < b.n_samples; ++s) {
    samples[size_t(s)].views = int(V);
    const encoders::FrameAugmentation drawn =
        encoders::draw_augmentation(H, W, seed_, uint64_t(b.sample_id[size_t(s)]), uint64_t(step));
    const std::vector<uint8_t> u8 =
        encoders::gr00t_frames(b.frames.data() + s * V * frame_bytes, V, H, W, d.image_size, augment ? &drawn : nullptr,
                               str("model.backbone = online: sample ", b.sample_id[size_t(s)]));
    encoders::eagle_patch_rows(u8.data(), V, d.image_size, d.patch, rows.data() + s * V * patch_values);
  }
  const std::vector<float> vl = backbone_.features(samples, rows.data());
  const int64_t E = d.llm_hidden;
  b.context.assign(size_t(b.n_context * E), 0.f);
  int64_t at = 0;  // vl holds sample after sample
  for (int32_t s = 0; s < b.n_samples; ++s) {
    const int64_t n = int64_t(samples[size_t(s)].ids.size());
    std::copy_n(vl.data() + at * E, n * E, b.context.data() + first_row[size_t(s)] * E);
    at += n;
  }
}

}  // namespace emb
