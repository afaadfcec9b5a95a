// Where a model finds each unit's parameters and puts its gradients (DESIGN.md
// "Parallelism"). Without hooks a model reads the flat parameter buffer and accumulates into
// the flat gradient buffer. With hooks (ZeRO-3) the trainer supplies every unit's memory when
// the model reaches it: forward asks for unit u's parameters before the unit runs (all-gather
// here, prefetch u+1); backward asks again before the unit's backward, and reports the unit's
// gradients complete after it (reduce-scatter them here). Backward visits units in reverse.
#pragma once
#include <vector>

#include "kernels/ops.hpp"
#include "model/graph_segments.hpp"
#include "model/param_registry.hpp"

namespace emb {

class UnitHooks {
 public:
  virtual ~UnitHooks() = default;
  // The unit's parameters, `registry.unit(u).count` elements of `dtype`, valid until the next
  // call for u: fp32, or bf16 (the compute copy of model.precision = bf16) for a unit the model
  // computes in bf16 (Model::unit_param_dtypes).
  virtual const void* unit_params(int u, bool backward, DType dtype) = 0;
  // The unit's gradient buffer (accumulated into), asked for before its backward runs.
  virtual float* unit_grads(int u) = 0;
  // Every gradient of unit u is final for this micro-batch.
  virtual void unit_grads_ready(int u) = 0;
};

// Resolves registry tensors to parameter and gradient memory for one forward/backward, unit by
// unit, through the hooks when there are any. Parameters are read in their unit's dtype
// (unit_dtypes, one per unit: bf16 only through hooks, the flat buffer is fp32), gradients are fp32.
// A frozen tensor (frozen: per registry tensor, empty = none) has no gradient: g() is null and
// gv() absent, so the backward skips its weight-gradient GEMMs and reductions while input
// gradients still flow through it.
class ParamAccess {
 public:
  ParamAccess(const ParamRegistry& reg, const float* params, float* grads, UnitHooks* hooks,
              std::vector<DType> unit_dtypes, std::vector<bool> frozen, GraphSegments* segments = nullptr);

  void enter_forward(int u);
  void enter_backward(int u);
  void leave_backward(int u);

  float* g(int tensor) const;  // null when no gradients are being computed or the tensor is frozen
  // The same as views [all dims but the last, last dim] (W [in, out], per-embodiment W
  // [E·in, out], a norm's weight [1, D]); absent for tensor < 0, and gv when there are no gradients.
  View pv(int tensor) const;
  View gv(int tensor) const;

 private:
  // Runs a hook between two graph spans (it may communicate or wait for the stream).
  template <class Hook>
  void call_hooks(Hook&& hook);

  const ParamRegistry& reg_;
  const float* params_;
  float* grads_;
  UnitHooks* hooks_;
  std::vector<DType> unit_dtypes_;
  std::vector<bool> frozen_;
  GraphSegments* segments_;
  std::vector<const void*> unit_params_;
  std::vector<float*> unit_grads_;
};

}  // namespace emb
