#include "train/optimizer.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/op_types.hpp"

namespace emb {

Optimizer::Optimizer(const ShardLayout& layout, Ops& ops, const AdamWConfig& cfg, float grad_clip)
    : layout_(layout),
      ops_(ops),
      cfg_(cfg),
      grad_clip_(grad_clip),
      m_(ops, layout.owned_total()),
      v_(ops, layout.owned_total()),
      sum_squares_(ops, std::max<int64_t>(1, int64_t(layout.trainable_runs().size()))) {
  ops_.zero(m_.view());
  ops_.zero(v_.view());
}

double Optimizer::global_grad_norm(const float* owned_grads, MPI_Comm comm) {
  // Frozen tensors' gradients are neither reduced nor counted: upstream clips over the
  // parameters that require a gradient.
  const std::vector<DecaySegment>& runs = layout_.trainable_runs();
  for (size_t i = 0; i < runs.size(); ++i)
    ops_.sum_squares(view(owned_grads + runs[i].owned_offset, 1, runs[i].count), sum_squares_.data() + i);
  std::vector<double> sums(runs.size());
  if (!runs.empty()) ops_.download(sums.data(), sum_squares_.data(), sums.size() * sizeof(double));
  double sum = 0;
  for (double s : sums) sum += s;
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
