// Builds the model of a deck, runs one forward/backward on a synthetic packed batch and
// writes the parity dump (MODEL.md "Dump") that parity_torch.py checks against PyTorch.
//   model_dump_tool DECK OUT.h5 [--samples N] [--self-mask full|block_causal|prefix] [--padded]
#include <cstdio>
#include <string>
#include <vector>

#include "config/deck.hpp"
#include "core/error.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#include "model/dump.hpp"
#include "model/model.hpp"
#include "app/run_config_from_deck.hpp"
#include "model/synthetic_batch.hpp"

namespace {
emb::CpuOps cpu_ops;  // the backend the models compute on
}  // namespace

int main(int argc, char** argv) {
  using namespace emb;
  try {
    EMB_CHECK(argc >= 3, "usage: model_dump_tool DECK OUT.h5 [--samples N] [--self-mask MASK] [--padded]");
    const Deck deck = load_deck(argv[1]);
    ModelConfig cfg = run_config_from_deck(deck).model;
    int n_samples = 3;
    bool packed = true;
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
      } else {
        throw Error(str("model_dump_tool: unknown argument '", arg, "'"), kExitInput);
      }
    }
    const uint64_t seed = uint64_t(deck.get_int("run.seed"));
    const int64_t step = 0;
    std::unique_ptr<Model> model = make_model(cfg, &cpu_ops);
    std::vector<float> params(size_t(model->params().total())), grads(params.size(), 0.0f);
    model->init_params(params.data(), seed);
    std::vector<int64_t> ids;
    for (int i = 0; i < n_samples; ++i) ids.push_back(i);
    const PackedBatch batch = make_synthetic_batch(cfg, ids, packed, seed);
    const std::vector<double> denominators = model->loss_counts(batch);
    const double loss = model->forward_backward(params.data(), grads.data(), batch, step, seed, denominators);
    const DumpStep info{loss, denominators, seed, step, 1, 1};
    begin_dump(argv[2], *model, params.data(), grads.data(), info);
    append_dump(argv[2], *model, info, 0, {dumped_micro_batch(*model, batch, 0)});
    finish_dump(argv[2]);
    std::printf("%s: loss %.6f, %lld tokens, %lld context tokens, %d samples\n", argv[2], loss,
                static_cast<long long>(batch.n_tokens), static_cast<long long>(batch.n_context), batch.n_samples);
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return e.exit_code();
  }
}
