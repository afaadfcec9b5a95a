#include <mpi.h>

#include "app/commands.hpp"
#include "core/log.hpp"
#include "data/loader.hpp"
#include "kernels/make_ops.hpp"
#include "model/dump.hpp"
#include "model/model.hpp"

namespace emb {

void write_step_dump(const RunConfig& cfg, const std::string& path, const InitFrom* init_from) {
  const ModelConfig& mc = cfg.model;
  if (mc.precision != Precision::fp32)
    throw Error(str(cfg.deck_path, ": --dump compares against fp32 references; set model.precision = fp32"), kExitInput);
  if (mc.fp8) throw Error(str(cfg.deck_path, ": --dump compares against fp32 references; set model.fp8 = off"), kExitInput);
  DataConfig dc = cfg.data;
  if (dc.paths.empty())
    throw Error(str(cfg.deck_path, ": data.paths is empty; --dump writes the dataset's first micro-batch"), kExitInput);
  dc.prefetch = 0;
  Loader loader(MPI_COMM_WORLD, dc, mc);
  const std::vector<PackedBatch> micro_batches = loader.next_step();
  EMB_CHECK(!micro_batches.empty() && micro_batches.front().n_samples > 0, cfg.deck_path,
            ": the first step of the dataset has no samples");
  const PackedBatch& batch = micro_batches.front();

  // On run.device's backend: parameters and gradients in its memory, the dump's copies on the host.
  const std::unique_ptr<Ops> ops = make_ops(cfg.backend, 0);
  auto model = make_model(mc, ops.get());
  const int64_t n = model->params().total();
  const size_t bytes = size_t(n) * sizeof(float);
  std::vector<float> params(static_cast<size_t>(n)), grads(static_cast<size_t>(n));
  const uint64_t seed = cfg.run.seed;
  if (init_from)
    init_from->read_flat(model->params(), 0, n, params.data());
  else
    model->init_params(params.data(), seed);
  OpsBuffer<float> backend_params(*ops, n), backend_grads(*ops, n);
  ops->upload(backend_params.data(), params.data(), bytes);
  ops->zero(backend_grads.view());
  const double loss = model->forward_backward(backend_params.data(), backend_grads.data(), batch, 1, seed,
                                              model->loss_counts(batch));
  ops->download(grads.data(), backend_grads.data(), bytes);
  write_dump(path, *model, params.data(), grads.data(), batch, loss);
  log_info("wrote ", path, ": ", mc.preset, ", ", batch.n_samples, " samples, ", batch.n_tokens, " tokens, loss ",
           loss);
}

}  // namespace emb
