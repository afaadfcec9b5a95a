#include "model/wan_schedule.hpp"

#include <algorithm>
#include <cmath>

namespace emb {

WanSchedule::WanSchedule(double shift) : sigma(kWanTrainTimesteps), weight(kWanTrainTimesteps) {
  std::vector<double> y(kWanTrainTimesteps);
  for (int i = 0; i < kWanTrainTimesteps; ++i) {
    const double s = 1.0 - double(i) / kWanTrainTimesteps;
    sigma[size_t(i)] = shift * s / (1.0 + (shift - 1.0) * s);
    const double t = 1000.0 * sigma[size_t(i)];
    y[size_t(i)] = std::exp(-2.0 * ((t - 500.0) / 1000.0) * ((t - 500.0) / 1000.0));
  }
  const double y_min = *std::min_element(y.begin(), y.end());
  double sum = 0;
  for (double v : y) sum += v - y_min;
  for (int i = 0; i < kWanTrainTimesteps; ++i) weight[size_t(i)] = (y[size_t(i)] - y_min) * kWanTrainTimesteps / sum;
}

}  // namespace emb
