#include "model/trunk.hpp"

#include <algorithm>
#include <vector>

#include "model/rows.hpp"

namespace emb {
namespace {

// The context blocks attend within each sample's context tokens and read no conditioning.
BlockIO context_io(const PackedBatch& b) {
  BlockIO io;
  io.T = b.n_context, io.Tc = b.n_context;
  io.self_index = {cpu::AttnMask::full, b.cseq.data(), nullptr, nullptr, b.cseq.data(), nullptr, nullptr};
  return io;
}

}  // namespace

void Trunk::plan(ActivationPlan& plan, int64_t T, int64_t Tc, int64_t D, int64_t Dc, Recompute recompute) {
  D_ = D, Dc_ = Dc;
  for (float** p : {&x, &dx}) *p = plan.floats(T * D);
  for (float** p : {&c, &dc}) *p = plan.floats(Tc * Dc);
  work_ = plan.floats(std::max(T * D, context_blocks.specs().empty() ? 0 : Tc * Dc));
  context_blocks.plan(plan, Tc, Tc, recompute);
  blocks.plan(plan, T, Tc, recompute);
  std::vector<const BlockSpec*> specs;
  for (const BlockSpec& s : context_blocks.specs()) specs.push_back(&s);
  for (const BlockSpec& s : blocks.specs()) specs.push_back(&s);
  plan_block_scratch(specs, T, Tc, plan, scratch_);
}

void Trunk::condition_on(const float* cond, float* dcond, int64_t width) {
  cond_ = cond, dcond_ = dcond, cond_width_ = width;
}

// The self index carries every field a self-attention mask reads; each sublayer applies the
// mask of its BlockSpec.
BlockIO Trunk::blocks_io(const PackedBatch& b, const TimeRows& time) const {
  BlockIO io;
  io.T = b.n_tokens, io.Tc = b.n_context;
  io.cond = cond_, io.dcond = dcond_;
  io.n_cond = int64_t(time.t.size()), io.cond_row = time.row.data();
  io.context = c, io.dcontext = dc;
  io.self_index = {cpu::AttnMask::full, b.seq.data(), b.blk.data(), b.grp.data(), b.seq.data(), b.blk.data(),
                   b.grp.data()};
  io.cross_index = {cpu::AttnMask::cross, b.seq.data(), nullptr, nullptr, b.cseq.data(), nullptr, nullptr};
  io.pos = b.pos.data();
  return io;
}

void Trunk::forward(ParamAccess& P, const PackedBatch& b, const TimeRows& time) {
  context_blocks.forward(P, context_io(b), c);
  blocks.forward(P, blocks_io(b, time), x);
}

void Trunk::zero_grads(const PackedBatch& b, const TimeRows& time) {
  zero(dx, b.n_tokens * D_), zero(dc, b.n_context * Dc_), zero(dcond_, int64_t(time.t.size()) * cond_width_);
}

void Trunk::backward(ParamAccess& P, const PackedBatch& b, const TimeRows& time) {
  blocks.backward(P, blocks_io(b, time), scratch_, dx, work_);
  context_blocks.backward(P, context_io(b), scratch_, dc, work_);
}

}  // namespace emb
