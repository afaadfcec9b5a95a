#include "model/block_stack.hpp"

#include <algorithm>
#include <cstring>

namespace emb {

void BlockStack::plan(ActivationPlan& plan, int64_t rows, int64_t Tc, Recompute recompute) {
  recompute_ = recompute == Recompute::full;
  const size_t n_acts = recompute_ ? std::min<size_t>(specs_.size(), 2) : specs_.size();
  acts_.assign(n_acts, BlockActs{});
  for (size_t i = 0; i < n_acts; ++i) plan_block_acts(specs_[i], rows, Tc, plan, acts_[i]);
  inputs_.assign(recompute_ ? specs_.size() : 0, nullptr);
  for (size_t l = 0; l < inputs_.size(); ++l) inputs_[l] = plan.floats(rows * specs_[l].D);
}

void BlockStack::forward(ParamAccess& params, const BlockIO& io, float* x) {
  for (size_t l = 0; l < specs_.size(); ++l) {
    params.enter_forward(specs_[l].unit);
    if (recompute_) std::memcpy(inputs_[l], x, size_t(io.T * specs_[l].D) * sizeof(float));
    block_forward(specs_[l], params, io, acts_of(l), x);
  }
}

void BlockStack::backward(ParamAccess& params, const BlockIO& io, const BlockScratch& scratch, float* dx,
                          float* work) {
  for (size_t l = specs_.size(); l-- > 0;) {
    params.enter_backward(specs_[l].unit);
    if (recompute_) {
      std::memcpy(work, inputs_[l], size_t(io.T * specs_[l].D) * sizeof(float));
      block_forward(specs_[l], params, io, acts_of(l), work);
    }
    block_backward(specs_[l], params, io, acts_of(l), scratch, dx);
    params.leave_backward(specs_[l].unit);
  }
}

}  // namespace emb
