#include <mpi.h>

#include "comm/agreement.hpp"
#include "config/deck.hpp"
#include "core/log.hpp"
#include "data/loader.hpp"
#include "kernels/ops_buffer.hpp"
#include "model/dump.hpp"
#include "model/model.hpp"
#include "model/presets.hpp"
#include "train/backend.hpp"
#include "train/commands.hpp"

namespace emb {

// Every rank computes its micro-batches of step 1 with the step's global loss denominators; the
// gradients and losses are summed over the ranks; rank 0 writes the header and then every rank
// in turn appends its micro-batches (the dump's directory is shared by the ranks, as the run's
// outputs are). Each phase agrees across the ranks before the next collective, so a failure on
// one rank is the same error on all of them, never a hang.
void write_step_dump(const World& world, const Deck& deck, const std::string& path) {
  const ModelConfig mc = model_config_from_deck(deck);
  if (mc.precision != Precision::fp32)
    throw Error(str(deck.path(), ": --dump compares against fp32 references; set model.precision = fp32"), kExitInput);
  if (mc.fp8) throw Error(str(deck.path(), ": --dump compares against fp32 references; set model.fp8 = off"), kExitInput);
  DataConfig dc = data_config_from_deck(deck);
  if (dc.paths.empty())
    throw Error(str(deck.path(), ": data.paths is empty; --dump writes the dataset's first step"), kExitInput);
  check_backend(deck);
  dc.prefetch = 0;
  const uint64_t seed = uint64_t(deck.get_int("run.seed"));
  const int64_t step = 1;

  Loader loader(world.comm, dc, mc);
  std::vector<PackedBatch> micro_batches;
  std::unique_ptr<Ops> ops;
  std::unique_ptr<Model> model;
  std::vector<float> params, grads;
  std::vector<double> denominators;
  run_agreed(world.comm, [&] {
    micro_batches = loader.next_step();
    ops = make_backend(deck, world);
    model = make_model(mc, ops.get());
    params.resize(size_t(model->params().total()));
    if (deck.get_string("debug.random_params") == "on")
      model->params().init_random(params.data(), seed);
    else
      model->init_params(params.data(), seed);
    for (const PackedBatch& mb : micro_batches) {
      if (mb.n_samples == 0) continue;
      const std::vector<double> counts = model->loss_counts(mb);
      denominators.resize(counts.size(), 0.0);
      for (size_t i = 0; i < counts.size(); ++i) denominators[i] += counts[i];
    }
    if (denominators.empty()) denominators = model->loss_counts(PackedBatch{});
  });
  MPI_Allreduce(MPI_IN_PLACE, denominators.data(), int(denominators.size()), MPI_DOUBLE, MPI_SUM, world.comm);

  std::vector<DumpMicroBatch> mine;
  double loss = 0;
  run_agreed(world.comm, [&] {
    OpsBuffer<float> device_params(*ops, int64_t(params.size())), device_grads(*ops, int64_t(params.size()));
    ops->upload(device_params.data(), params.data(), params.size() * sizeof(float));
    ops->zero(device_grads.view());
    for (const PackedBatch& mb : micro_batches) {
      if (mb.n_samples == 0) continue;
      model->accumulate(device_params.data(), device_grads.data(), mb, step, seed, denominators);
      mine.push_back(dumped_micro_batch(*model, mb, world.rank));
    }
    loss = model->take_loss();
    grads.resize(params.size());
    ops->download(grads.data(), device_grads.data(), grads.size() * sizeof(float));
  });
  MPI_Allreduce(MPI_IN_PLACE, &loss, 1, MPI_DOUBLE, MPI_SUM, world.comm);
  MPI_Allreduce(MPI_IN_PLACE, grads.data(), int(grads.size()), MPI_FLOAT, MPI_SUM, world.comm);
  std::vector<int> counts(size_t(world.size));
  const int n_mine = int(mine.size());
  MPI_Allgather(&n_mine, 1, MPI_INT, counts.data(), 1, MPI_INT, world.comm);

  DumpStep info{loss, denominators, seed, step, world.size, 0};
  for (int n : counts) info.micro_batches += n;
  run_agreed(world.comm, [&] {
    if (world.rank == 0) begin_dump(path, *model, params.data(), grads.data(), info);
  });
  int first = 0;
  for (int r = 0; r < world.size; ++r) {
    run_agreed(world.comm, [&] {
      if (world.rank == r && !mine.empty()) append_dump(path, *model, info, first, mine);
    });
    first += counts[size_t(r)];
  }
  run_agreed(world.comm, [&] {
    if (world.rank == 0) finish_dump(path);
  });
  if (world.rank == 0)
    log_info("wrote ", path, ": ", mc.preset, ", step ", step, " on ", world.size, " ", ops->name(), " rank(s), ",
             info.micro_batches, " micro-batch(es), loss ", loss);
}

}  // namespace emb
