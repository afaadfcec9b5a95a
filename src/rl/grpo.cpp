#include "rl/grpo.hpp"

#include <cmath>

#include "core/error.hpp"

namespace emb {

Advantage advantage_from_name(const std::string& name) {
  if (name == "gae") return Advantage::gae;
  EMB_CHECK(name == "grpo", "rl.advantage: '", name, "' is not one of gae, grpo");
  return Advantage::grpo;
}

std::vector<float> group_advantages(const std::vector<double>& returns) {
  EMB_CHECK(!returns.empty(), "group_advantages: an empty group");
  double mean = 0, var = 0;
  for (double r : returns) mean += r;
  mean /= double(returns.size());
  for (double r : returns) var += (r - mean) * (r - mean);
  const double inv_std = 1.0 / (std::sqrt(var / double(returns.size())) + 1e-8);
  std::vector<float> a;
  for (double r : returns) a.push_back(float((r - mean) * inv_std));
  return a;
}

}  // namespace emb
