#include "train/optimizer.hpp"

#include <cmath>

#include "kernels/op_types.hpp"

namespace emb {

Optimizer::Optimizer(const ShardLayout& layout, Ops& ops, const AdamWConfig& cfg, float grad_clip)
    : layout_(layout),
      ops_(ops),
      cfg_(cfg),
      grad_clip_(grad_clip),
      m_(ops, layout.owned_total()),
      v_(ops, layout.owned_total()),
      sum_squares_(ops, 1) {
  ops_.zero(m_.view());
  ops_.zero(v_.view());
}

double Optimizer::global_grad_norm(const float* owned_grads, MPI_Comm comm) {
  double sum = 0;
  const int64_t n = layout_.owned_total();
  if (n > 0) {
    ops_.sum_squares(view(owned_grads, 1, n), sum_squares_.data());
    ops_.download(&sum, sum_squares_.data(), sizeof sum);
  }
  if (layout_.mode() != ShardMode::none) sum_over_ranks(comm, &sum, 1);
  return std::sqrt(sum);
}

float Optimizer::step(float* owned_params, const float* owned_grads, int64_t step, double lr, double grad_norm) {
  AdamWConfig cfg = cfg_;
  cfg.lr = float(lr);
  const float clip = clip_coefficient(grad_norm, grad_clip_);
  for (const DecaySegment& s : layout_.decay_segments()) {
    auto segment = [&](const float* p) { return view(p + s.owned_offset, 1, s.count); };
    ops_.adamw_step(segment(owned_params), segment(owned_grads), m_.view(s.owned_offset, s.count),
                    v_.view(s.owned_offset, s.count), cfg, step, clip, s.decay_mult);
  }
  return clip;
}

void Optimizer::download_state(OptimizerState host) {
  const size_t bytes = size_t(layout_.owned_total()) * sizeof(float);
  ops_.download(host.exp_avg, m_.data(), bytes);
  ops_.download(host.exp_avg_sq, v_.data(), bytes);
}

void Optimizer::upload_state(OptimizerState host) {
  const size_t bytes = size_t(layout_.owned_total()) * sizeof(float);
  ops_.upload(m_.data(), host.exp_avg, bytes);
  ops_.upload(v_.data(), host.exp_avg_sq, bytes);
}

}  // namespace emb
