#include "model/param_registry.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/rng.hpp"

namespace emb {

void ParamRegistry::begin_unit(const std::string& name) { units_.push_back({name, total_, 0}); }

int ParamRegistry::add(const std::string& name, std::vector<int64_t> shape, ParamInit init, bool decay) {
  EMB_ASSERT(!units_.empty() && index_.count(name) == 0);
  ParamInfo p;
  p.name = name;
  p.numel = 1;
  for (int64_t d : shape) p.numel *= d;
  p.shape = std::move(shape);
  p.offset = total_;
  p.init = init;
  p.decay = decay;
  p.unit = int(units_.size()) - 1;
  p.draw_key = init == ParamInit::loaded ? 0 : drawn_++;
  total_ += p.numel;
  units_.back().count += p.numel;
  index_[name] = int(params_.size());
  params_.push_back(std::move(p));
  return int(params_.size()) - 1;
}

LinearRef ParamRegistry::add_linear(const std::string& name, int in, int out) {
  LinearRef l;
  l.in = in, l.out = out;
  l.weight = add(name + ".weight", {in, out}, ParamInit::normal, true);
  l.bias = add(name + ".bias", {out}, ParamInit::zeros, false);
  return l;
}

LinearRef ParamRegistry::add_linear_emb(const std::string& name, int n_emb, int in, int out) {
  LinearRef l;
  l.in = in, l.out = out, l.n_emb = n_emb;
  l.weight = add(name + ".weight", {n_emb, in, out}, ParamInit::normal, true);
  l.bias = add(name + ".bias", {n_emb, out}, ParamInit::zeros, false);
  return l;
}

NormRef ParamRegistry::add_layernorm(const std::string& name, int dim) {
  NormRef n;
  n.weight = add(name + ".weight", {dim}, ParamInit::ones, false);
  n.bias = add(name + ".bias", {dim}, ParamInit::zeros, false);
  return n;
}

NormRef ParamRegistry::add_rmsnorm(const std::string& name, int dim) {
  NormRef n;
  n.weight = add(name + ".weight", {dim}, ParamInit::ones, false);
  return n;
}

const ParamInfo& ParamRegistry::get(const std::string& name) const {
  auto it = index_.find(name);
  if (it == index_.end()) throw Error(str("no parameter named '", name, "'"));
  return params_[size_t(it->second)];
}

int64_t ParamRegistry::max_unit_count() const {
  int64_t m = 0;
  for (const UnitRange& u : units_) m = std::max(m, u.count);
  return m;
}

void ParamRegistry::init(float* params, uint64_t seed, double std) const { init_range(params, 0, total_, seed, std); }

void ParamRegistry::init_range(float* out, int64_t begin, int64_t end, uint64_t seed, double std) const {
  EMB_CHECK(0 <= begin && begin <= end && end <= total_, "parameter init range [", begin, ", ", end,
            ") is outside the flat buffer of ", total_, " elements");
  // Tensors are stored in offset order: start at the first one ending after `begin`.
  auto first = std::upper_bound(params_.begin(), params_.end(), begin,
                                [](int64_t flat, const ParamInfo& p) { return flat < p.offset + p.numel; });
  for (auto it = first; it != params_.end() && it->offset < end; ++it) {
    const ParamInfo& p = *it;
    const int64_t lo = std::max(begin, p.offset) - p.offset, hi = std::min(end, p.offset + p.numel) - p.offset;
    float* x = out + (p.offset + lo - begin);
    if (p.init == ParamInit::normal) {
      // Draw i of a tensor depends on (seed, its draw key, i) only, never on the range.
      CounterRng rng(seed, RngStream::init, p.draw_key);
      for (int64_t i = lo; i < hi; ++i) x[i - lo] = float(std * rng.normal(uint64_t(i)));
    } else {
      std::fill(x, x + (hi - lo), p.init == ParamInit::ones ? 1.0f : 0.0f);
    }
  }
}

void ParamRegistry::init_random(float* params, uint64_t seed) const {
  for (size_t t = 0; t < params_.size(); ++t) {
    const ParamInfo& p = params_[t];
    double mean = 0, std = 0.5;  // raw tensors: normal init without weight decay
    if (p.init == ParamInit::ones) {
      mean = 1, std = 0.1;
    } else if (p.init == ParamInit::zeros) {
      std = 0.05;
    } else if (p.decay) {  // a linear's W [in, out] or [E, in, out]
      std = 1.0 / std::sqrt(double(p.shape[p.shape.size() - 2]));
    }
    const CounterRng rng(seed, RngStream::init, p.draw_key, 1);
    for (int64_t i = 0; i < p.numel; ++i) params[p.offset + i] = float(mean + std * rng.normal(uint64_t(i)));
  }
}

}  // namespace emb
