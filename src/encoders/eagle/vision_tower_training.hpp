// model.tune_visual (issue 33): SigLIP and the mlp1 projector trained as upstream's
// tune_visual allows: a forward that keeps its activations and a backward that accumulates the
// gradient of every vision and mlp1 tensor. The frozen path's ops (packed_linear_forward,
// encoder_attention_forward) are forward only, so this one runs on the trainer's ops with a
// backward: linear, layernorm, attention (mask full over each image's tokens), gelu_tanh.
//
// The tensors are one flat fp32 buffer in checkpoint order (vision_tower_layout), what a
// parameter registry holds and shards: each tensor as the ops read it, linears (and the patch
// convolution, as a GEMM over (channel, y, x) patch rows) transposed to W [in, out], the patch
// bias apart from the position table (both are trained).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "encoders/common/backend_tensors.hpp"
#include "encoders/eagle/eagle_dims.hpp"
#include "weights/weight_source.hpp"

namespace emb::encoders {

// One SigLIP layer's trained tensors (W [in, out], biases and norms [1, n]).
// In the checkpoint's order (eagle_tensor_shapes).
struct SiglipTrainedLayer {
  View ln1_w, ln1_b, ln2_w, ln2_b;    // [1, D]
  View q_w, q_b, k_w, k_b, v_w, v_b;  // [D, D], [1, D]
  View out_w, out_b;                  // [D, D], [1, D]
  View fc1_w, fc1_b, fc2_w, fc2_b;    // [D, I], [1, I], [I, D], [1, D]
};

struct VisionEmbeddingTensors {
  View patch_w, patch_b;  // [3·p·p, D], [1, D]
  View position;          // [tokens_per_image, D]
};

struct VisionHeadTensors {
  View post_ln_w, post_ln_b;  // [1, D]
  View mlp1_w, mlp1_b;        // [D, E], [1, E]
};

struct VisionTowerTensors {
  VisionEmbeddingTensors embeddings;
  std::vector<SiglipTrainedLayer> layers;
  VisionHeadTensors head;
};

// One tensor of the flat layout: its checkpoint name and shape, its [rows, cols] in the layout,
// whether it is stored transposed (nn.Linear [out, in] and the patch convolution), and its piece:
// 0 the embeddings, 1 .. L the SigLIP layers, L + 1 the head (post-LN and mlp1). A piece is what
// train.tune_visual's ZeRO-3 gathers at once (a unit of its own).
struct VisionTensorSlot {
  std::string name;
  std::vector<int64_t> checkpoint_shape;
  int64_t rows = 0, cols = 0;
  bool transposed = false;
  int piece = 0;
};
std::vector<VisionTensorSlot> vision_tower_layout(const EagleDims& d);
int64_t vision_tower_elements(const EagleDims& d);

// The pieces' tensors from `tensor(i)`, the view of the layout's tensor i (a caller that gathers
// one piece at a time resolves only that piece's indices).
using LayoutTensor = std::function<View(int)>;
VisionEmbeddingTensors vision_embedding_views(const LayoutTensor& tensor);
SiglipTrainedLayer vision_layer_views(int layer, const LayoutTensor& tensor);
VisionHeadTensors vision_head_views(const EagleDims& d, const LayoutTensor& tensor);

// Views of `flat` (backend memory, vision_tower_elements fp32 values) in the layout.
VisionTowerTensors vision_tower_views(const float* flat, const EagleDims& d);

// The checkpoint's tensors in the layout (host fp32). Throws emb::Error (exit 2) naming a
// missing or misshaped tensor.
std::vector<float> read_vision_tower(const WeightSource& source, const EagleDims& d);

class VisionTowerTraining {
 public:
  VisionTowerTraining(Ops& ops, const EagleDims& d) : ops_(ops), d_(d) {}

  // tokens [n_images · T, E] fp32 of n images' patch rows [n_images · T, 3·p·p] (backend
  // memory); the activations are kept until the next forward.
  View forward(const VisionTowerTensors& p, const View& patch_rows, int64_t n_images);
  // grads += ∂(Σ tokens ⊙ dtokens)/∂p for the last forward.
  void backward(const VisionTowerTensors& p, const View& dtokens, const VisionTowerTensors& grads);

  // forward and backward piece by piece, for a caller that gathers each piece's tensors just
  // before it runs: begin, embed, layer_forward for every layer in order, finish (the tokens);
  // then head_backward, layer_backward from the last layer to the first, embed_backward.
  void begin(const View& patch_rows, int64_t n_images);
  void embed(const VisionEmbeddingTensors& p);
  void layer_forward(int layer, const SiglipTrainedLayer& w);
  View finish(const VisionHeadTensors& p);
  void head_backward(const VisionHeadTensors& p, const View& dtokens, const VisionHeadTensors& grads);
  void layer_backward(int layer, const SiglipTrainedLayer& w, const SiglipTrainedLayer& grads);
  void embed_backward(const VisionEmbeddingTensors& p, const VisionEmbeddingTensors& grads);

  // Activation floats kept per image token (for --plan): what forward keeps for one token, its
  // patch row included (the backward reads it for the patch weight's gradient).
  static int64_t activation_floats_per_token(const EagleDims& d);

 private:
  struct LayerActivations {
    View x_in, h1, mean1, rstd1, q, k, v, att, lse, x_mid, h2, mean2, rstd2, pre, m;
  };
  // Attention within each image: seq = the image of the row.
  AttnIndex image_attention() const;

  Ops& ops_;
  EagleDims d_;
  std::unique_ptr<BackendTensors> store_;  // the activations of the last forward
  std::unique_ptr<BackendIndex> image_of_row_;
  std::vector<LayerActivations> layers_;
  View patch_rows_, x_, o_;  // the residual stream and the sublayers' output, in forward
  View h_out_, mean_out_, rstd_out_;
  int64_t n_images_ = 0;
  // The backward's: the residual stream's gradient dx and the sublayers' (from head_backward on).
  std::unique_ptr<BackendTensors> scratch_;
  View dx_, dh_, dm_, dq_, dk_, dv_, datt_;
};

}  // namespace emb::encoders
