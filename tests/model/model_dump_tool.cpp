// Builds the model of a deck, runs one forward/backward on synthetic packed batches and writes
// the parity dump (MODEL.md "Dump") that parity_torch.py checks against PyTorch (one
// micro-batch) and tests/upstream/dreamzero_dump_parity.py against upstream (any number).
//   [mpirun -np R] model_dump_tool DECK OUT.h5 [--samples N] [--self-mask full|block_causal|prefix]
//                  [--padded] [--micro-batches K] [--device cpu|cuda] [--random-params]
// --micro-batches splits the samples into K micro-batches of one step (sample i in micro-batch
// i % K; the step's loss and gradients summed over them), micro-batch m on rank m % R, through the
// --dump path (app/commands.hpp dump_step: global denominators, sums over the ranks); --device
// cuda runs on the CUDA backend (the emulation in CI); --random-params draws the parameters at a
// trained network's scales (debug.random_params).
#include <cstdio>
#include <string>
#include <vector>

#include "app/commands.hpp"
#include "app/run_config_from_deck.hpp"
#include "comm/agreement.hpp"
#include "config/deck.hpp"
#include "core/error.hpp"
#include "kernels/make_ops.hpp"
#include "model/model.hpp"
#include "model/synthetic_batch.hpp"

namespace {

using namespace emb;

struct ToolOptions {
  ModelConfig cfg;
  uint64_t seed = 0;
  int n_samples = 3, n_micro = 1;
  bool packed = true, random_params = false;
  BackendConfig backend;
};

ToolOptions parse(int argc, char** argv) {
  EMB_CHECK(argc >= 3, "usage: model_dump_tool DECK OUT.h5 [--samples N] [--self-mask MASK] [--padded]");
  const Deck deck = load_deck(argv[1]);
  ToolOptions o;
  o.cfg = run_config_from_deck(deck).model;
  o.seed = uint64_t(deck.get_int("run.seed"));
  for (int i = 3; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--samples" && i + 1 < argc) {
      o.n_samples = std::stoi(argv[++i]);
    } else if (arg == "--self-mask" && i + 1 < argc) {
      const std::string m = argv[++i];
      EMB_CHECK(m == "full" || m == "block_causal" || m == "prefix", "--self-mask: unknown mask '", m, "'");
      o.cfg.self_mask = m == "full" ? SelfMask::full : m == "prefix" ? SelfMask::prefix : SelfMask::block_causal;
    } else if (arg == "--padded") {
      o.packed = false;
    } else if (arg == "--random-params") {
      o.random_params = true;
    } else if (arg == "--micro-batches" && i + 1 < argc) {
      o.n_micro = std::stoi(argv[++i]);
    } else if (arg == "--device" && i + 1 < argc) {
      const std::string d = argv[++i];
      EMB_CHECK(d == "cpu" || d == "cuda", "--device: unknown device '", d, "'");
      o.backend.device = d == "cuda" ? Device::cuda : Device::cpu;
    } else {
      throw Error(str("model_dump_tool: unknown argument '", arg, "'"), kExitInput);
    }
  }
  EMB_CHECK(o.n_micro >= 1 && o.n_micro <= o.n_samples, "--micro-batches must lie in 1..--samples");
  return o;
}

int run(const World& world, int argc, char** argv) {
  try {
    ToolOptions o;
    std::unique_ptr<Ops> ops;
    std::unique_ptr<Model> model;
    std::vector<float> params;
    std::vector<PackedBatch> mine;
    run_agreed(world.comm, [&] {
      o = parse(argc, argv);
      ops = make_ops(o.backend, world.local_rank);
      model = make_model(o.cfg, ops.get());
      params.resize(size_t(model->params().total()));
      if (o.random_params)
        model->params().init_random(params.data(), o.seed);
      else
        model->init_params(params.data(), o.seed);
      for (int m = world.rank; m < o.n_micro; m += world.size) {
        std::vector<int64_t> ids;
        for (int i = m; i < o.n_samples; i += o.n_micro) ids.push_back(i);
        mine.push_back(make_synthetic_batch(o.cfg, ids, o.packed, o.seed));
      }
    });
    dump_step(world, *ops, *model, params, mine, StepKey{o.seed, 0}, argv[2]);
    if (world.rank == 0)
      std::printf("%s: %s, %d samples in %d micro-batch(es) on %d rank(s)\n", argv[2], ops->name(), o.n_samples,
                  o.n_micro, world.size);
    return 0;
  } catch (const Error& e) {
    if (world.rank == 0) std::fprintf(stderr, "model_dump_tool: error: %s\n", e.what());
    return e.exit_code();
  }
}

}  // namespace

int main(int argc, char** argv) {
  return emb::run_in_world("model_dump_tool", &argc, &argv,
                           [&](const emb::World& world) { return run(world, argc, argv); });
}
