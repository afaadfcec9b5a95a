#include "core/activity.hpp"

namespace emb {
namespace {

struct Activity {
  const char* phase = nullptr;
  int64_t step = -1;
  const char* label = nullptr;
};

Activity& activity() {
  static Activity a;
  return a;
}

}  // namespace

std::string current_activity() {
  const Activity& a = activity();
  if (!a.phase) return "";
  if (a.step < 0) return a.phase;
  return std::string(a.phase) + " of step " + std::to_string(a.step);
}

void set_current_phase(const char* phase, int64_t step) {
  activity().phase = phase;
  activity().step = step;
}

const char* current_activity_label() { return activity().label; }

ActivityLabel::ActivityLabel(const char* what) : outer_(activity().label) { activity().label = what; }
ActivityLabel::~ActivityLabel() { activity().label = outer_; }

}  // namespace emb
