// Shared helpers of the model tests: a tiny model with fresh parameters and one step's loss
// and gradients on a synthetic batch.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_ops.hpp"
#include "model/model.hpp"
#include "model/presets.hpp"
#include "model/synthetic_batch.hpp"

namespace emb::test {

constexpr uint64_t kSeed = 7;
constexpr int64_t kStep = 3;

inline CpuOps cpu_ops;  // the backend the test models compute on

struct TinyModel {
  std::unique_ptr<Model> model;
  std::vector<float> params;

  explicit TinyModel(const ModelConfig& cfg)
      : model(make_model(cfg, &cpu_ops)), params(size_t(model->params().total())) {
    model->init_params(params.data(), kSeed);
  }
  explicit TinyModel(const std::string& preset) : TinyModel(preset_config(preset)) {}

  // Loss of `batch` with the given global denominators; gradients accumulate into grads.
  double step(const PackedBatch& batch, const std::vector<double>& den, std::vector<float>& grads) {
    grads.resize(params.size());
    return model->forward_backward(params.data(), grads.data(), batch, kStep, kSeed, den);
  }
  // The training loss of `batch` (dropout on, as the gradients see it: what finite differences
  // of them differentiate).
  double loss(const PackedBatch& batch) {
    std::vector<float> scratch(params.size(), 0.0f);
    return step(batch, model->loss_counts(batch), scratch);
  }
  // The loss of a forward alone (evaluation: no dropout).
  double eval_loss(const PackedBatch& batch) {
    return model->forward_backward(params.data(), nullptr, batch, kStep, kSeed, model->loss_counts(batch));
  }
  // Fresh gradients of one micro-batch with its own denominators.
  std::vector<float> grads(const PackedBatch& batch, double* loss_out = nullptr) {
    std::vector<float> g(params.size(), 0.0f);
    double l = step(batch, model->loss_counts(batch), g);
    if (loss_out) *loss_out = l;
    return g;
  }
};

inline std::vector<int64_t> sample_ids(int n, int64_t first = 0) {
  std::vector<int64_t> ids;
  for (int i = 0; i < n; ++i) ids.push_back(first + i);
  return ids;
}

}  // namespace emb::test
