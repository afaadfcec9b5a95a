#include "train/op_profile.hpp"

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace emb {

const char* op_kind(std::string_view op) {
  if (op != "pack_linear" && (op.find("linear") != std::string_view::npos || op.find("conv3d") != std::string_view::npos))
    return "gemm";
  if (op.find("attention") != std::string_view::npos) return "attention";
  if (op.rfind("dropout", 0) == 0) return "dropout";
  return "elementwise";
}

namespace {

constexpr const char* kKinds[] = {"gemm", "attention", "dropout", "elementwise"};

// Ops of a part of the step are timed inside it; `other` holds those between its parts.
Phase profiled_phase(Phase running) { return running == Phase::step ? Phase::other : running; }

}  // namespace

void OpProfile::op_started(const char*) {
  // A GPU's earlier ops are not this op's: wait for them first.
  if (!inner().host_memory()) inner().synchronize();
  phase_ = profiled_phase(timers_.running());
  started_ = PhaseTimers::Clock::now();
}

void OpProfile::op_ended(const char* op, double bytes) {
  if (!inner().host_memory()) inner().synchronize();
  OpTime& t = by_phase_[size_t(phase_)][op];
  t.calls += 1, t.seconds += seconds_since(started_), t.bytes += bytes;
}

void OpProfile::start_after(int64_t step) {
  after_step_ = step;
  for (auto& ops : by_phase_) ops.clear();
}

OpProfile::OpTime OpProfile::total(Phase phase, std::string_view op) const {
  const auto& ops = by_phase_[size_t(phase)];
  const auto it = ops.find(op);
  return it == ops.end() ? OpTime{} : it->second;
}

OpProfile::Profiled OpProfile::profiled(const std::vector<StepTimes>& records) const {
  Profiled p;
  for (const StepTimes& r : records) {
    if (r.step <= after_step_) continue;
    if (p.steps++ == 0) p.first = r.step;
    p.last = r.step;
    for (int i = 0; i < kNumPhases; ++i) p.phase_seconds[size_t(i)] += r.seconds[size_t(i)];
  }
  for (double& s : p.phase_seconds) s /= double(std::max<int64_t>(1, p.steps));
  return p;
}

double OpProfile::outside_ops(Phase phase, const Profiled& p) const {
  double in_ops = 0;
  for (const auto& [op, t] : by_phase_[size_t(phase)]) in_ops += t.seconds;
  return p.phase_seconds[size_t(phase)] - in_ops / double(p.steps);
}

std::string OpProfile::csv(const std::vector<StepTimes>& records) const {
  const Profiled p = profiled(records);
  if (p.steps == 0) return "";
  std::ostringstream out;
  out << std::setprecision(6) << "phase,kind,op,calls_per_step,ms_per_step,mb_per_step,gb_per_s\n";
  for (int i = 0; i < kNumPhases; ++i) {
    const auto& ops = by_phase_[size_t(i)];
    if (ops.empty()) continue;
    const char* phase = phase_name(Phase(i));
    const double per_step = 1.0 / double(p.steps);
    for (const auto& [op, t] : ops)
      out << phase << ',' << op_kind(op) << ',' << op << ',' << double(t.calls) * per_step << ','
          << 1e3 * t.seconds * per_step << ',' << 1e-6 * t.bytes * per_step << ','
          << (t.seconds > 0 ? 1e-9 * t.bytes / t.seconds : 0.0) << '\n';
    out << phase << ",outside ops,,0," << 1e3 * outside_ops(Phase(i), p) << ",0,0\n";
    out << phase << ",phase,,0," << 1e3 * p.phase_seconds[size_t(i)] << ",0,0\n";
  }
  return out.str();
}

std::string OpProfile::summary(const std::vector<StepTimes>& records) const {
  const Profiled p = profiled(records);
  if (p.steps == 0) return "";
  std::ostringstream out;
  out << std::fixed << std::setprecision(2) << "op profile, ms per step over steps " << p.first << '-' << p.last
      << ':';
  for (int i = 0; i < kNumPhases; ++i) {
    const auto& ops = by_phase_[size_t(i)];
    if (ops.empty()) continue;
    std::map<std::string_view, double> kinds;
    for (const auto& [op, t] : ops) kinds[op_kind(op)] += t.seconds;
    out << ' ' << phase_name(Phase(i)) << ' ' << 1e3 * p.phase_seconds[size_t(i)] << " (";
    for (const char* kind : kKinds)
      if (kinds[kind] > 0) out << kind << ' ' << 1e3 * kinds[kind] / double(p.steps) << ", ";
    out << "outside ops " << 1e3 * outside_ops(Phase(i), p) << ");";
  }
  return out.str();
}

}  // namespace emb
