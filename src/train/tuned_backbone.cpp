#include "train/tuned_backbone.hpp"

#include "core/error.hpp"
#include "train/online_backbone.hpp"

namespace emb {
namespace {

bool decayed(const std::string& name) {
  const bool bias = name.size() >= 5 && name.compare(name.size() - 5, 5, ".bias") == 0;
  return !bias && name.find("layer_norm") == std::string::npos && name.find("post_layernorm") == std::string::npos;
}

}  // namespace

std::vector<TrainedContextTensor> tuned_backbone_tensors(const ModelConfig& mc) {
  std::vector<TrainedContextTensor> out;
  for (const encoders::VisionTensorSlot& s : encoders::vision_tower_layout(online_backbone_dims(mc)))
    out.push_back({s.name, s.rows, s.cols, decayed(s.name)});
  return out;
}

ModelConfig with_tuned_backbone(const ModelConfig& mc) {
  ModelConfig out = mc;
  if (mc.tune_visual) out.trained_context = tuned_backbone_tensors(mc);
  return out;
}

std::vector<float> tuned_backbone_values(const ModelConfig& mc) {
  return encoders::read_vision_tower(WeightSource(mc.backbone_dir), online_backbone_dims(mc));
}

TunedBackbone::TunedBackbone(Ops& ops, const ModelConfig& mc, uint64_t seed)
    : ops_(ops),
      dims_(online_backbone_dims(mc)),
      seed_(seed),
      augment_(mc.backbone_augment),
      weights_store_(std::make_unique<encoders::BackendTensors>(ops, DType::f32)),
      language_(encoders::load_eagle_language_model(WeightSource(mc.backbone_dir), dims_, *weights_store_)),
      vision_(ops, dims_),
      llm_(ops, dims_),
      contexts_(ops, mc.d_ctx) {}

void TunedBackbone::bind_context(PackedBatch& b, int slot) {
  b.context.clear();
  b.backend_context = contexts_.rows(slot, b.n_context).f32();
}

// The forward of EagleBackbone::features_in_backend on the trained path: embedding gather, the
// image tokens of the trained SigLIP + mlp1 scattered into their rows, the frozen Qwen3 layers.
View TunedBackbone::vl_rows(const float* params, const std::vector<encoders::EagleSample>& samples,
                            const float* patch_rows) {
  const encoders::EagleTokenLayout tokens_of = encoders::eagle_token_layout(samples, dims_);
  const int64_t T = dims_.tokens_per_image();
  n_tokens_ = tokens_of.offsets.back();
  inputs_ = std::make_unique<encoders::BackendTensors>(ops_, DType::f32);
  const View embeds = inputs_->make(n_tokens_, dims_.llm_hidden);
  const encoders::BackendIndex id_rows(ops_, tokens_of.ids);
  ops_.copy_rows(language_.embed, id_rows.rows(), embeds, RowIndex{});
  const View patches = inputs_->upload(patch_rows, tokens_of.n_images * T, dims_.patch_features());
  const encoders::VisionTowerTensors p = encoders::vision_tower_views(params, dims_);
  const View tokens = vision_.forward(p, patches, tokens_of.n_images);
  image_rows_ = std::make_unique<encoders::BackendIndex>(ops_, tokens_of.image_rows);
  ops_.copy_rows(tokens, RowIndex{}, embeds, image_rows_->rows());
  return llm_.forward(language_, embeds, tokens_of.offsets);
}

// vl_rows of the micro-batch's samples, their rows into the context (padding rows 0).
void TunedBackbone::forward(const float* params, const PackedBatch& b, int64_t step) {
  EMB_CHECK(b.backend_context != nullptr, "train.tune_visual: micro-batch without bound context rows");
  const OnlineInputs in = online_inputs(b, dims_, seed_, step, augment_);
  const View vl = vl_rows(params, in.samples, in.patch_rows.data());
  const View context = view(b.backend_context, b.n_context, dims_.llm_hidden);
  ops_.zero(context);
  context_rows_ = std::make_unique<encoders::BackendIndex>(ops_, in.context_rows);
  ops_.copy_rows(vl, RowIndex{}, context, context_rows_->rows());
}

// The forward in reverse: the context rows' gradient to vl's rows, through the Qwen3 layers to
// the embeddings, whose image rows are the image tokens' gradient.
void TunedBackbone::backward(const float* params, const View& dcontext, float* grads) {
  EMB_ASSERT(inputs_ && grads);
  encoders::BackendTensors scratch(ops_, DType::f32);
  const View dvl = scratch.make(n_tokens_, dims_.llm_hidden), dembeds = scratch.make(n_tokens_, dims_.llm_hidden);
  const View dtokens = scratch.make(int64_t(image_rows_->rows().n), dims_.llm_hidden);
  ops_.copy_rows(dcontext, context_rows_->rows(), dvl, RowIndex{});
  ops_.zero(dembeds);
  llm_.backward(language_, dvl, dembeds);
  ops_.copy_rows(dembeds, image_rows_->rows(), dtokens, RowIndex{});
  vision_.backward(encoders::vision_tower_views(params, dims_), dtokens,
                   encoders::vision_tower_views(grads, dims_));
}

}  // namespace emb
