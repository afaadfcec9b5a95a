#include "encoders/eagle/eagle_backbone.hpp"

#include "core/error.hpp"
#include "encoders/eagle/language_model.hpp"
#include "encoders/eagle/vision_tower.hpp"

namespace emb::encoders {

EagleBackbone::EagleBackbone(Ops& ops, const std::string& checkpoint, const std::string& eagle_folder, DType storage)
    : EagleBackbone(ops, read_eagle_dims(eagle_folder, checkpoint), WeightSource(checkpoint), storage) {}

EagleBackbone::EagleBackbone(Ops& ops, const EagleDims& dims, const WeightSource& source, DType storage)
    : ops_(ops), dims_(dims), weights_store_(std::make_unique<BackendTensors>(ops, storage)), scratch_(ops, storage) {
  weights_ = load_eagle_weights(source, dims_, *weights_store_);
}

std::vector<float> EagleBackbone::image_tokens(const float* patch_rows, int64_t n_images) {
  scratch_.recycle();
  const View rows = scratch_.upload(patch_rows, n_images * dims_.tokens_per_image(), dims_.patch_features());
  return download(ops_, vision_tower_forward(weights_, dims_, scratch_, rows, n_images));
}

std::vector<float> EagleBackbone::features(const std::vector<EagleSample>& samples, const float* patch_rows) {
  const View vl = features_in_backend(samples, patch_rows);
  return vl.absent() ? std::vector<float>{} : download(ops_, vl);
}

EagleTokenLayout eagle_token_layout(const std::vector<EagleSample>& samples, const EagleDims& d) {
  const int64_t T = d.tokens_per_image();
  EagleTokenLayout out;
  for (size_t s = 0; s < samples.size(); ++s) {
    const EagleSample& sample = samples[s];
    int64_t image_tokens = 0;
    for (size_t t = 0; t < sample.ids.size(); ++t) {
      const int32_t id = sample.ids[t];
      EMB_CHECK(id >= 0 && id < d.vocab, "eagle backbone: sample ", s, " token ", t, " has id ", id,
                " outside the vocabulary of ", d.vocab);
      if (id == d.image_token_index) out.image_rows.push_back(int32_t(out.offsets.back() + int64_t(t))), ++image_tokens;
    }
    EMB_CHECK(image_tokens == sample.views * T, "eagle backbone: sample ", s, " has ", image_tokens,
              " image tokens (id ", d.image_token_index, ") for ", sample.views, " views x ", T, " = ",
              sample.views * T, " image rows");
    out.ids.insert(out.ids.end(), sample.ids.begin(), sample.ids.end());
    out.offsets.push_back(int64_t(out.ids.size()));
    out.n_images += sample.views;
  }
  return out;
}

View EagleBackbone::features_in_backend(const std::vector<EagleSample>& samples, const float* patch_rows) {
  scratch_.recycle();
  const int64_t T = dims_.tokens_per_image();
  const EagleTokenLayout tokens_of = eagle_token_layout(samples, dims_);
  const int64_t N = tokens_of.offsets.back(), n_images = tokens_of.n_images;
  if (N == 0) return View{};
  const View embeds = scratch_.make(N, dims_.llm_hidden);
  ops_.copy_rows(weights_.embed, scratch_.index(tokens_of.ids), embeds, RowIndex{});
  if (n_images > 0) {
    const View rows = scratch_.upload(patch_rows, n_images * T, dims_.patch_features());
    const View tokens = vision_tower_forward(weights_, dims_, scratch_, rows, n_images);
    ops_.copy_rows(tokens, RowIndex{}, embeds, scratch_.index(tokens_of.image_rows));
  }
  return language_model_forward(weights_, dims_, scratch_, embeds, tokens_of.offsets);
}

}  // namespace emb::encoders
