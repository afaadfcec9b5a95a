// Family wan (MODEL.md): the DreamZero world-action model on the Wan video DiT. Units:
// 0 = encoders (patch_embed, text_emb, time_enc, the shared time_proj, action_enc), one unit
// per DiT block, last the head (head.modulation, head.proj, action_head).
#pragma once
#include "model/block_stack.hpp"
#include "model/model.hpp"

namespace emb {

class WanModel : public Model {
 public:
  explicit WanModel(const ModelConfig& cfg);
  std::vector<double> loss_counts(const PackedBatch& batch) const override;

 protected:
  void plan_activations(ActivationPlan& plan, int64_t T, int64_t Tc, int B) override;
  double run(ParamAccess& access, bool backward, const PackedBatch& batch,
             const std::vector<double>& denominators) override;

 private:
  void encode(const ParamAccess& P, const PackedBatch& batch);
  void encode_backward(const ParamAccess& P, const PackedBatch& batch);
  double head(const ParamAccess& P, const PackedBatch& batch, const std::vector<double>& denominators,
              bool backward);
  void head_backward(const ParamAccess& P);

  LinearRef patch_embed_, text_fc1_, text_fc2_, time_fc1_, time_fc2_, time_proj_, action_enc_;
  int head_modulation_ = -1;
  LinearRef head_proj_, action_head_;
  int head_unit_ = 0;
  BlockStack blocks_;
  std::vector<int32_t> head_rows_;  // noisy video tokens, then action tokens
  // Output element e of a patch reads input element out_to_in_[e] (head.proj may predict a
  // subset of the input channels: 14B's input adds mask and image channels).
  std::vector<int32_t> out_to_in_;

  struct Acts {
    float *sin = nullptr, *te1 = nullptr, *te1s = nullptr, *temb = nullptr, *stemb = nullptr, *tp = nullptr;
    float *vin = nullptr, *vemb = nullptr, *ain = nullptr, *aemb = nullptr, *x = nullptr;
    float *t1 = nullptr, *t1g = nullptr, *c = nullptr;
    float *hx = nullptr, *hmean = nullptr, *hrstd = nullptr, *hln = nullptr, *hmod = nullptr, *hm = nullptr;
    float *yv = nullptr, *ya = nullptr;
    float *dx = nullptr, *dstemb = nullptr, *dtemb = nullptr, *dte1s = nullptr, *dte1 = nullptr, *dtp = nullptr;
    float *dc = nullptr, *dt1g = nullptr, *dt1 = nullptr, *dhx = nullptr, *dhln = nullptr, *dhm = nullptr;
    float *dhmod = nullptr, *dyv = nullptr, *dya = nullptr, *dvemb = nullptr, *daemb = nullptr, *work = nullptr;
    BlockScratch scratch;
  } a_;
};

}  // namespace emb
