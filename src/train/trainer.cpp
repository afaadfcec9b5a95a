#include "train/trainer.hpp"

#include <csignal>
#include <iomanip>
#include <sstream>

#include "config/deck.hpp"
#include "core/activity.hpp"
#include "core/fs.hpp"
#include "core/log.hpp"
#include "core/timer.hpp"
#include "data/loader.hpp"
#include "model/model.hpp"
#include "model/plan.hpp"
#include "model/presets.hpp"
#include "plan/hardware.hpp"
#include "train/backend.hpp"
#include "train/checkpoint.hpp"
#include "train/checkpoint_dir.hpp"
#include "train/checkpoint_lock.hpp"
#include "train/data_parallel.hpp"
#include "train/fail_run.hpp"
#include "train/optimizer.hpp"
#include "train/progress.hpp"
#include "train/run_dir.hpp"
#include "train/run_report.hpp"
#include "train/train_config.hpp"
#include "train/train_step.hpp"
#include "train/vl_backbone.hpp"
#include "train/watchdog.hpp"

namespace emb {
namespace {

// Slurm pre-emption (SIGTERM, or SIGUSR1 from --signal): finish the current step, write
// the outputs and exit cleanly.
volatile std::sig_atomic_t g_stop_signal = 0;
void on_stop_signal(int sig) { g_stop_signal = sig; }

bool any_rank(MPI_Comm comm, bool flag) {
  int v = flag ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MAX, comm);
  return v != 0;
}

}  // namespace

void validate_training_deck(const Deck& deck) {
  model_config_from_deck(deck);
  data_config_from_deck(deck);
  check_backend(deck);
}

TrainResult train(const World& world, const Deck& deck, Comm& comm) {
  PhaseTimers timers;
  timers.start(Phase::init);
  const ModelConfig mc = model_config_from_deck(deck);
  const TrainConfig tc = train_config_from_deck(deck);
  TrainResult result;
  const CheckpointLock ckpt_lock(world.comm, tc.ckpt_dir, tc.run_id);  // before any output: a refused run leaves none
  result.run_dir = create_run_dir(world.comm, deck);
  mark_failures_in(result.run_dir);
  set_log_file(result.run_dir + "/train.log");
  RunTrace trace(result.run_dir, world.rank);
  timers.set_trace(&trace);

  const std::unique_ptr<Ops> ops = make_backend(deck, world);  // the backend the model computes on
  comm.set_compute_stream(ops->stream());
  timers.set_device_clock(ops->device_clock());
  auto model = make_model(mc, ops.get());
  model->use_graphs(deck.get_string("run.cuda_graphs") == "on");
  const ParamRegistry& reg = model->params();
  ShardLayout layout(reg, tc.shard, world.rank, world.size, tc.bucket_bytes);
  DataParallel dp(layout, comm, *ops, timers, tc.overlap_comm, mc.precision == Precision::bf16);
  Optimizer optimizer = [&] {
    const ActivityLabel allocating("AdamW moments");  // what an out-of-memory error names
    return Optimizer(layout, *ops, tc.adamw, tc.grad_clip);
  }();
  // Checkpoints are written and read through host memory: the owned parameters and moments are
  // staged here on their way to or from the backend.
  const size_t owned_count = size_t(layout.owned_total());
  std::vector<float> host_params, host_exp_avg, host_exp_avg_sq;
  auto host_state = [&] {
    host_params.resize(owned_count), host_exp_avg.resize(owned_count), host_exp_avg_sq.resize(owned_count);
    return OptimizerState{host_exp_avg.data(), host_exp_avg_sq.data()};
  };
  // Checkpoint files are read before the loader exists: HDF5 is not thread-safe, and the
  // loader's prefetch thread reads the dataset through HDF5 from its start.
  CheckpointMeta resumed;
  std::string resume_from;
  const std::vector<std::string> resume_candidates =
      resolve_resume(world.comm, tc.resume, tc.ckpt_dir, tc.run_id);
  if (!resume_candidates.empty()) {
    const OptimizerState moments = host_state();
    resumed = load_first_valid(world.comm, resume_candidates, mc.preset, reg, layout, host_params.data(), moments,
                               &resume_from);
    dp.load_owned_params(host_params.data());
    optimizer.upload_state(moments);
    if (resumed.run_id != tc.run_id)
      log_warn(resume_from, ": a checkpoint of run '", resumed.run_id, "', continued as run '", tc.run_id,
               "' (train.resume names it)");
  } else {  // a fresh start: each rank draws only what it keeps, the same values whatever the rank count
    dp.init_owned_params(reg, tc.seed, mc.init_std);
  }
  DataConfig dc = data_config_from_deck(deck);
  resolve_vl_backbone(deck, dc, world.comm);  // before the loader opens the files, which check it
  Loader loader(world.comm, dc, mc);
  if (!resume_from.empty()) loader.restore(resumed.sampler);
  const int64_t first_step = resumed.step + 1;  // keeps AdamW's bias correction and the LR schedule aligned

  // From here a failure on one rank must end every rank at once (fail_run).
  try {
    log_info("embtrain: ", mc.preset, " (", family_name(mc.family), "), ", reg.total(), " parameters, ", world.size,
             " rank(s) on ", world.n_nodes, " node(s), shard = ", tc.shard_name, ", comm = ",
             comm.name(), ", ", tc.total_steps, " steps of ", tc.global_batch, " samples");
    log_info("outputs: ", result.run_dir, "; checkpoints: ", tc.ckpt_dir, " (run ", tc.run_id, ")");
    if (mc.fp8) log_info("model.fp8: ", model->fp8_linear_count(), " linears on the FP8 path");
    if (!resume_from.empty())
      log_info("resumed from ", resume_from, " (step ", resumed.step, ", saved on ", resumed.world_size_at_save,
               " ranks)");
    Watchdog watchdog(world.rank, world.size, tc.watchdog_s);
    auto save = [&](int64_t step) {
      ScopedPhase phase(timers, Phase::ckpt);
      watchdog.watch("ckpt", step, str("the collective write of a checkpoint into ", tc.ckpt_dir),
                     double(checkpoint_bytes(reg, tc.deck_text.size())) / 20e6);
      loader.quiesce();  // HDF5 is not thread-safe: the prefetch thread must be idle
      CheckpointMeta meta{step, loader.state(), tc.seed, mc.preset, tc.deck_text, world.size, tc.run_id};
      const OptimizerState moments = host_state();
      dp.download_owned_params(host_params.data());
      optimizer.download_state(moments);
      try {
        const std::string path = save_checkpoint(world.comm, tc.ckpt_dir, reg, layout, host_params.data(), moments,
                                                 meta, tc.ckpt_keep, step == tc.ckpt_fail_step);
        log_info("checkpoint: ", path);
      } catch (const CheckpointNotWritten& e) {
        if (tc.ckpt_stop_on_error) throw;
        if (world.rank == 0) log_warn(e.what(), "; training goes on (train.ckpt_on_error = continue)");
      }
    };
    std::signal(SIGTERM, on_stop_signal);
    std::signal(SIGUSR1, on_stop_signal);
    timers.stop(Phase::init);
    timers.end_step(first_step - 1);

    RunTotals totals;
    totals.family = family_name(mc.family);
    totals.preset = mc.preset;
    totals.device = deck.get_string("run.device");
    {
      const PlanReport plan = make_plan(mc, world.size, tc.tokens_per_mb);
      totals.flops_per_sample = plan.flops_fwd + plan.flops_bwd;  // of a typical sample
      totals.peak_flops_per_rank =
          peak_flops_per_rank(load_hardware(tc.hardware), mc.precision == Precision::bf16, world.size);
    }
    std::ostringstream loss_csv;
    // Exact enough to compare runs; skipped = 1: a non-finite step not applied (train.nan_policy = skip).
    loss_csv << std::setprecision(9) << "step,loss,lr,grad_norm,skipped\n";
    ProgressWindow window;

    StepContext ctx{*model, dp, optimizer, timers, world.comm, tc.seed, tc.skip_nonfinite, tc.inject_nan_step,
                    tc.slow_micro_batch_s};
    for (int64_t step = first_step; step <= tc.total_steps; ++step) {
      timers.start(Phase::step);
      std::vector<PackedBatch> micro_batches;
      {
        ScopedPhase wait(timers, Phase::data_wait);
        watchdog.watch("data_wait", step, "the loader's next batch (dataset reads and their collectives)");
        micro_batches = loader.next_step();
      }
      if (world.rank == tc.fail_rank && step == tc.fail_step)
        throw Error(str("debug.fail_rank: injected failure on rank ", world.rank, " at step ", step));
      const double step_lr = tc.lr.at(step);
      watchdog.watch("step", step, "forward/backward and the gradient and parameter collectives");
      const StepResult r = train_step(ctx, micro_batches, step, step_lr);
      timers.stop(Phase::step);

      const double step_seconds = timers.current(Phase::step);
      timers.end_step(step);
      watchdog.step_done(step_seconds, timers.records().back());
      window.samples += int64_t(r.samples);
      window.tokens += int64_t(r.tokens);
      window.seconds += step_seconds;
      window.steps += 1;
      window.loss_sum += r.loss;
      totals.samples += int64_t(r.samples);
      totals.tokens += int64_t(r.tokens);
      totals.computed_tokens += int64_t(r.computed_tokens);
      totals.steps = step;
      totals.final_loss = r.loss;
      loss_csv << step << ',' << r.loss << ',' << step_lr << ',' << r.grad_norm << ',' << (r.updated ? 0 : 1) << '\n';

      watchdog.watch("step_end", step, "the step-end agreement on stop signals (an all-reduce)");
      const bool stop = any_rank(world.comm, g_stop_signal != 0);
      // Pre-emption (SIGTERM/SIGUSR1) checkpoints at this step boundary before exiting.
      if ((tc.ckpt_every > 0 && (step % tc.ckpt_every == 0 || step == tc.total_steps)) || stop) save(step);
      if (step % tc.log_every == 0 || step == tc.total_steps || stop) {
        log_info(format_progress(step, tc.total_steps, window.loss_sum / double(window.steps), step_lr, window));
        window = ProgressWindow{};
      }
      if (stop) {
        log_info("received a stop signal: stopping after step ", step);
        break;
      }
    }

    if (world.rank == 0) write_file_atomic(result.run_dir + "/loss.csv", loss_csv.str());
    totals.device_peak_bytes = ops->device_peak_bytes();
    totals.blas_workspace_bytes = ops->blas_workspace_bytes();
    totals.comm_device_bytes = comm.device_bytes();
    totals.activation_device_bytes = ops->host_memory() ? 0 : model->activation_arena_bytes();
    totals.micro_batches = model->micro_batches();
    totals.graphs = ops->graph_stats();
    if (totals.graphs.captures > 0) {
      const GraphStats& g = totals.graphs;
      log_info("cuda graphs (rank ", world.rank, "): ", totals.micro_batches, " micro-batches in ", g.captures,
               " spans, ", g.replays, " replayed (hit rate ", 100.0 * double(g.replays) / double(g.captures), " %), ",
               g.graphs, " graph(s) of ", g.nodes, " nodes; ", g.replayed_nodes, " launches replayed x ",
               g.launch_seconds * 1e6, " us per launch = ", double(g.replayed_nodes) * g.launch_seconds,
               " s of launch overhead saved");
    }
    watchdog.watch("report", totals.steps, "every rank's timings for the run report");
    write_run_report(world.comm, result.run_dir, totals);
    watchdog.idle();
    result.steps = totals.steps;
    result.final_loss = totals.final_loss;
    mark_failures_in("");
    log_info("done: ", totals.steps, " steps, final loss ", totals.final_loss, "; outputs in ", result.run_dir);
    set_log_file("");
  } catch (const std::exception& e) {
    fail_run(world, e);
  }
  return result;
}

}  // namespace emb
