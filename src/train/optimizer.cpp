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
      m_(ops, moment_count(layout)),
      v_(ops, moment_count(layout)),
      sum_squares_(ops, run_count(layout)) {
  ops_.zero(m_.view());
  ops_.zero(v_.view());
}

int64_t Optimizer::moment_count(const ShardLayout& layout) {
  return std::max<int64_t>(1, layout.trainable_owned_total());
}

int64_t Optimizer::run_count(const ShardLayout& layout) {
  return std::max<int64_t>(1, int64_t(layout.trainable_runs().size()));
}

int64_t Optimizer::device_bytes(const ShardLayout& layout) {
  return 2 * moment_count(layout) * int64_t(sizeof(float)) + run_count(layout) * int64_t(sizeof(double));
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
    ops_.adamw_step(segment(owned_params), segment(owned_grads), m_.view(s.state_offset, s.count),
                    v_.view(s.state_offset, s.count), cfg, step, clip, s.decay_mult);
  }
  return clip;
}

// The host copies are in the owned layout (checkpoint/optimizer_state.hpp): each trainable
// run's moments go to its owned elements; frozen elements are zero there and never stored.
void Optimizer::download_state(OptimizerState host) {
  std::fill(host.exp_avg, host.exp_avg + layout_.owned_total(), 0.0f);
  std::fill(host.exp_avg_sq, host.exp_avg_sq + layout_.owned_total(), 0.0f);
  for (const DecaySegment& r : layout_.trainable_runs()) {
    const size_t bytes = size_t(r.count) * sizeof(float);
    ops_.download(host.exp_avg + r.owned_offset, m_.data() + r.state_offset, bytes);
    ops_.download(host.exp_avg_sq + r.owned_offset, v_.data() + r.state_offset, bytes);
  }
}

void Optimizer::upload_state(OptimizerState host) {
  for (const DecaySegment& r : layout_.trainable_runs()) {
    const size_t bytes = size_t(r.count) * sizeof(float);
    ops_.upload(m_.data() + r.state_offset, host.exp_avg + r.owned_offset, bytes);
    ops_.upload(v_.data() + r.state_offset, host.exp_avg_sq + r.owned_offset, bytes);
  }
}

}  // namespace emb
