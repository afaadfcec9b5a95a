#include "app/commands.hpp"
#include "app/dump_backbone.hpp"
#include "app/start_checks.hpp"
#include "comm/agreement.hpp"
#include "comm/host_collectives.hpp"
#include "core/log.hpp"
#include "data/loader.hpp"
#include "kernels/make_ops.hpp"
#include "kernels/ops_buffer.hpp"
#include "model/dump.hpp"
#include "model/model.hpp"
#include "train/trainer.hpp"

namespace emb {

// Every rank computes its micro-batches with the step's global loss denominators; the gradients
// and losses are summed over the ranks; rank 0 writes the header and then every rank in turn
// appends its micro-batches (the dump's directory is shared by the ranks, as the run's outputs
// are). Each phase agrees across the ranks before the next collective, so a failure on one rank
// is the same error on all of them, never a hang.
void dump_step(const World& world, Ops& ops, Model& model, const std::vector<float>& params,
               const std::vector<PackedBatch>& micro_batches, const StepKey& key, const std::string& path,
               DumpBackbone* backbone) {
  std::vector<double> denominators;
  run_agreed(world.comm, [&] {
    for (const PackedBatch& mb : micro_batches) {
      if (mb.n_samples == 0) continue;
      const std::vector<double> counts = model.loss_counts(mb);
      denominators.resize(counts.size(), 0.0);
      for (size_t i = 0; i < counts.size(); ++i) denominators[i] += counts[i];
    }
    if (denominators.empty()) denominators = model.loss_counts(PackedBatch{});
  });
  sum_over_ranks(world.comm, denominators.data(), int(denominators.size()));

  std::vector<DumpMicroBatch> mine;
  std::vector<float> grads;
  double loss = 0;
  run_agreed(world.comm, [&] {
    OpsBuffer<float> device_params(ops, int64_t(params.size())), device_grads(ops, int64_t(params.size()));
    ops.upload(device_params.data(), params.data(), params.size() * sizeof(float));
    ops.zero(device_grads.view());
    for (size_t i = 0; i < micro_batches.size(); ++i) {
      if (micro_batches[i].n_samples == 0) continue;
      PackedBatch mb = micro_batches[i];
      if (backbone) backbone->prepare(mb, int(i));
      model.accumulate(device_params.data(), device_grads.data(), mb, key.step, key.seed, denominators);
      mine.push_back(dumped_micro_batch(model, mb, world.rank));
      if (backbone) backbone->record(mb, mine.back());
    }
    loss = model.take_loss();
    grads.resize(params.size());
    ops.download(grads.data(), device_grads.data(), grads.size() * sizeof(float));
  });
  sum_over_ranks(world.comm, &loss, 1);
  sum_over_ranks(world.comm, grads.data(), int64_t(grads.size()));
  const std::vector<int> counts = all_gather(world.comm, int(mine.size()));

  DumpStep info{loss, denominators, key.seed, key.step, world.size, 0};
  for (int n : counts) info.micro_batches += n;
  run_agreed(world.comm, [&] {
    if (world.rank == 0) begin_dump(path, model, params.data(), grads.data(), info);
  });
  int first = 0;
  for (int r = 0; r < world.size; ++r) {
    run_agreed(world.comm, [&] {
      if (world.rank == r && !mine.empty()) append_dump(path, model, info, first, mine);
    });
    first += counts[size_t(r)];
  }
  run_agreed(world.comm, [&] {
    if (world.rank == 0) finish_dump(path);
  });
  if (world.rank == 0)
    log_info("wrote ", path, ": ", model.config().preset, ", step ", key.step, " on ", world.size, " ", ops.name(),
             " rank(s), ", info.micro_batches, " micro-batch(es), loss ", loss);
}

void write_step_dump(const World& world, const RunConfig& cfg, const std::string& path, const InitFrom* init_from) {
  const ModelConfig& mc = cfg.model;
  if (mc.precision != Precision::fp32)
    throw Error(str(cfg.deck_path, ": --dump compares against fp32 references; set model.precision = fp32"), kExitInput);
  if (mc.fp8) throw Error(str(cfg.deck_path, ": --dump compares against fp32 references; set model.fp8 = off"), kExitInput);
  DataConfig dc = cfg.data;
  if (dc.paths.empty())
    throw Error(str(cfg.deck_path, ": data.paths is empty; --dump writes the dataset's first step"), kExitInput);
  check_backend(cfg);
  dc.prefetch = 0;
  dc.online_prompt = online_inputs_prompt(cfg);
  const StepKey key{cfg.run.seed, 1};

  Loader loader(world.comm, dc, mc);
  std::vector<PackedBatch> micro_batches;
  std::unique_ptr<Ops> ops;
  std::unique_ptr<DumpBackbone> backbone;
  std::unique_ptr<Model> model;
  std::vector<float> params;
  run_agreed(world.comm, [&] {
    micro_batches = loader.next_step();
    // On run.device's backend: parameters and gradients in its memory, the dump's copies on the host.
    ops = make_ops(cfg.backend, world.local_rank);
    if (mc.online_encoders) {  // the step's inputs as training computes them (fp32, as --dump compares)
      OnlineEncoders encoders(*ops, cfg, DType::f32);
      for (PackedBatch& b : micro_batches) encoders.compute(b);
    }
    backbone = std::make_unique<DumpBackbone>(cfg, *ops, key);
    model = make_model(with_tuned_backbone(mc), ops.get());  // train.tune_visual: the vision tensors are the model's
    model->set_context_source(backbone->context_source());
    params.resize(size_t(model->params().total()));
    if (init_from) {
      init_from->read_flat(model->params(), 0, model->params().total(), params.data());
    } else {
      if (cfg.debug.random_params)
        model->params().init_random(params.data(), key.seed);
      else
        model->init_params(params.data(), key.seed);
      backbone->load_tuned_values(model->params(), params);
    }
  });
  dump_step(world, *ops, *model, params, micro_batches, key, path, backbone.get());
}

}  // namespace emb
