// What this rank is doing now, for errors raised where that is not known: a device allocation
// that fails deep inside an op names the phase and step it happened in (README "On GPUs").
// PhaseTimers sets the phase as phases start and stop; an ActivityLabel names what a stretch
// of code allocates ("activations"). One thread (the training loop's) sets and reads them.
#pragma once
#include <cstdint>
#include <string>

namespace emb {

// The innermost running phase and its step ("fwd of step 12"), "init" before the first step,
// "" when no phase runs.
std::string current_activity();
// phase null: none runs; step < 0: before the first step.
void set_current_phase(const char* phase, int64_t step);

// What the code in its scope allocates, innermost first; null when no label is set.
const char* current_activity_label();

class ActivityLabel {
 public:
  explicit ActivityLabel(const char* what);
  ~ActivityLabel();
  ActivityLabel(const ActivityLabel&) = delete;
  ActivityLabel& operator=(const ActivityLabel&) = delete;

 private:
  const char* outer_;
};

}  // namespace emb
