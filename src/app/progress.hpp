// The progress line rank 0 prints every `run.log_every` steps, in the form users of
// Megatron-LM and torchtitan read at a glance:
//   step   40/200 | loss 0.8123 | lr 2.98e-04 | 812.3 samples/s | 41.2k tok/s | 0.039 s/step | ETA 00:00:06
#pragma once
#include <cstdint>
#include <string>

namespace emb {

// The steps since the last progress line; the line shows their mean loss (as Megatron-LM
// does), which is far less noisy than the last step's.
struct ProgressWindow {
  int64_t samples = 0, tokens = 0;
  double seconds = 0;  // wall time of the steps in the window
  int64_t steps = 0;
  double loss_sum = 0;
};

std::string format_progress(int64_t step, int64_t total_steps, double loss, double lr, const ProgressWindow& window);
// "HH:MM:SS" (days as "Nd HH:MM:SS").
std::string format_duration(double seconds);

}  // namespace emb
