// DreamZero's CLIP image embedding: upstream's MLPProj `img_emb` (Wan2.1 model.py; UPSTREAM.md
// "DreamZero"). For each sample's CLIP features clip [Nclip, Dclip] (PackedBatch::clip):
//   out = LN2(GELU_erf(LN1(clip)·fc1)·fc2)
// with affine LayerNorms of eps 1e-5 (torch's default inside MLPProj), fc1 Dclip -> Dclip,
// fc2 Dclip -> D. The result is the image context every cross-attention of the blocks reads
// through its k_img / v_img (dit_block.hpp, SublayerSpec::image).
#pragma once
#include <cstdint>

#include "kernels/ops.hpp"
#include "model/activation_plan.hpp"
#include "model/param_registry.hpp"
#include "model/unit_hooks.hpp"

namespace emb {

constexpr float kClipNormEps = 1e-5f;

class ImageEmbedding {
 public:
  // Registers img_emb.ln1 [Dclip], img_emb.fc1 [Dclip, Dclip], img_emb.fc2 [Dclip, D],
  // img_emb.ln2 [D] in the registry's open unit.
  void add_params(ParamRegistry& reg, int d_clip, int D);
  // rows: the most CLIP rows a micro-batch can have.
  void plan(ActivationPlan& plan, int64_t rows);

  // clip [Nc, Dclip] in the backend's memory -> out [Nc, D].
  void forward(Ops& ops, const ParamAccess& P, const View& clip, const View& out);
  // From dout [Nc, D] to the parameters (the CLIP features are an input: no gradient).
  void backward(Ops& ops, const ParamAccess& P, const View& clip, const View& dout);

 private:
  int d_clip_ = 0, D_ = 0;
  NormRef ln1_, ln2_;
  LinearRef fc1_, fc2_;
  // [rows, Dclip] x4, [rows, D], [rows, 1] x4.
  float *ln1_out_ = nullptr, *fc1_pre_ = nullptr, *fc1_out_ = nullptr, *dfc1_out_ = nullptr, *dln1_out_ = nullptr;
  float *fc2_out_ = nullptr, *dfc2_out_ = nullptr;
  float *mean1_ = nullptr, *rstd1_ = nullptr, *mean2_ = nullptr, *rstd2_ = nullptr;
};

}  // namespace emb
