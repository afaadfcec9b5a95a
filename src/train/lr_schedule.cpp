#include "train/lr_schedule.hpp"

#include <algorithm>
#include <cmath>

namespace emb {

double LrSchedule::at(int64_t step) const {
  if (step <= warmup_steps) return lr * double(step) / double(std::max<int64_t>(warmup_steps, 1));
  if (shape == LrShape::constant) return lr;
  int64_t decay_steps = std::max<int64_t>(total_steps - warmup_steps, 1);
  double progress = std::min(1.0, double(step - warmup_steps) / double(decay_steps));
  double factor = shape == LrShape::cosine ? 0.5 * (1.0 + std::cos(M_PI * progress)) : 1.0 - progress;
  return min_lr + (lr - min_lr) * factor;
}

}  // namespace emb
