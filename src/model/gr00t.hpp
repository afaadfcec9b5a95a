// Family gr00t (MODEL.md): the GR00T-N1.5 flow-matching action head. Units: 0 = encoders
// (vlln, state/action encoders, future tokens, pos_emb, time_enc), then one unit per
// vl_block, one per DiT block, and last the output head (proj_out_1/2, action_dec).
#pragma once
#include "model/block_stack.hpp"
#include "model/model.hpp"

namespace emb {

class Gr00tModel : public Model {
 public:
  explicit Gr00tModel(const ModelConfig& cfg);
  std::vector<double> loss_counts(const PackedBatch& batch) const override;

 protected:
  void plan_activations(ActivationPlan& plan, int64_t T, int64_t Tc, int B) override;
  double run(ParamAccess& access, bool backward, const PackedBatch& batch,
             const std::vector<double>& denominators) override;

 private:
  void encode(const ParamAccess& P, const PackedBatch& batch);
  void encode_backward(const ParamAccess& P, const PackedBatch& batch);
  double head(const ParamAccess& P, const PackedBatch& batch, double denominator, bool backward);
  void head_backward(const ParamAccess& P);

  // Parameters.
  NormRef vlln_;
  LinearRef state_fc1_, state_fc2_, act_fc1_, act_fc2_, act_fc3_, time_fc1_, time_fc2_;
  int future_tokens_ = -1, pos_emb_ = -1;
  LinearRef proj_out_1_, proj_out_2_, dec_fc1_, dec_fc2_;
  int head_unit_ = 0;
  BlockStack vl_blocks_, blocks_;
  std::vector<int32_t> action_time_rows_;  // time row of each action token

  // Activations (arena) of the planned shape; d* are their gradients.
  struct Acts {
    float *sin = nullptr, *te1 = nullptr, *te1s = nullptr, *temb = nullptr, *stemb = nullptr;
    float *st1 = nullptr, *st1r = nullptr, *st2 = nullptr;
    float *ax = nullptr, *a_tq = nullptr, *a_sin = nullptr, *ae1 = nullptr, *acat = nullptr, *ae2 = nullptr, *ae2s = nullptr,
          *ae3 = nullptr;
    int32_t *a_emb = nullptr;
    float *x = nullptr, *c = nullptr, *vl_mean = nullptr, *vl_rstd = nullptr;
    float *hx = nullptr, *hmean = nullptr, *hrstd = nullptr, *hln = nullptr, *hmod_rows = nullptr, *hmod = nullptr,
          *hm = nullptr, *hy = nullptr, *d1 = nullptr, *d1r = nullptr, *v = nullptr;
    float *dx = nullptr, *dc = nullptr, *dstemb = nullptr, *dtemb = nullptr, *dte1s = nullptr, *dte1 = nullptr,
          *work = nullptr;
    float *dv = nullptr, *dd1r = nullptr, *dd1 = nullptr, *dhy = nullptr, *dhm = nullptr, *dhln = nullptr,
          *dhmod_rows = nullptr, *dhmod = nullptr, *dhx = nullptr;
    float *dae3 = nullptr, *dae2s = nullptr, *dae2 = nullptr, *dacat = nullptr, *dae1 = nullptr;
    float *dst2 = nullptr, *dst1r = nullptr, *dst1 = nullptr;
    BlockScratch scratch;
  } a_;
};

}  // namespace emb
