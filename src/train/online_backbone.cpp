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
  const int64_t V = b.views, H = b.frame_height, W = b.frame_width, frame_bytes = H * W * 3;
  const int64_t patch_values = d.tokens_per_image() * d.patch_features();
  EMB_ASSERT(int64_t(b.prompt.size()) == b.n_context && int64_t(b.frames.size()) == b.n_samples * V * frame_bytes);
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
  in.patch_rows.resize(size_t(b.n_samples * V * patch_values));
  for (int32_t s = 0; s < b.n_samples; ++s) {
    in.samples[size_t(s)].views = int(V);
    const encoders::FrameAugmentation drawn =
        encoders::draw_augmentation(H, W, seed, uint64_t(b.sample_id[size_t(s)]), uint64_t(step));
    const std::vector<uint8_t> u8 =
        encoders::gr00t_frames(b.frames.data() + s * V * frame_bytes, V, H, W, d.image_size, augment ? &drawn : nullptr,
                               str("model.backbone = online: sample ", b.sample_id[size_t(s)]));
    encoders::eagle_patch_rows(u8.data(), V, d.image_size, d.patch, in.patch_rows.data() + s * V * patch_values);
  }
  return in;
}

OnlineBackbone::OnlineBackbone(Ops& ops, const ModelConfig& mc, DType storage, uint64_t seed)
    : ops_(ops),
      backbone_(ops, online_backbone_dims(mc), WeightSource(mc.backbone_dir), storage),
      seed_(seed),
      contexts_(ops, mc.d_ctx) {}

void OnlineBackbone::compute_context(PackedBatch& b, int slot, int64_t step, bool augment) {
  const OnlineInputs in = online_inputs(b, backbone_.dims(), seed_, step, augment);
  const View context = contexts_.rows(slot, b.n_context);
  encoders::BackendTensors scratch(ops_, backbone_.storage());
  View vl = backbone_.features_in_backend(in.samples, in.patch_rows.data(), scratch);
  encoders::BackendTensors widened(ops_, DType::f32);  // bf16 storage: the head reads fp32
  if (vl.dtype != DType::f32) {
    const View vl32 = widened.make(vl.rows, vl.cols);
    ops_.convert(vl, vl32);
    vl = vl32;
  }
  ops_.zero(context);
  const encoders::BackendIndex to_rows(ops_, in.context_rows);
  ops_.copy_rows(vl, RowIndex{}, context, to_rows.rows());
  b.context.clear();
  b.backend_context = context.f32();
}

}  // namespace emb
