#include "train/trainer.hpp"

#include <csignal>
#include <iomanip>
#include <sstream>

#include "config/deck.hpp"
#include "core/fs.hpp"
#include "core/log.hpp"
#include "core/timer.hpp"
#include "data/loader.hpp"
#include "model/model.hpp"
#include "model/plan.hpp"
#include "model/presets.hpp"
#include "train/checkpoint.hpp"
#include "train/checkpoint_dir.hpp"
#include "train/data_parallel.hpp"
#include "train/fail_run.hpp"
#include "train/lr_schedule.hpp"
#include "train/optimizer.hpp"
#include "train/progress.hpp"
#include "train/run_dir.hpp"
#include "train/run_report.hpp"
#include "train/train_step.hpp"
#include "kernels/cpu/cpu_ops.hpp"

namespace emb {
namespace {

// Slurm pre-emption (SIGTERM, or SIGUSR1 from --signal): finish the current step, write
// the outputs and exit cleanly.
volatile std::sig_atomic_t g_stop_signal = 0;
void on_stop_signal(int sig) { g_stop_signal = sig; }

// train.ckpt_dir, or <run.output_dir>/ckpt/<run.name or deck stem>: stable across restarts,
// so a requeued job with train.resume = auto finds the checkpoints of the one before it.
std::string checkpoint_dir(const Deck& deck) {
  std::string dir = deck.get_string("train.ckpt_dir");
  if (!dir.empty()) return dir;
  std::string name = deck.get_string("run.name");
  return deck.get_string("run.output_dir") + "/ckpt/" + (name.empty() ? deck.stem() : name);
}

bool any_rank(MPI_Comm comm, bool flag) {
  int v = flag ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MAX, comm);
  return v != 0;
}

}  // namespace

void validate_training_deck(const Deck& deck) {
  model_config_from_deck(deck);
  data_config_from_deck(deck);
  if (deck.get_string("run.device") != "cpu")
    throw Error(str(deck.path(), ": run.device = cuda: the model runs on the CPU backend only so far; use cpu"),
                kExitInput);
}

TrainResult train(const World& world, const Deck& deck, Comm& comm) {
  PhaseTimers timers;
  timers.start(Phase::init);
  const ModelConfig mc = model_config_from_deck(deck);
  TrainResult result;
  result.run_dir = create_run_dir(world.comm, deck);
  set_log_file(result.run_dir + "/train.log");

  CpuOps cpu_ops;  // the backend the model computes on
  auto model = make_model(mc, &cpu_ops);
  const ParamRegistry& reg = model->params();
  const ShardMode mode = shard_mode_from_name(deck.get_string("train.shard"));
  ShardLayout layout(reg, mode, world.rank, world.size, int64_t(deck.get_double("train.bucket_mb") * (1 << 20)));
  DataParallel dp(layout, comm, timers, deck.get_string("comm.overlap") == "on", mc.precision == Precision::bf16);
  const auto seed = uint64_t(deck.get_int("run.seed"));
  cpu::AdamWConfig adamw;
  adamw.beta1 = float(deck.get_double("train.beta1"));
  adamw.beta2 = float(deck.get_double("train.beta2"));
  adamw.eps = float(deck.get_double("train.eps"));
  adamw.weight_decay = float(deck.get_double("train.weight_decay"));
  Optimizer optimizer(layout, adamw, float(deck.get_double("train.grad_clip")));
  const int64_t total_steps = deck.get_int("train.steps");
  LrSchedule lr{lr_shape_from_name(deck.get_string("train.lr_schedule")), deck.get_double("train.lr"),
                deck.get_double("train.min_lr"), deck.get_int("train.warmup_steps"), total_steps};
  const std::string ckpt_dir = checkpoint_dir(deck);
  const int64_t ckpt_every = deck.get_int("train.ckpt_every");
  // Checkpoint files are read before the loader exists: HDF5 is not thread-safe, and the
  // loader's prefetch thread reads the dataset through HDF5 from its start.
  CheckpointMeta resumed;
  const std::string resume_from = resolve_resume(world.comm, deck.get_string("train.resume"), ckpt_dir);
  if (!resume_from.empty()) {
    std::vector<float> owned(size_t(layout.owned_total()));
    resumed = load_checkpoint(world.comm, resume_from, mc.preset, reg, layout, owned.data(),
                              optimizer.exp_avg().data(), optimizer.exp_avg_sq().data());
    dp.load_owned_params(owned.data());
    if (resumed.seed != seed) log_warn(resume_from, ": saved with run.seed = ", resumed.seed, ", this run uses ", seed);
  } else {  // a fresh start: each rank draws only what it keeps, the same values whatever the rank count
    dp.init_owned_params(reg, seed, mc.init_std);
  }
  Loader loader(world.comm, data_config_from_deck(deck), mc);
  if (!resume_from.empty()) loader.restore(resumed.sampler);
  const int64_t first_step = resumed.step + 1;  // keeps AdamW's bias correction and the LR schedule aligned
  const int64_t log_every = deck.get_int("run.log_every");

  // From here a failure on one rank must end every rank at once (fail_run).
  try {
    log_info("embtrain: ", mc.preset, " (", family_name(mc.family), "), ", reg.total(), " parameters, ", world.size,
             " rank(s) on ", world.n_nodes, " node(s), shard = ", deck.get_string("train.shard"), ", comm = ",
             comm.name(), ", ", total_steps, " steps of ", deck.get_int("train.global_batch"), " samples");
    log_info("outputs: ", result.run_dir);
    if (!resume_from.empty())
      log_info("resumed from ", resume_from, " (step ", resumed.step, ", saved on ", resumed.world_size_at_save,
               " ranks)");
    auto save = [&](int64_t step) {
      ScopedPhase phase(timers, Phase::ckpt);
      loader.quiesce();  // HDF5 is not thread-safe: the prefetch thread must be idle
      CheckpointMeta meta{step, loader.state(), seed, mc.preset, deck.resolved_text(), world.size};
      const std::string path = save_checkpoint(world.comm, ckpt_dir, reg, layout, dp.owned_params(),
                                               optimizer.exp_avg().data(), optimizer.exp_avg_sq().data(), meta,
                                               int(deck.get_int("train.ckpt_keep")));
      log_info("checkpoint: ", path);
    };
    std::signal(SIGTERM, on_stop_signal);
    std::signal(SIGUSR1, on_stop_signal);
    timers.stop(Phase::init);
    timers.end_step(first_step - 1);

    RunTotals totals;
    totals.family = family_name(mc.family);
    totals.preset = mc.preset;
    totals.device = "cpu";
    {
      const PlanReport plan = make_plan(mc, world.size, deck.get_int("data.tokens_per_mb"));
      totals.flops_per_sample = plan.flops_fwd + plan.flops_bwd;  // of a typical sample
    }
    std::ostringstream loss_csv;
    loss_csv << std::setprecision(9) << "step,loss,lr,grad_norm\n";  // exact enough to compare runs
    ProgressWindow window;

    StepContext ctx{*model, dp, optimizer, timers, world.comm, seed, deck.get_string("train.nan_policy") == "skip",
                    deck.get_int("debug.inject_nan_step")};
    const int64_t fail_rank = deck.get_int("debug.fail_rank"), fail_step = deck.get_int("debug.fail_step");
    for (int64_t step = first_step; step <= total_steps; ++step) {
      timers.start(Phase::step);
      std::vector<PackedBatch> micro_batches;
      {
        ScopedPhase wait(timers, Phase::data_wait);
        micro_batches = loader.next_step();
      }
      if (world.rank == fail_rank && step == fail_step)
        throw Error(str("debug.fail_rank: injected failure on rank ", world.rank, " at step ", step));
      const double step_lr = lr.at(step);
      const StepResult r = train_step(ctx, micro_batches, step, step_lr);
      timers.stop(Phase::step);

      const double step_seconds = timers.current(Phase::step);
      timers.end_step(step);
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
      loss_csv << step << ',' << r.loss << ',' << step_lr << ',' << r.grad_norm << '\n';

      const bool stop = any_rank(world.comm, g_stop_signal != 0);
      // Pre-emption (SIGTERM/SIGUSR1) checkpoints at this step boundary before exiting.
      if ((ckpt_every > 0 && (step % ckpt_every == 0 || step == total_steps)) || stop) save(step);
      if (step % log_every == 0 || step == total_steps || stop) {
        log_info(format_progress(step, total_steps, window.loss_sum / double(window.steps), step_lr, window));
        window = ProgressWindow{};
      }
      if (stop) {
        log_info("received a stop signal: stopping after step ", step);
        break;
      }
    }

    if (world.rank == 0) write_file_atomic(result.run_dir + "/loss.csv", loss_csv.str());
    write_run_report(world.comm, result.run_dir, timers, totals);
    result.steps = totals.steps;
    result.final_loss = totals.final_loss;
    log_info("done: ", totals.steps, " steps, final loss ", totals.final_loss, "; outputs in ", result.run_dir);
    set_log_file("");
  } catch (const std::exception& e) {
    fail_run(world, e);
  }
  return result;
}

}  // namespace emb
