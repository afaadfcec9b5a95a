// A rank's op profile (run.profile_ops = on; profiling/README.md): the seconds each op of the
// backend takes, by the part of the step it runs in (PhaseTimers::running: fwd, bwd, optim, and
// `other` for ops between the parts), over the steps after the first (which sizes the arena and
// packs frozen weights). Written to <run_dir>/op_profile/rank<R>.csv and summed by kind in
// train.log. The kinds are --plan's compute terms (its JSON's compute_by_kind), so a step's
// measured and predicted split compare term by term:
//   gemm         the linears (linear_*, linear_emb_*, packed_linear_forward, fp8_linear_*), with
//                the bias, activation and bias gradient they fuse, and the frozen VAE's
//                convolutions (implicit GEMMs);
//   attention    attention_forward / _backward, encoder_attention_forward;
//   dropout      dropout_forward / _backward (their keep words drawn);
//   elementwise  every other op (norms, residuals, rope, copies, the loss, the optimizer's);
// and `outside ops` the part's time no op took (the model's host code between ops, waits it holds).
// On the CPU, whose ops return when done, an op costs two clock reads more; on a GPU each op is
// timed between two synchronisations of its stream and the ops run without CUDA graphs
// (ObservedOps), so the profiled step is slower than the run's.
#pragma once
#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/timer.hpp"
#include "kernels/observed_ops.hpp"

namespace emb {

// The kind of op `op` (an Ops method's name): "gemm", "attention", "dropout" or "elementwise".
const char* op_kind(std::string_view op);

class OpProfile final : public ObservedOps {
 public:
  // The parts of the step the ops run in are `timers`' (their running phase).
  OpProfile(Ops& inner, const PhaseTimers& timers) : ObservedOps(inner), timers_(timers) {}

  struct OpTime {
    int64_t calls = 0;
    double seconds = 0;
    double bytes = 0;  // of the views the calls were given (ObservedOps::touched)
  };
  // Forgets what was timed so far: the profile is of the steps after `step`.
  void start_after(int64_t step);
  // Totals over the profiled steps of `op` run inside `phase` (zeros when it never ran there).
  OpTime total(Phase phase, std::string_view op) const;
  // The profile per step, over the profiled steps of `records` (PhaseTimers::records): one row
  // per phase and op (phase,kind,op,calls_per_step,ms_per_step,mb_per_step,gb_per_s: the bytes of
  // the views its calls were given, ObservedOps::touched, and those bytes over its time), then each
  // phase's time outside ops and the phase's own time (kind "outside ops" and "phase"). Empty when
  // no step was profiled.
  std::string csv(const std::vector<StepTimes>& records) const;
  // One line: each phase that ran ops, its ms per step, by kind (those that ran) and outside ops.
  std::string summary(const std::vector<StepTimes>& records) const;

 private:
  void op_started(const char* op) override;
  void op_ended(const char* op, double bytes) override;
  // The steps after start_after's and their phases' mean seconds.
  struct Profiled {
    int64_t steps = 0, first = 0, last = 0;
    std::array<double, kNumPhases> phase_seconds{};
  };
  Profiled profiled(const std::vector<StepTimes>& records) const;
  // The phase's seconds per profiled step that no op took.
  double outside_ops(Phase phase, const Profiled& p) const;

  const PhaseTimers& timers_;
  int64_t after_step_ = 0;
  std::array<std::map<std::string_view, OpTime>, kNumPhases> by_phase_;  // op names are literals
  Phase phase_ = Phase::other;
  PhaseTimers::Clock::time_point started_{};
};

}  // namespace emb
