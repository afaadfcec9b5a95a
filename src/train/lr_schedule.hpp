// Learning-rate schedules: linear warm-up, then cosine (or linear) decay to min_lr at the
// last step, or constant. Steps are 1-based: step 1 is the first optimizer update.
#pragma once
#include <cstdint>
#include <string>

namespace emb {

enum class LrShape { cosine, linear, constant };

struct LrSchedule {
  LrShape shape = LrShape::cosine;
  double lr = 3e-4, min_lr = 3e-5;
  int64_t warmup_steps = 0, total_steps = 1;

  double at(int64_t step) const;
};

LrShape lr_shape_from_name(const std::string& name);

}  // namespace emb
