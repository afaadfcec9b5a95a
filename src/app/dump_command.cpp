#include <mpi.h>

#include "config/deck.hpp"
#include "core/log.hpp"
#include "data/loader.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#include "model/dump.hpp"
#include "model/model.hpp"
#include "model/presets.hpp"
#include "app/commands.hpp"

namespace emb {

void write_step_dump(const Deck& deck, const std::string& path) {
  const ModelConfig mc = model_config_from_deck(deck);
  if (mc.precision != Precision::fp32)
    throw Error(str(deck.path(), ": --dump compares against fp32 references; set model.precision = fp32"), kExitInput);
  if (mc.fp8) throw Error(str(deck.path(), ": --dump compares against fp32 references; set model.fp8 = off"), kExitInput);
  DataConfig dc = data_config_from_deck(deck);
  if (dc.paths.empty())
    throw Error(str(deck.path(), ": data.paths is empty; --dump writes the dataset's first micro-batch"), kExitInput);
  dc.prefetch = 0;
  Loader loader(MPI_COMM_WORLD, dc, mc);
  const std::vector<PackedBatch> micro_batches = loader.next_step();
  EMB_CHECK(!micro_batches.empty() && micro_batches.front().n_samples > 0, deck.path(),
            ": the first step of the dataset has no samples");
  const PackedBatch& batch = micro_batches.front();

  CpuOps cpu_ops;
  auto model = make_model(mc, &cpu_ops);
  std::vector<float> params(size_t(model->params().total())), grads(params.size(), 0.0f);
  const auto seed = uint64_t(deck.get_int("run.seed"));
  model->init_params(params.data(), seed);
  const double loss =
      model->forward_backward(params.data(), grads.data(), batch, 1, seed, model->loss_counts(batch));
  write_dump(path, *model, params.data(), grads.data(), batch, loss);
  log_info("wrote ", path, ": ", mc.preset, ", ", batch.n_samples, " samples, ", batch.n_tokens, " tokens, loss ",
           loss);
}

}  // namespace emb
