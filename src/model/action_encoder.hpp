// The action encoder both families share: upstream's MultiEmbodimentActionEncoder (Isaac-GR00T
// action_encoder.py, which DreamZero imports; UPSTREAM.md). For noisy actions a_t [Ta, A] and
// each action token's timestep t [Ta, 1]:
//   u = a_t·fc1;  out = fc3(silu([u, sinusoid(t, D)]·fc2))
// with the sinusoid [sin(t·f), cos(t·f)], f_k = exp(−k·ln(10⁴)/(D/2)) (kernels/op_types.hpp
// SinusConfig{false, 0}). gr00t keeps one slot per embodiment (fc* [E, in, out]) and its t is
// the bucket trunc(1000τ); wan uses upstream's one slot (fc* [in, out]) and t = 1000σ of the
// token's block.
#pragma once
#include <cstdint>

#include "kernels/ops.hpp"
#include "model/activation_plan.hpp"
#include "model/param_registry.hpp"
#include "model/unit_hooks.hpp"

namespace emb {

class ActionEncoder {
 public:
  // Registers action_enc.fc1 [A, D], fc2 [2D, D], fc3 [D, D] in the registry's open unit, each
  // with a slot per embodiment when n_emb > 0 (else plain linears).
  void add_params(ParamRegistry& reg, int n_emb, int A, int D);
  // rows: the most action tokens a micro-batch can have.
  void plan(ActivationPlan& plan, int64_t rows);

  // a_t [Ta, A] and t [Ta, 1] in the backend's memory; emb: the tokens' embodiments (absent
  // without slots). Writes out [Ta, D].
  void forward(Ops& ops, const ParamAccess& P, const View& a_t, const View& t, const EmbRows& emb);
  // From dout [Ta, D] (filled by the caller) to the parameters; a_t and emb as in forward.
  void backward(Ops& ops, const ParamAccess& P, const View& a_t, const EmbRows& emb);

  // [rows, D]; dout is its gradient.
  float *out = nullptr, *dout = nullptr;

 private:
  int D_ = 0;
  LinearRef fc1_, fc2_, fc3_;
  float *sin_ = nullptr, *fc1_out_ = nullptr, *cat_ = nullptr, *fc2_out_ = nullptr, *fc2_silu_ = nullptr;
  float *dfc2_silu_ = nullptr, *dcat_ = nullptr, *dfc1_out_ = nullptr;
};

}  // namespace emb
