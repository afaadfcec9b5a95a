#include "train/tuned_backbone.hpp"

#include "core/error.hpp"
#include "train/online_backbone.hpp"

namespace emb {
namespace {

bool decayed(const std::string& name) {
  const bool bias = name.size() >= 5 && name.compare(name.size() - 5, 5, ".bias") == 0;
  return !bias && name.find("layer_norm") == std::string::npos && name.find("post_layernorm") == std::string::npos;
}

// The ZeRO-3 unit of a vision tower piece (encoders::VisionTensorSlot::piece).
std::string piece_unit(int piece, const encoders::EagleDims& d) {
  if (piece == 0) return "vision.embeddings";
  return piece <= d.vision_layers ? str("vision.layers.", piece - 1) : "vision.head";
}

}  // namespace

std::vector<TrainedContextTensor> tuned_backbone_tensors(const ModelConfig& mc) {
  const encoders::EagleDims d = online_backbone_dims(mc);
  std::vector<TrainedContextTensor> out;
  for (const encoders::VisionTensorSlot& s : encoders::vision_tower_layout(d))
    out.push_back({s.name, s.rows, s.cols, decayed(s.name), piece_unit(s.piece, d)});
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
// image tokens of the trained SigLIP + mlp1 (`vision_tower` of the uploaded patch rows) scattered
// into their rows, the frozen Qwen3 layers.
View TunedBackbone::vl_rows(const std::vector<encoders::EagleSample>& samples, const float* patch_rows,
                            const VisionTowerForward& vision_tower) {
  const encoders::EagleTokenLayout tokens_of = encoders::eagle_token_layout(samples, dims_);
  const int64_t T = dims_.tokens_per_image();
  n_tokens_ = tokens_of.offsets.back();
  inputs_ = std::make_unique<encoders::BackendTensors>(ops_, DType::f32);
  const View embeds = inputs_->make(n_tokens_, dims_.llm_hidden);
  const encoders::BackendIndex id_rows(ops_, tokens_of.ids);
  ops_.copy_rows(language_.embed, id_rows.rows(), embeds, RowIndex{});
  const View patches = inputs_->upload(patch_rows, tokens_of.n_images * T, dims_.patch_features());
  const View tokens = vision_tower(patches, tokens_of.n_images);
  image_rows_ = std::make_unique<encoders::BackendIndex>(ops_, tokens_of.image_rows);
  ops_.copy_rows(tokens, RowIndex{}, embeds, image_rows_->rows());
  return llm_.forward(language_, embeds, tokens_of.offsets);
}

View TunedBackbone::vl_rows(const float* params, const std::vector<encoders::EagleSample>& samples,
                            const float* patch_rows) {
  const encoders::VisionTowerTensors p = encoders::vision_tower_views(params, dims_);
  return vl_rows(samples, patch_rows,
                 [&](const View& patches, int64_t n_images) { return vision_.forward(p, patches, n_images); });
}

// vl_rows of the micro-batch's samples with the vision tower a unit per piece, each entered just
// before it runs; the rows into the context (padding rows 0).
void TunedBackbone::forward(ParamAccess& P, const ContextParams& at, const PackedBatch& b, int64_t step) {
  EMB_CHECK(b.backend_context != nullptr, "train.tune_visual: micro-batch without bound context rows");
  const OnlineInputs in = online_inputs(b, dims_, seed_, step, augment_);
  const encoders::LayoutTensor param = [&](int i) { return P.pv(at.first_tensor + i); };
  const int L = dims_.vision_layers;
  const View vl = vl_rows(in.samples, in.patch_rows.data(), [&](const View& patches, int64_t n_images) {
    vision_.begin(patches, n_images);
    P.enter_forward(at.first_unit);
    vision_.embed(encoders::vision_embedding_views(param));
    for (int l = 0; l < L; ++l) {
      P.enter_forward(at.first_unit + 1 + l);
      vision_.layer_forward(l, encoders::vision_layer_views(l, param));
    }
    P.enter_forward(at.first_unit + L + 1);
    return vision_.finish(encoders::vision_head_views(dims_, param));
  });
  const View context = view(b.backend_context, b.n_context, dims_.llm_hidden);
  ops_.zero(context);
  context_rows_ = std::make_unique<encoders::BackendIndex>(ops_, in.context_rows);
  ops_.copy_rows(vl, RowIndex{}, context, context_rows_->rows());
}

// The forward in reverse: the context rows' gradient to vl's rows, through the Qwen3 layers to
// the embeddings, whose image rows are the image tokens' gradient; then the vision tower's
// pieces from the head to the embeddings, each unit's gradients complete when it is left.
void TunedBackbone::backward(ParamAccess& P, const ContextParams& at, const View& dcontext) {
  EMB_ASSERT(inputs_);
  encoders::BackendTensors scratch(ops_, DType::f32);
  const View dvl = scratch.make(n_tokens_, dims_.llm_hidden), dembeds = scratch.make(n_tokens_, dims_.llm_hidden);
  const View dtokens = scratch.make(int64_t(image_rows_->rows().n), dims_.llm_hidden);
  ops_.copy_rows(dcontext, context_rows_->rows(), dvl, RowIndex{});
  ops_.zero(dembeds);
  llm_.backward(language_, dvl, dembeds);
  ops_.copy_rows(dembeds, image_rows_->rows(), dtokens, RowIndex{});
  const encoders::LayoutTensor param = [&](int i) { return P.pv(at.first_tensor + i); };
  const encoders::LayoutTensor grad = [&](int i) { return P.gv(at.first_tensor + i); };
  const int L = dims_.vision_layers;
  P.enter_backward(at.first_unit + L + 1);
  vision_.head_backward(encoders::vision_head_views(dims_, param), dtokens, encoders::vision_head_views(dims_, grad));
  P.leave_backward(at.first_unit + L + 1);
  for (int l = L; l-- > 0;) {
    P.enter_backward(at.first_unit + 1 + l);
    vision_.layer_backward(l, encoders::vision_layer_views(l, param), encoders::vision_layer_views(l, grad));
    P.leave_backward(at.first_unit + 1 + l);
  }
  P.enter_backward(at.first_unit);
  vision_.embed_backward(encoders::vision_embedding_views(param), encoders::vision_embedding_views(grad));
  P.leave_backward(at.first_unit);
}

}  // namespace emb
