#include "train/online_backbone.hpp"

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

OnlineInputs online_inputs(const PackedBatch& b, const encoders::EagleDims& d, uint64_t seed, int64_t step,
                           bool augment) {
  const int64_t frame_bytes = int64_t(b.frame_height) * b.frame_width * 3;
  const int64_t patch_values = d.tokens_per_image() * d.patch_features();
  EMB_ASSERT(int64_t(b.prompt.size()) == b.n_context && int64_t(b.frames.size()) == b.n_samples * b.views * frame_bytes);
  // Each sample's prompt is its context rows' ids in order; the backbone's rows, sample after
  // sample, go back to those rows.
  OnlineInputs in;
  in.samples.resize(size_t(b.n_samples));
  std::vector<std::vector<int32_t>> rows_of_sample(size_t(b.n_samples));
  for (int64_t t = 0; t < b.n_context; ++t) {
    const int32_t s = b.cseq[size_t(t)];
    if (s < 0) continue;
    in.samples[size_t(s)].ids.push_back(b.prompt[size_t(t)]);
    rows_of_sample[size_t(s)].push_back(int32_t(t));
  }
  for (const std::vector<int32_t>& r : rows_of_sample) in.context_rows.insert(in.context_rows.end(), r.begin(), r.end());
  for (encoders::EagleSample& s : in.samples) s.views = int(b.views);
  const std::vector<uint8_t> frames = online_frames(b, d, seed, step, augment);
  in.patch_rows.resize(size_t(int64_t(b.n_samples) * b.views * patch_values));
  encoders::eagle_patch_rows(frames.data(), b.n_samples * b.views, d.image_size, d.patch, in.patch_rows.data());
  return in;
}

std::vector<uint8_t> online_frames(const PackedBatch& b, const encoders::EagleDims& d, uint64_t seed, int64_t step,
                                   bool augment) {
  const int64_t V = b.views, H = b.frame_height, W = b.frame_width, frame_bytes = H * W * 3;
  const int64_t image_bytes = int64_t(d.image_size) * d.image_size * 3;
  std::vector<uint8_t> out(size_t(b.n_samples * V * image_bytes));
  for (int32_t s = 0; s < b.n_samples; ++s) {
    const encoders::FrameAugmentation drawn =
        encoders::draw_augmentation(H, W, seed, uint64_t(b.sample_id[size_t(s)]), uint64_t(step));
    const std::vector<uint8_t> u8 =
        encoders::gr00t_frames(b.frames.data() + s * V * frame_bytes, V, H, W, d.image_size, augment ? &drawn : nullptr,
                               str("model.backbone = online: sample ", b.sample_id[size_t(s)]));
    std::copy(u8.begin(), u8.end(), out.begin() + s * V * image_bytes);
  }
  return out;
}

OnlineBackbone::OnlineBackbone(Ops& ops, const ModelConfig& mc, DType storage, uint64_t seed)
    : ops_(ops),
      backbone_(ops, online_backbone_dims(mc), WeightSource(mc.backbone_dir), storage),
      seed_(seed),
      contexts_(ops, mc.d_ctx),
      scratch_(ops, DType::f32) {}

void OnlineBackbone::compute_context(PackedBatch& b, int slot, int64_t step, bool augment) {
  const OnlineInputs in = online_inputs(b, backbone_.dims(), seed_, step, augment);
  const View context = contexts_.rows(slot, b.n_context);
  scratch_.recycle();
  View vl = backbone_.features_in_backend(in.samples, in.patch_rows.data());
  if (vl.dtype != DType::f32) {  // bf16 storage: the head reads fp32
    const View vl32 = scratch_.make(vl.rows, vl.cols);
    ops_.convert(vl, vl32);
    vl = vl32;
  }
  ops_.zero(context);
  ops_.copy_rows(vl, RowIndex{}, context, scratch_.index(in.context_rows));
  b.context.clear();
  b.backend_context = context.f32();
}

}  // namespace emb
