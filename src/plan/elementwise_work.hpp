// The elementwise ops a micro-batch's forward and backward run, from the model's own code: a dry
// step runs Model::forward_backward through an Ops that observes every op and runs none (its
// memory calls hand out addresses nothing is ever written to), so the planner sees each
// elementwise op the model issues and the bytes of the views it is given (ObservedOps::touched,
// the bytes run.profile_ops reports), in the pass the trainer times it in. Regression round 69
// showed why the activations' bytes alone would not do: the forward's elementwise ops are given
// 23-46 % of them (the linears and attention write most saved tensors, inside their own kinds),
// the backward's 62-100 %.
// Ops whose time is their arithmetic, not their bytes, are also counted by their elements
// (kernels/op_types.hpp kArithmeticElementwiseOps). Every op of any kind is counted too: the
// step's op calls (plan/op_calls.hpp), recompute's second forward among them; and each linear's
// GEMMs by their shape, whose calls' set-up the planner costs.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "batch/packed_batch.hpp"
#include "config/model_config.hpp"
#include "kernels/observed_ops.hpp"
#include "plan/model_cost.hpp"

namespace emb {

// An arithmetic op's tensor elements and rows (the tensor it normalises, rotates or writes) and
// the bytes of the views it was given.
struct ArithmeticWork {
  double elements = 0, rows = 0, bytes = 0;
  bool operator==(const ArithmeticWork& o) const {
    return elements == o.elements && rows == o.rows && bytes == o.bytes;
  }
};

struct ElementwisePass {
  double bytes = 0;  // every elementwise op's views (ObservedOps::touched), as run.profile_ops sums them
  double calls = 0;  // elementwise op calls
  double op_calls = 0;  // every op call of the pass, of any kind (the host's cost per call: plan/op_calls.hpp)
  // Σ over the pass's GEMMs of the FLOPs one more row adds (2·in·out): a GEMM call's set-up costs
  // the hardware's gemm_call_rows of them (a linear_emb's per-embodiment GEMMs counted as one).
  double gemm_row_flops = 0;
  std::map<std::string, ArithmeticWork> arithmetic;  // of them, the kArithmeticElementwiseOps ones, by name

  // a + f·b, figure by figure.
  static ElementwisePass combined(const ElementwisePass& a, double f, const ElementwisePass& b);
};

struct ElementwiseWork {
  ElementwisePass fwd, bwd;
};

// An Ops that sums the elementwise ops issued through it into `work`, by pass (the backward's
// from `backward`, which the caller sets when the model first asks for a unit's backward, as
// the trainer's timers switch: DataParallel::check_order), over `inner`, running them or not.
class ElementwiseRecorder : public ObservedOps {
 public:
  ElementwiseRecorder(Ops& inner, bool run_ops) : ObservedOps(inner, run_ops) {}
  bool backward = false;
  ElementwiseWork work;

  void rope_forward(const View& x, const int32_t* pos, const RopeConfig& cfg) override;
  void rope_backward(const View& dx, const int32_t* pos, const RopeConfig& cfg) override;
  void sinus_embedding(const View& t, const View& out, const SinusConfig& cfg) override;
  void layernorm_forward(const View& x, const View& weight, const View& bias, const View& y, const View& mean,
                         const View& rstd, float eps) override;
  void layernorm_backward(const View& x, const View& weight, const View& mean, const View& rstd, const View& dy,
                          const View& dx, const View& dweight, const View& dbias) override;
  void rmsnorm_forward(const View& x, const View& weight, const View& y, const View& rstd) override;
  void rmsnorm_backward(const View& x, const View& weight, const View& rstd, const View& dy, const View& dx,
                        const View& dweight) override;
  void norm_modulate_forward(const View& x, const View& scale, const View& shift, const View& normed, const View& y,
                             const View& mean, const View& rstd, float eps) override;
  void norm_modulate_backward(const View& x, const View& normed, const View& scale, const View& mean, const View& rstd,
                              const View& dy, const View& dx, const View& dscale, const View& dshift) override;
  void residual_norm_modulate_forward(const View& x, const View& gate, const View& r, const View& x_in,
                                      const View& scale, const View& shift, const View& normed, const View& y,
                                      const View& mean, const View& rstd, float eps) override;
  void linear_forward(const View& x, const View& W, const View& b, Activation act, const View& pre,
                      const View& y) override;
  void linear_backward(const View& x, const View& W, Activation act, const View& pre, const View& dy, const View& dx,
                       const View& dW, const View& db) override;
  void packed_linear_forward(const View& x, const View& packed, const View& b, Activation act, const View& pre,
                             const View& y) override;
  void fp8_linear_forward(const View& x, const View& W, const View& b, Activation act, const View& pre,
                          const View& y) override;
  void fp8_linear_backward(const View& x, const View& W, Activation act, const View& pre, const View& dy,
                           const View& dx, const View& dW, const View& db) override;
  void linear_emb_forward(const View& x, const View& W, const View& b, const EmbRows& emb, Activation act,
                          const View& pre, const View& y) override;
  void linear_emb_backward(const View& x, const View& W, const EmbRows& emb, Activation act, const View& pre,
                           const View& dy, const View& dx, const View& dW, const View& db) override;

 private:
  ElementwisePass& pass() { return backward ? work.bwd : work.fwd; }
  void add_elements(const char* op, const View& v);
  // A forward GEMM of in x out features (y's columns), or a backward's: one for dx, one for dW.
  void add_forward_gemm(const View& x, const View& y);
  void add_backward_gemms(const View& x, const View& dy, const View& dx, const View& dW);
  void op_started(const char*) override {}
  void op_ended(const char* op, double bytes) override;
};

// The elementwise work of one training micro-batch `batch` of model `c` (its recompute as
// given), with `frozen` tensors of the registry frozen (empty: none) and the blocks' activations
// in bf16 when `mixed_storage` (Model::training_blocks_dtype): one dry step (a first step
// issues the elementwise ops of the steady state: test_elementwise_work).
ElementwiseWork elementwise_work(const ModelConfig& c, const PackedBatch& batch, const std::vector<bool>& frozen,
                                 bool mixed_storage);

// A micro-batch of n of --plan's samples (plan_micro_batch: equal samples) makes fixed + n ×
// per_sample of every figure: each op's tensors are its rows' or its parameters'. Fitted from
// dry steps of one and two samples, so a plan costs any micro-batch for two steps of the
// smallest (dreamzero14b's sample is 28k tokens: 0.17 s a dry step here).
struct ElementwiseFit {
  Recompute recompute = Recompute::none;  // the model's, as fitted
  ElementwiseWork fixed, per_sample;
  ElementwiseWork micro_batch(int samples) const;
};
ElementwiseFit fit_elementwise_work(const ModelConfig& c, const PlanSample& shape, const std::vector<bool>& frozen,
                                    bool mixed_storage);

}  // namespace emb
