#include "train/optimizer.hpp"

#include <cmath>

namespace emb {

Optimizer::Optimizer(const ShardLayout& layout, const cpu::AdamWConfig& cfg, float grad_clip)
    : layout_(layout),
      cfg_(cfg),
      grad_clip_(grad_clip),
      m_(size_t(layout.owned_total()), 0.0f),
      v_(size_t(layout.owned_total()), 0.0f) {}

double Optimizer::global_grad_norm(const float* owned_grads, MPI_Comm comm) const {
  double sum = cpu::sum_squares(owned_grads, layout_.owned_total());
  if (layout_.mode() != ShardMode::none) MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, comm);
  return std::sqrt(sum);
}

float Optimizer::step(float* owned_params, const float* owned_grads, int64_t step, double lr, double grad_norm) {
  cpu::AdamWConfig cfg = cfg_;
  cfg.lr = float(lr);
  const float clip = cpu::clip_coefficient(grad_norm, grad_clip_);
  for (const DecaySegment& s : layout_.decay_segments())
    cpu::adamw_step(owned_params + s.owned_offset, owned_grads + s.owned_offset, m_.data() + s.owned_offset,
                    v_.data() + s.owned_offset, s.count, cfg, step, clip, s.decay_mult);
  return clip;
}

}  // namespace emb
