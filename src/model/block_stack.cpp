#include "model/block_stack.hpp"

#include <algorithm>

namespace emb {

void BlockStack::plan(ActivationPlan& plan, int64_t rows, int64_t Tc, int64_t Tci, Recompute recompute) {
  recompute_ = recompute;
  const size_t pool = std::min<size_t>(specs_.size(), 2);
  const bool full = recompute_ == Recompute::full, selective = recompute_ == Recompute::selective;
  acts_.assign(full ? pool : specs_.size(), BlockActs{});
  attention_cores_.assign(selective ? pool : 0, BlockActs{});
  for (size_t j = 0; j < attention_cores_.size(); ++j)
    plan_block_acts(specs_[j], rows, Tc, Tci, plan, attention_cores_[j], BlockActsPart::attention_cores);
  for (size_t l = 0; l < acts_.size(); ++l) {
    plan_block_acts(specs_[l], rows, Tc, Tci, plan, acts_[l],
                    selective ? BlockActsPart::all_but_attention_cores : BlockActsPart::all);
    if (selective) share_attention_cores(specs_[l], attention_cores_[l % pool], acts_[l]);
  }
  inputs_.assign(full ? specs_.size() : 0, nullptr);
  for (size_t l = 0; l < inputs_.size(); ++l) inputs_[l] = plan.floats(rows * specs_[l].D);
}

void BlockStack::forward(Ops& ops, ParamAccess& params, const BlockIO& io, float* x) {
  for (size_t l = 0; l < specs_.size(); ++l) {
    params.enter_forward(specs_[l].unit);
    if (recompute_ == Recompute::full) ops.copy(view(x, io.T, specs_[l].D), view(inputs_[l], io.T, specs_[l].D));
    block_forward(ops, specs_[l], params, io, acts_of(l), x);
  }
}

void BlockStack::backward(Ops& ops, ParamAccess& params, const BlockIO& io, const BlockScratch& scratch, float* dx,
                          float* work) {
  for (size_t l = specs_.size(); l-- > 0;) {
    params.enter_backward(specs_[l].unit);
    if (recompute_ == Recompute::full) {
      ops.copy(view(inputs_[l], io.T, specs_[l].D), view(work, io.T, specs_[l].D));
      block_forward(ops, specs_[l], params, io, acts_of(l), work);
    } else if (recompute_ == Recompute::selective) {
      block_recompute_attention(ops, specs_[l], params, io, acts_of(l));
    }
    block_backward(ops, specs_[l], params, io, acts_of(l), scratch, dx);
    params.leave_backward(specs_[l].unit);
  }
}

}  // namespace emb
