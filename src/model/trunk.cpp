#include "model/trunk.hpp"

#include <vector>

namespace emb {

void Trunk::plan(ActivationPlan& plan, const ActivationRows& rows, int64_t Tci, int64_t D, int64_t Dc,
                 int64_t cond_width, Recompute recompute) {
  const int64_t T = rows.tokens, Tc = rows.context;
  D_ = D, Dc_ = Dc, cond_width_ = cond_width;
  for (float** p : {&x, &dx}) *p = plan.floats(T * D);
  for (float** p : {&c, &dc}) *p = plan.floats(Tc * Dc);
  for (float** p : {&cimg, &dcimg}) *p = Tci ? plan.floats(Tci * D) : nullptr;
  converts_inputs_ = plan.activation_dtype() != DType::f32;
  block_c_ = plan.conversion(Tc * Dc);
  block_cond_ = plan.conversion(rows.time_rows * cond_width);
  block_cimg_ = Tci ? plan.conversion(Tci * D) : TensorPtr{};
  context_blocks.plan(plan, Tc, Tc, 0, recompute);
  blocks.plan(plan, T, Tc, Tci, recompute);
  std::vector<const BlockSpec*> specs;
  for (const BlockSpec& s : context_blocks.specs()) specs.push_back(&s);
  for (const BlockSpec& s : blocks.specs()) specs.push_back(&s);
  plan_block_scratch(specs, T, Tc, Tci, plan, scratch_);
}

void Trunk::condition_on(const float* cond, float* dcond) { cond_ = cond, dcond_ = dcond; }

void Trunk::set_dropout(bool on, uint64_t seed, int64_t step) {
  dropout_.on = on, dropout_.seed = seed, dropout_.step = step;
}

// The context blocks attend within each sample's context tokens and read no conditioning.
BlockIO Trunk::context_io(const PackedBatch& b, const DeviceBatch& dev) const {
  BlockIO io;
  io.T = b.n_context, io.Tc = b.n_context;
  io.self_index = {AttnMask::full, dev.cseq, nullptr, nullptr, dev.cseq, nullptr, nullptr, {}};
  io.dropout = dropout_;
  io.dropout.rows = {dev.cseq, dev.context_in_sample, dev.sample_id};
  return io;
}

// The self index carries every field a self-attention mask reads; each sublayer applies the
// mask of its BlockSpec.
BlockIO Trunk::blocks_io(const PackedBatch& b, const DeviceBatch& dev) const {
  BlockIO io;
  io.T = b.n_tokens, io.Tc = b.n_context;
  io.cond = !converts_inputs_ ? TensorPtr{const_cast<float*>(cond_), DType::f32} : block_cond_;
  io.dcond = dcond_;
  io.n_cond = dev.time_t.rows, io.cond_row = dev.time_row;
  io.context = !converts_inputs_ ? TensorPtr{c, DType::f32} : block_c_;
  io.dcontext = dc;
  io.self_index = {AttnMask::full, dev.seq, dev.blk, dev.grp, dev.seq, dev.blk, dev.grp, teacher_forcing};
  io.cross_index = {AttnMask::cross, dev.seq, nullptr, nullptr, dev.cseq, nullptr, nullptr, {}};
  io.Tci = dev.clip.rows;
  io.image_context = !converts_inputs_ ? TensorPtr{cimg, DType::f32} : block_cimg_;
  io.dimage_context = dcimg;
  io.image_index = {AttnMask::cross, dev.seq, nullptr, nullptr, dev.clip_seq, nullptr, nullptr, {}};
  io.pos = dev.pos, io.rope_modes = dev.rope_modes;
  io.dropout = dropout_;
  io.dropout.rows = {dev.seq, dev.token_in_sample, dev.sample_id};
  return io;
}

void Trunk::forward(Ops& ops, ParamAccess& P, const PackedBatch& b, const DeviceBatch& dev) {
  context_blocks.forward(ops, P, context_io(b, dev), c);
  const BlockIO io = blocks_io(b, dev);
  if (converts_inputs_) {
    ops.convert(view(c, b.n_context, Dc_), io.context.rows(b.n_context, Dc_));
    ops.convert(view(cond_, io.n_cond, cond_width_), io.cond.rows(io.n_cond, cond_width_));
    if (io.Tci) ops.convert(view(cimg, io.Tci, D_), io.image_context.rows(io.Tci, D_));
  }
  blocks.forward(ops, P, io, x);
}

void Trunk::zero_grads(Ops& ops, const PackedBatch& b, const DeviceBatch& dev) {
  ops.zero(view(dx, b.n_tokens, D_)), ops.zero(view(dc, b.n_context, Dc_));
  ops.zero(view(dcond_, dev.time_t.rows, cond_width_));
  if (dev.clip.rows) ops.zero(view(dcimg, dev.clip.rows, D_));
}

void Trunk::backward(Ops& ops, ParamAccess& P, const PackedBatch& b, const DeviceBatch& dev) {
  blocks.backward(ops, P, blocks_io(b, dev), scratch_, dx);
  context_blocks.backward(ops, P, context_io(b, dev), scratch_, dc);
}

}  // namespace emb
