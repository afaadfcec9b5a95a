// The Eagle 2.5 backbone's tensors of a GR00T-N1.5 checkpoint (`backbone.eagle_model.*`, the
// names GR00T stores; spec_eagle.md §8) read into an Ops backend, in the layouts the ops take:
// linears W [in, out] (the checkpoint's nn.Linear [out, in], transposed) in the backend's packed
// form (Ops::pack_linear; `_w` fields below, multiplied by packed_linear_forward), SigLIP's q, k, v fused
// into one [D, 3D] GEMM, Qwen3's gate and up into one [E, 2I], the patch convolution as a GEMM
// [3·p·p, D] over (channel, y, x) patch rows, the patch bias folded into the position table.
// SigLIP's pooling head (stored, never used upstream) and layers past select_layer are not read.
// A missing or misshaped tensor is one line naming it and the shape the dimensions imply.
#pragma once
#include <string>
#include <vector>

#include "encoders/common/backend_tensors.hpp"
#include "encoders/common/pre_norm_block.hpp"
#include "encoders/eagle/eagle_dims.hpp"
#include "weights/weight_source.hpp"

namespace emb::encoders {

// A SigLIP layer is the shared pre-LayerNorm block (encoders/common/pre_norm_block.hpp).
using SiglipLayerWeights = PreNormBlockWeights;

struct Qwen3LayerWeights {
  View input_norm, post_norm;  // [1, E]
  View q_w, k_w, v_w;          // [E, Hq·hd], [E, Hkv·hd], [E, Hkv·hd]
  View q_norm, k_norm;         // [1, hd]
  View o_w;                    // [Hq·hd, E]
  View gate_up_w;              // [E, 2I]: gate | up
  View down_w;                 // [I, E]
};

struct EagleWeights {
  View patch_w;        // [3·p·p, Dv]
  View position_bias;  // [tokens_per_image, Dv]: position embedding + patch bias
  std::vector<SiglipLayerWeights> vision;
  View post_ln_w, post_ln_b;  // [1, Dv]
  View mlp1_w, mlp1_b;        // [Dv, E], [1, E]
  View embed;                 // [vocab, E]
  std::vector<Qwen3LayerWeights> llm;
  View final_norm;  // [1, E]
};

// The checkpoint names every tensor the backbone reads, with the shapes `d` implies (nn.Linear
// [out, in], as stored): for checks, the exporter and the tests.
std::vector<std::pair<std::string, std::vector<int64_t>>> eagle_tensor_shapes(const EagleDims& d);

// One line naming the tensor (exit 2) unless the checkpoint holds it with `shape`.
void check_backbone_tensor(const WeightSource& source, const std::string& name, const std::vector<int64_t>& shape);

// A digest of a checkpoint's backbone: FNV-1a 64 over the name, dtype, shape and stored bytes of
// every `backbone.eagle_model.*` tensor but SigLIP's unused pooling head, in name order, as 16
// hex digits. The identity of the backbone that made a packed file's features, which training
// compares with its own (data.vl_backbone); it needs no Eagle config. Reads all ~2.7 GB of a
// released backbone once (a few seconds).
std::string eagle_weights_digest(const WeightSource& source);

// Reads every tensor into `store`; throws emb::Error (exit 2) naming the source and the tensor.
EagleWeights load_eagle_weights(const WeightSource& source, const EagleDims& d, BackendTensors& store);
// The language model's tensors only (embed, llm, final_norm; the vision fields absent), its
// linears plain W [in, out], not packed: model.tune_visual's backward multiplies them by their
// transpose (language_model_training.hpp). Errors as load_eagle_weights.
EagleWeights load_eagle_language_model(const WeightSource& source, const EagleDims& d, BackendTensors& store);

}  // namespace emb::encoders
