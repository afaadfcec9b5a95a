#include "app/progress.hpp"

#include <cmath>
#include <cstdio>

namespace emb {

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--:--";
  auto s = int64_t(seconds + 0.5);
  char buf[48];
  int64_t days = s / 86400;
  if (days > 0)
    std::snprintf(buf, sizeof buf, "%lldd %02lld:%02lld:%02lld", (long long)days, (long long)(s % 86400 / 3600),
                  (long long)(s % 3600 / 60), (long long)(s % 60));
  else
    std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld", (long long)(s / 3600), (long long)(s % 3600 / 60),
                  (long long)(s % 60));
  return buf;
}

std::string format_progress(int64_t step, int64_t total_steps, double loss, double lr, const ProgressWindow& w) {
  double per_step = w.steps > 0 ? w.seconds / double(w.steps) : 0;
  double samples_s = w.seconds > 0 ? double(w.samples) / w.seconds : 0;
  double tokens_s = w.seconds > 0 ? double(w.tokens) / w.seconds : 0;
  int width = int(std::to_string(total_steps).size());
  char buf[256];
  std::snprintf(buf, sizeof buf, "step %*lld/%lld | loss %.4f | lr %.2e | %.1f samples/s | %.1fk tok/s | %.3f s/step | ETA %s",
                width, (long long)step, (long long)total_steps, loss, lr, samples_s, tokens_s / 1e3, per_step,
                format_duration(per_step * double(total_steps - step)).c_str());
  return buf;
}

}  // namespace emb
