// Per-rank timing files written as the run goes (DESIGN.md "Timers and outputs"), so a job
// killed mid-run keeps every step it finished:
//   <run_dir>/timings/rank<R>.csv   step,phase,seconds — one row per phase per step, flushed at
//                                   each step's end (run_report builds timings.csv and
//                                   summary.json from these files);
//   <run_dir>/trace/rank<R>.json    Chrome/Perfetto trace events: a complete ("X") event for
//                                   every phase (tid 0), model unit (tid 1) and collective
//                                   (tid 2, with its bytes and bucket), and an instant "batch"
//                                   event at each step's start with the rank's own micro-batches
//                                   and tokens (what its compute a step moves with); timestamps
//                                   in µs of the wall clock so ranks line up; flushed each step.
//                                   The array is closed when the run ends; a killed run's file
//                                   lacks the closing bracket, which the trace format allows
//                                   (profiling/merge_traces.py reads both).
#pragma once
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace emb {

class RunTrace {
 public:
  using Clock = std::chrono::steady_clock;
  RunTrace(const std::string& run_dir, int rank);
  ~RunTrace();
  RunTrace(const RunTrace&) = delete;
  RunTrace& operator=(const RunTrace&) = delete;

  // One row of the timings file (not flushed until end_step).
  void timing(int64_t step, const char* phase, double seconds);
  // Flushes both files: everything up to this step survives a kill.
  void end_step();
  void phase(const char* name, Clock::time_point start, Clock::time_point end, int64_t step);
  void unit(int unit, bool backward, Clock::time_point start, Clock::time_point end);
  void collective(const char* op, int bucket, int64_t bytes, Clock::time_point issued, double seconds);
  // This rank's share of the step: its micro-batches and their query, context and real (not
  // padding) tokens, so that the ranks' compute apart can be set against their samples apart
  // (regression/rank_tokens.py).
  void batch(int64_t step, int micro_batches, int64_t query_tokens, int64_t context_tokens, int64_t real_tokens);

 private:
  // Formatted straight into the file (stack buffers, no strings: the trace is written every step).
  void event(const char* name, const char* cat, int tid, Clock::time_point start, double dur_us, const char* args);
  double wall_us(Clock::time_point t) const;

  int rank_;
  std::FILE* timings_ = nullptr;
  std::FILE* trace_ = nullptr;
  Clock::time_point steady0_;
  double wall0_us_ = 0;
};

}  // namespace emb
