// GR00T-N1.5's frozen Eagle 2.5 backbone in embtrain: from the prompt's token ids and the views'
// frames to the `vl` features the action head reads (UPSTREAM.md "GR00T-N1.5 backbone",
// spec_eagle.md), on any Ops backend. The weights come from the GR00T checkpoint folder the head
// is loaded from (`backbone.eagle_model.*`), the dimensions from the Eagle folder (Isaac-GR00T's
// eagle2_hg_model: config.json beside the Qwen tokenizer files) and the checkpoint's
// backbone_cfg.select_layer.
//
// A batch is any number of samples, each its prompt ids (tokenizers::gr00t_prompt: V views'
// <IMG_CONTEXT> runs in view order) and its V views' patch rows (frame_transform.hpp). All
// images go through SigLIP in one pass, all prompts through Qwen3 in one (segments), and every
// sample's features equal upstream's batch-1 inference of that sample.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "encoders/common/backend_tensors.hpp"
#include "encoders/common/scratch_pool.hpp"
#include "encoders/eagle/eagle_dims.hpp"
#include "encoders/eagle/eagle_weights.hpp"
#include "weights/weight_source.hpp"

namespace emb::encoders {

struct EagleSample {
  std::vector<int32_t> ids;  // the prompt, with views · tokens_per_image image tokens
  int views = 0;
};

// The token layout of a batch of samples: their ids one after the other, each sample's offset,
// and the rows of the image tokens in order (sample 0's views, then sample 1's, ...). Throws
// emb::Error naming the sample on ids outside the vocabulary or an image-token count other than
// V · T.
struct EagleTokenLayout {
  std::vector<int32_t> ids, image_rows;
  std::vector<int64_t> offsets = {0};  // [S + 1]
  int64_t n_images = 0;
};
EagleTokenLayout eagle_token_layout(const std::vector<EagleSample>& samples, const EagleDims& d);

class EagleBackbone {
 public:
  // storage: the backend's data dtype (fp32; bf16 on CUDA, as upstream deploys). Throws emb::Error
  // (exit 2) in one line naming the file, key or tensor at fault.
  EagleBackbone(Ops& ops, const std::string& checkpoint, const std::string& eagle_folder, DType storage);
  // From dimensions and a weight source already open (tests, the exporter).
  EagleBackbone(Ops& ops, const EagleDims& dims, const WeightSource& source, DType storage);

  const EagleDims& dims() const { return dims_; }
  DType storage() const { return weights_store_->dtype(); }
  // Bytes of backend memory the weights hold.
  int64_t weight_bytes() const { return weights_store_->bytes(); }

  // vl [Σ_s N_s, E] (host fp32, sample after sample) of `samples`, whose views' patch rows
  // [Σ_s V_s · T, 3·p·p] (host fp32) are in sample and view order. Throws emb::Error naming the
  // sample on ids outside the vocabulary or an image-token count other than V · T.
  std::vector<float> features(const std::vector<EagleSample>& samples, const float* patch_rows);
  // The same vl rows left in backend memory, in storage() dtype, valid until the next call (the
  // backbone's scratch buffers are allocated on the first call of a shape and reused after it);
  // an absent view when the samples hold no token.
  View features_in_backend(const std::vector<EagleSample>& samples, const float* patch_rows);
  // The image tokens (SigLIP + mlp1) of n images' patch rows, host fp32 [n · T, E] (tests).
  std::vector<float> image_tokens(const float* patch_rows, int64_t n_images);

 private:
  Ops& ops_;
  EagleDims dims_;
  std::unique_ptr<BackendTensors> weights_store_;
  EagleWeights weights_;
  ScratchPool scratch_;  // the activations of a call, recycled by the next
};

}  // namespace emb::encoders
