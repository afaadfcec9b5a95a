// Builds the model of a deck, runs one forward/backward on a synthetic packed batch and
// writes the parity dump (MODEL.md "Dump") that parity_torch.py checks against PyTorch (one
// micro-batch) and tests/upstream/dreamzero_dump_parity.py against upstream (any number).
//   model_dump_tool DECK OUT.h5 [--samples N] [--self-mask full|block_causal|prefix] [--padded]
//                   [--micro-batches K] [--device cpu|cuda] [--random-params]
// --micro-batches splits the samples into K micro-batches of one step (the step's loss and
// gradients summed over them); --device cuda runs on the CUDA backend (the emulation in CI);
// --random-params draws the parameters at a trained network's scales (debug.random_params).
#include <cstdio>
#include <string>
#include <vector>

#include "config/deck.hpp"
#include "core/error.hpp"
#include "kernels/make_ops.hpp"
#include "kernels/ops_buffer.hpp"
#include "model/dump.hpp"
#include "model/model.hpp"
#include "app/run_config_from_deck.hpp"
#include "model/synthetic_batch.hpp"

int main(int argc, char** argv) {
  using namespace emb;
  try {
    EMB_CHECK(argc >= 3, "usage: model_dump_tool DECK OUT.h5 [--samples N] [--self-mask MASK] [--padded]");
    const Deck deck = load_deck(argv[1]);
    ModelConfig cfg = run_config_from_deck(deck).model;
    int n_samples = 3, n_micro = 1;
    bool packed = true, random_params = false;
    BackendConfig backend;
    for (int i = 3; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--samples" && i + 1 < argc) {
        n_samples = std::stoi(argv[++i]);
      } else if (arg == "--self-mask" && i + 1 < argc) {
        const std::string m = argv[++i];
        EMB_CHECK(m == "full" || m == "block_causal" || m == "prefix", "--self-mask: unknown mask '", m, "'");
        cfg.self_mask = m == "full" ? SelfMask::full : m == "prefix" ? SelfMask::prefix : SelfMask::block_causal;
      } else if (arg == "--padded") {
        packed = false;
      } else if (arg == "--random-params") {
        random_params = true;
      } else if (arg == "--micro-batches" && i + 1 < argc) {
        n_micro = std::stoi(argv[++i]);
      } else if (arg == "--device" && i + 1 < argc) {
        const std::string d = argv[++i];
        EMB_CHECK(d == "cpu" || d == "cuda", "--device: unknown device '", d, "'");
        backend.device = d == "cuda" ? Device::cuda : Device::cpu;
      } else {
        throw Error(str("model_dump_tool: unknown argument '", arg, "'"), kExitInput);
      }
    }
    EMB_CHECK(n_micro >= 1 && n_micro <= n_samples, "--micro-batches must lie in 1..--samples");
    const uint64_t seed = uint64_t(deck.get_int("run.seed"));
    const int64_t step = 0;
    const std::unique_ptr<Ops> ops = make_ops(backend, 0);
    std::unique_ptr<Model> model = make_model(cfg, ops.get());
    std::vector<float> params(size_t(model->params().total())), grads(params.size(), 0.0f);
    if (random_params)
      model->params().init_random(params.data(), seed);
    else
      model->init_params(params.data(), seed);
    std::vector<PackedBatch> batches;  // sample i in micro-batch i % n_micro
    std::vector<double> denominators;
    for (int m = 0; m < n_micro; ++m) {
      std::vector<int64_t> ids;
      for (int i = m; i < n_samples; i += n_micro) ids.push_back(i);
      batches.push_back(make_synthetic_batch(cfg, ids, packed, seed));
      const std::vector<double> counts = model->loss_counts(batches.back());
      denominators.resize(counts.size(), 0.0);
      for (size_t k = 0; k < counts.size(); ++k) denominators[k] += counts[k];
    }
    OpsBuffer<float> device_params(*ops, int64_t(params.size())), device_grads(*ops, int64_t(params.size()));
    ops->upload(device_params.data(), params.data(), params.size() * sizeof(float));
    ops->zero(device_grads.view());
    std::vector<DumpMicroBatch> dumped;
    for (const PackedBatch& batch : batches) {
      model->accumulate(device_params.data(), device_grads.data(), batch, step, seed, denominators);
      dumped.push_back(dumped_micro_batch(*model, batch, 0));
    }
    const double loss = model->take_loss();
    ops->download(grads.data(), device_grads.data(), grads.size() * sizeof(float));
    const DumpStep info{loss, denominators, seed, step, 1, n_micro};
    begin_dump(argv[2], *model, params.data(), grads.data(), info);
    append_dump(argv[2], *model, info, 0, dumped);
    finish_dump(argv[2]);
    std::printf("%s: loss %.6f on %s, %d samples in %d micro-batch(es)\n", argv[2], loss, ops->name(), n_samples,
                n_micro);
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return e.exit_code();
  }
}
