#include "rl/value_head.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "rl/rng_streams.hpp"

namespace emb {

namespace {
constexpr double kBeta1 = 0.9, kBeta2 = 0.999, kEps = 1e-8;
}

ValueHead::ValueHead(int input_dim, std::vector<int> hidden, uint64_t seed) {
  EMB_CHECK(input_dim >= 1, "value head: input width ", input_dim, " must be at least 1");
  widths_.push_back(input_dim);
  for (int h : hidden) {
    EMB_CHECK(h >= 1, "value head: hidden width ", h, " must be at least 1");
    widths_.push_back(h);
  }
  widths_.push_back(1);
  int64_t total = 0;
  for (int l = 0; l < layers(); ++l) {
    weight_offset_.push_back(total);
    total += int64_t(widths_[size_t(l)]) * widths_[size_t(l) + 1];
    bias_offset_.push_back(total);
    total += widths_[size_t(l) + 1];
  }
  params_.assign(size_t(total), 0.f), grads_ = m_ = v_ = params_;
  for (int l = 0; l < layers(); ++l) {
    const CounterRng rng(seed, rl_stream::value_init, uint64_t(l));
    const double bound = 1.0 / std::sqrt(double(widths_[size_t(l)]));
    for (int64_t i = 0; i < bias_offset_[size_t(l)] - weight_offset_[size_t(l)]; ++i)
      params_[size_t(weight_offset_[size_t(l)] + i)] = float(bound * (2 * rng.uniform(uint64_t(i)) - 1));
  }
  acts_.resize(size_t(layers()));
}

void ValueHead::forward(const float* x, int n, float* v) {
  EMB_CHECK(n >= 0, "value head: forward of ", n, " rows");
  batch_ = n;
  acts_[0].assign(x, x + int64_t(n) * input_dim());
  for (int l = 0; l < layers(); ++l) {
    const int in = widths_[size_t(l)], out = widths_[size_t(l) + 1];
    const float* w = params_.data() + weight_offset_[size_t(l)];
    const float* b = params_.data() + bias_offset_[size_t(l)];
    const bool last = l + 1 == layers();
    float* y = v;
    if (!last) {
      acts_[size_t(l) + 1].resize(size_t(n) * size_t(out));
      y = acts_[size_t(l) + 1].data();
    }
    for (int r = 0; r < n; ++r) {
      const float* a = acts_[size_t(l)].data() + int64_t(r) * in;
      for (int o = 0; o < out; ++o) {
        // A double sum: the widths are small, and the gradient check then sees only the
        // rounding of stored values, not of long fp32 sums.
        double s = b[o];
        for (int i = 0; i < in; ++i) s += double(a[i]) * w[int64_t(o) * in + i];
        y[int64_t(r) * out + o] = last ? float(s) : float(std::tanh(s));
      }
    }
  }
}

void ValueHead::backward(const float* dv, int n) {
  EMB_CHECK(n == batch_, "value head: backward of ", n, " rows after a forward of ", batch_);
  delta_.assign(dv, dv + n);
  for (int l = layers() - 1; l >= 0; --l) {
    const int in = widths_[size_t(l)], out = widths_[size_t(l) + 1];
    const float* w = params_.data() + weight_offset_[size_t(l)];
    float* gw = grads_.data() + weight_offset_[size_t(l)];
    float* gb = grads_.data() + bias_offset_[size_t(l)];
    const std::vector<float>& a = acts_[size_t(l)];
    if (l > 0) delta_prev_.assign(size_t(n) * size_t(in), 0.f);
    for (int r = 0; r < n; ++r) {
      const float* ar = a.data() + int64_t(r) * in;
      for (int o = 0; o < out; ++o) {
        const float d = delta_[size_t(r) * size_t(out) + size_t(o)];
        gb[o] += d;
        float* gwo = gw + int64_t(o) * in;
        for (int i = 0; i < in; ++i) gwo[i] += d * ar[i];
        if (l > 0) {
          const float* wo = w + int64_t(o) * in;
          float* dp = delta_prev_.data() + int64_t(r) * in;
          for (int i = 0; i < in; ++i) dp[i] += d * wo[i];
        }
      }
    }
    if (l == 0) break;
    // Through the tanh that produced this layer's input: d/dz tanh(z) = 1 − tanh².
    for (size_t k = 0; k < delta_prev_.size(); ++k) delta_prev_[k] *= 1.f - a[k] * a[k];
    delta_.swap(delta_prev_);
  }
}

void ValueHead::zero_grads() { std::fill(grads_.begin(), grads_.end(), 0.f); }

void ValueHead::adamw_step(double lr, double weight_decay, int64_t step) {
  EMB_CHECK(step >= 1, "value head: AdamW step ", step, " must be at least 1");
  const double bc1 = 1 - std::pow(kBeta1, double(step)), bc2 = 1 - std::pow(kBeta2, double(step));
  for (int l = 0; l < layers(); ++l) {
    const int64_t begin = weight_offset_[size_t(l)], bias = bias_offset_[size_t(l)];
    const int64_t end = bias + widths_[size_t(l) + 1];
    for (int64_t k = begin; k < end; ++k) {
      const double g = grads_[size_t(k)];
      const double m = kBeta1 * m_[size_t(k)] + (1 - kBeta1) * g;
      const double v = kBeta2 * v_[size_t(k)] + (1 - kBeta2) * g * g;
      m_[size_t(k)] = float(m), v_[size_t(k)] = float(v);
      const double decay = k < bias ? weight_decay : 0.0;
      const double p = params_[size_t(k)];
      params_[size_t(k)] = float(p - lr * ((m / bc1) / (std::sqrt(v / bc2) + kEps) + decay * p));
    }
  }
}

double ValueHead::mse_loss_grad(const float* v, const float* target, int n, float* dv) {
  EMB_CHECK(n >= 1, "value head: loss of ", n, " rows");
  double loss = 0;
  for (int r = 0; r < n; ++r) {
    const double e = double(v[r]) - target[r];
    loss += e * e;
    dv[r] = float(e / n);
  }
  return 0.5 * loss / n;
}

}  // namespace emb
