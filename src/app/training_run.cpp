#include "app/training_run.hpp"

#include <csignal>
#include <iomanip>
#include <sstream>

#include "app/data_read_locks.hpp"
#include "app/fail_run.hpp"
#include "app/progress.hpp"
#include "app/run_dir.hpp"
#include "app/run_report.hpp"
#include "app/watchdog.hpp"
#include "checkpoint/checkpoint_lock.hpp"
#include "core/fs.hpp"
#include "core/injected_failure.hpp"
#include "core/log.hpp"
#include "core/stop_request.hpp"
#include "data/packed_dataset.hpp"
#include "plan/hardware.hpp"
#include "plan/model_cost.hpp"
#include "train/op_profile.hpp"
#include "train/trainer.hpp"

namespace emb {
namespace {

// What the steps add up to: loss.csv, the progress window and the report's totals.
struct StepRecord {
  std::ostringstream loss_csv;
  ProgressWindow window;
  RunTotals totals;

  StepRecord(const RunConfig& cfg, int ranks) {
    // Exact enough to compare runs; skipped = 1: a non-finite step not applied (train.nan_policy = skip).
    loss_csv << std::setprecision(9) << "step,loss,lr,grad_norm,skipped\n";
    totals.family = family_name(cfg.model.family);
    totals.preset = cfg.model.preset;
    totals.device = device_name(cfg.backend.device);
    const PlanReport plan = make_plan(cfg.model, ranks, cfg.data.tokens_per_mb);
    totals.flops_per_sample = plan.flops_fwd + plan.flops_bwd;  // of a typical sample
    totals.peak_flops_per_rank =
        peak_flops_per_rank(load_hardware(cfg.plan.hardware), cfg.model.precision == Precision::bf16, ranks);
  }
  void add(int64_t step, const StepResult& r, double lr, double seconds) {
    window.samples += int64_t(r.samples), window.tokens += int64_t(r.tokens);
    window.seconds += seconds, window.steps += 1, window.loss_sum += r.loss;
    totals.samples += int64_t(r.samples), totals.tokens += int64_t(r.tokens);
    totals.computed_tokens += int64_t(r.computed_tokens);
    totals.steps = step, totals.final_loss = r.loss;
    loss_csv << step << ',' << r.loss << ',' << lr << ',' << r.grad_norm << ',' << (r.updated ? 0 : 1) << '\n';
  }
};

// The run's first lines: what trains where, and where its outputs go.
void log_start(const World& world, const RunConfig& cfg, Trainer& trainer, const Comm& comm, const std::string& dir) {
  const ModelConfig& mc = cfg.model;
  log_info("embtrain: ", mc.preset, " (", family_name(mc.family), "), ", trainer.params().total(), " parameters, ",
           world.size, " rank(s) on ", world.n_nodes, " node(s), shard = ", shard_mode_name(cfg.train.shard),
           ", comm = ", comm.name(), ", ", cfg.train.steps, " steps of ", cfg.train.global_batch, " samples");
  log_info("outputs: ", dir, "; checkpoints: ", cfg.train.ckpt_dir, " (run ", cfg.run_id, ")");
  if (mc.fp8) log_info("model.fp8: ", trainer.model().fp8_linear_count(), " linears on the FP8 path");
  int64_t frozen = 0;
  for (int i = 0; i < trainer.params().size(); ++i)
    if (!trainer.model().frozen().empty() && trainer.model().frozen()[size_t(i)]) frozen += trainer.params()[i].numel;
  if (frozen > 0)
    log_info("freezing: ", frozen, " of ", trainer.params().total(), " parameters frozen (train.tune_*): no gradient, "
             "no AdamW moments; rank 0 holds ", trainer.optimizer_state_bytes(), " bytes of moments, checkpoints ",
             trainer.checkpoint_size(), " bytes at most");
  if (!trainer.resumed_from().empty())
    log_info("resumed from ", trainer.resumed_from(), " (step ", trainer.resumed().step, ", saved on ",
             trainer.resumed().world_size_at_save, " ranks)");
}

// The checkpoint of `step`, under the watchdog (its allowance: the bytes at 20 MB/s). A write
// refused for want of space ends the run, or with train.ckpt_on_error = continue is a warning.
void save_checkpoint_of(int64_t step, Trainer& trainer, Watchdog& watchdog, PhaseTimers& timers, const World& world,
                        const TrainConfig& tc) {
  ScopedPhase phase(timers, Phase::ckpt);
  watchdog.watch("ckpt", step, str("the collective write of a checkpoint into ", tc.ckpt_dir),
                 double(trainer.checkpoint_size()) / 20e6);
  try {
    log_info("checkpoint: ", trainer.save(step));
  } catch (const CheckpointNotWritten& e) {
    if (tc.ckpt_stop_on_error) throw;
    if (world.rank == 0) log_warn(e.what(), "; training goes on (train.ckpt_on_error = continue)");
  }
}

// loss.csv, the device memory and CUDA graphs of this rank, and the report of every rank.
void write_outputs(const World& world, const std::string& dir, StepRecord& record, Trainer& trainer, const Ops& ops,
                   const Comm& comm) {
  if (world.rank == 0) write_file_atomic(dir + "/loss.csv", record.loss_csv.str());
  RunTotals& totals = record.totals;
  totals.device_peak_bytes = ops.device_peak_bytes();
  totals.blas_workspace_bytes = ops.blas_workspace_bytes();
  totals.comm_device_bytes = comm.device_bytes();
  totals.activation_device_bytes = ops.host_memory() ? 0 : trainer.model().activation_arena_bytes();
  totals.micro_batches = trainer.model().micro_batches();
  totals.graphs = ops.graph_stats();
  if (totals.graphs.captures > 0) {
    const GraphStats& g = totals.graphs;
    log_info("cuda graphs (rank ", world.rank, "): ", totals.micro_batches, " micro-batches in ", g.captures,
             " spans, ", g.replays, " replayed (hit rate ", 100.0 * double(g.replays) / double(g.captures), " %), ",
             g.graphs, " graph(s) of ", g.nodes, " nodes; ", g.replayed_nodes, " launches replayed x ",
             g.launch_seconds * 1e6, " us per launch = ", double(g.replayed_nodes) * g.launch_seconds,
             " s of launch overhead saved");
  }
  write_run_report(world.comm, dir, totals);
}

// run.profile_ops: each rank's op profile (op_profile/rank<R>.csv), and rank 0's by kind in the log.
void write_op_profile(const World& world, const std::string& dir, const OpProfile& profile,
                      const PhaseTimers& timers) {
  const std::string csv = profile.csv(timers.records());
  if (csv.empty()) {
    if (world.rank == 0) log_warn("run.profile_ops: no step after the first to profile (train.steps = 1)");
    return;
  }
  make_dirs(dir + "/op_profile");
  write_file_atomic(str(dir, "/op_profile/rank", world.rank, ".csv"), csv);
  if (world.rank == 0) log_info(profile.summary(timers.records()), " (rank 0; every rank's in ", dir, "/op_profile)");
}

// The rank's share of the step in its trace (RunTrace::batch).
void trace_batch(RunTrace& trace, int64_t step, const std::vector<PackedBatch>& micro_batches) {
  int64_t query = 0, context = 0, real = 0;
  for (const PackedBatch& mb : micro_batches) {
    query += mb.n_tokens;
    context += mb.n_context;
    real += mb.n_real_tokens;
  }
  trace.batch(step, int(micro_batches.size()), query, context, real);
}

}  // namespace

TrainResult train(const World& world, const RunConfig& cfg, Ops& ops, Comm& comm, const InitFrom* init_from) {
  const TrainConfig& tc = cfg.train;
  PhaseTimers timers;
  timers.start(Phase::init);
  TrainResult result;
  const CheckpointLock ckpt_lock(world.comm, tc.ckpt_dir, cfg.run_id);  // before any output: a refused run leaves none
  const DataReadLocks data_locks(world.comm, expand_paths(cfg.data.paths));
  discard_on_abort(&ckpt_lock);
  result.run_dir = create_run_dir(world.comm, cfg);
  mark_failures_in(result.run_dir);
  set_log_file(result.run_dir + "/train.log");
  RunTrace trace(result.run_dir, world.rank);
  timers.set_trace(&trace);
  timers.set_device_clock(ops.device_clock());
  // run.profile_ops: the trainer's ops timed one by one.
  const std::unique_ptr<OpProfile> profile = cfg.run.profile_ops ? std::make_unique<OpProfile>(ops, timers) : nullptr;
  Trainer trainer(world, cfg, profile ? *profile : ops, comm, timers, init_from);

  // From here a failure on one rank must end every rank at once (fail_run).
  try {
    log_start(world, cfg, trainer, comm, result.run_dir);
    Watchdog watchdog(world.rank, world.size, tc.watchdog_s, tc.frozen_peer_s);
    catch_stop_signals({SIGTERM, SIGUSR1, SIGINT});
    timers.stop(Phase::init);
    timers.end_step(trainer.first_step() - 1);

    StepRecord record(cfg, world.size);
    for (int64_t step = trainer.first_step(); step <= tc.steps; ++step) {
      timers.start(Phase::step);
      std::vector<PackedBatch> micro_batches;
      {
        ScopedPhase wait(timers, Phase::data_wait);
        watchdog.watch("data_wait", step, "the loader's next batch (dataset reads and their collectives)");
        micro_batches = trainer.next_batches();
      }
      trace_batch(trace, step, micro_batches);
      if (world.rank == cfg.debug.fail_rank && step == cfg.debug.fail_step)
        fail_injected(cfg.debug.fail_how, str("debug.fail_rank: injected failure on rank ", world.rank, " at step ", step));
      watchdog.watch("step", step, "forward/backward and the gradient and parameter collectives");
      const StepResult r = trainer.step(micro_batches, step);
      timers.stop(Phase::step);

      const double step_seconds = timers.current(Phase::step);
      timers.end_step(step);
      watchdog.step_done(step_seconds, timers.records().back());
      record.add(step, r, trainer.lr(step), step_seconds);
      if (profile && step == trainer.first_step()) profile->start_after(step);  // the first step warms up

      watchdog.watch("step_end", step, "the step-end agreement on stop signals (an all-reduce)");
      const bool stop = comm.max_over_ranks(stop_requested() ? 1 : 0) != 0;
      // Pre-emption (SIGTERM/SIGUSR1/SIGINT) checkpoints at this step boundary before exiting.
      if ((tc.ckpt_every > 0 && (step % tc.ckpt_every == 0 || step == tc.steps)) || stop)
        save_checkpoint_of(step, trainer, watchdog, timers, world, tc);
      if (step % cfg.run.log_every == 0 || step == tc.steps || stop) {
        const ProgressWindow& w = record.window;
        log_info(format_progress(step, tc.steps, w.loss_sum / double(w.steps), trainer.lr(step), w));
        record.window = ProgressWindow{};
      }
      if (stop) {
        log_info("received a stop signal: stopping after step ", step);
        break;
      }
    }

    watchdog.watch("report", record.totals.steps, "every rank's timings for the run report");
    write_outputs(world, result.run_dir, record, trainer, ops, comm);
    if (profile) write_op_profile(world, result.run_dir, *profile, timers);
    watchdog.idle();
    result.steps = record.totals.steps;
    result.final_loss = record.totals.final_loss;
    mark_failures_in("");
    discard_on_abort(nullptr);
    log_info("done: ", result.steps, " steps, final loss ", result.final_loss, "; outputs in ", result.run_dir);
    set_log_file("");
  } catch (const std::exception& e) {
    fail_run(world, e);
  }
  return result;
}

}  // namespace emb
