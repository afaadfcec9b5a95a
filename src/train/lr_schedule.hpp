// Learning-rate schedules: linear warm-up, then cosine (or linear) decay to min_lr at the
// last step, or constant. Steps are 1-based: step 1 is the first optimizer update.
#pragma once
#include <cstdint>

#include "config/train_config.hpp"

namespace emb {

struct LrSchedule {
  LrShape shape = LrShape::cosine;
  double lr = 3e-4, min_lr = 3e-5;
  int64_t warmup_steps = 0, total_steps = 1;

  double at(int64_t step) const;
};

// train.lr_schedule, lr, min_lr and warmup_steps over train.steps.
inline LrSchedule lr_schedule(const TrainConfig& c) {
  return {c.lr_schedule, c.lr, c.min_lr, c.warmup_steps, c.steps};
}

}  // namespace emb
