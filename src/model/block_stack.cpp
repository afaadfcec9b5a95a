#include "model/block_stack.hpp"

namespace emb {

void BlockStack::plan(ActivationPlan& plan, int64_t rows, int64_t Tc, int64_t Tci, Recompute recompute) {
  recompute_ = recompute;
  std::vector<size_t> first_of_slot;  // the first block of each slot, whose spec lays it out
  pool_slot_.assign(specs_.size(), 0);
  for (size_t l = 0; l < specs_.size(); ++l) {
    size_t j = 0;
    while (j < first_of_slot.size() && !same_activation_layout(specs_[first_of_slot[j]], specs_[l])) ++j;
    if (j == first_of_slot.size()) first_of_slot.push_back(l);
    pool_slot_[l] = j;
  }
  const bool full = recompute_ == Recompute::full, selective = recompute_ == Recompute::selective;
  acts_.assign(full ? first_of_slot.size() : specs_.size(), BlockActs{});
  attention_cores_.assign(selective ? first_of_slot.size() : 0, BlockActs{});
  for (size_t j = 0; j < attention_cores_.size(); ++j)
    plan_block_acts(specs_[first_of_slot[j]], rows, Tc, Tci, plan, attention_cores_[j],
                    BlockActsPart::attention_cores);
  for (size_t i = 0; i < acts_.size(); ++i) {
    const size_t l = full ? first_of_slot[i] : i;
    plan_block_acts(specs_[l], rows, Tc, Tci, plan, acts_[i],
                    selective ? BlockActsPart::all_but_attention_cores : BlockActsPart::all);
    if (selective) share_attention_cores(specs_[l], attention_cores_[pool_slot_[l]], acts_[i]);
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

void BlockStack::backward(Ops& ops, ParamAccess& params, const BlockIO& io, const BlockScratch& scratch, float* dx) {
  for (size_t l = specs_.size(); l-- > 0;) {
    params.enter_backward(specs_[l].unit);
    if (recompute_ == Recompute::full) {
      // In place: the input becomes the block's output, which nothing reads, and the input is
      // not needed after this block's backward.
      block_forward(ops, specs_[l], params, io, acts_of(l), inputs_[l]);
    } else if (recompute_ == Recompute::selective) {
      block_recompute_attention(ops, specs_[l], params, io, acts_of(l));
    }
    block_backward(ops, specs_[l], params, io, acts_of(l), scratch, dx);
    params.leave_backward(specs_[l].unit);
  }
}

}  // namespace emb
