// Makes a stage take its modelled time (stage_cost.hpp). A stage's real compute runs between
// begin() and finish(modelled); finish then sleeps for whatever of the modelled time is left,
// so the stage ends no earlier than begin + modelled. Sleeping, not spinning: every rank group
// shares this machine's cores, and a pacing rank must leave them to the ranks that compute.
// When real compute takes longer than the model (an overrun) nothing can hide it; overruns
// are counted so a report can say how often the modelled times were not what the run saw.
#pragma once
#include <chrono>
#include <cstdint>

namespace emb {

class StagePacer {
 public:
  using Clock = std::chrono::steady_clock;

  // on = false (rl.cost_model = off): finish never sleeps and counts no overruns (there is
  // no model to overrun); the real and modelled totals are still kept.
  explicit StagePacer(bool on) : on_(on) {}

  void begin() { started_ = Clock::now(); }
  // Ends the stage begun last (each finish needs its own begin); returns the stage's wall
  // seconds, real compute plus any sleep.
  double finish(double modelled_s);

  bool on() const { return on_; }
  int64_t stages() const { return stages_; }
  double real_s() const { return real_s_; }          // compute, before any sleep
  double modelled_s() const { return modelled_s_; }  // what the model asked for
  double slept_s() const { return slept_s_; }
  int64_t overruns() const { return overruns_; }     // stages whose compute exceeded the model
  double overrun_s() const { return overrun_s_; }    // by this much in all

 private:
  bool on_;
  Clock::time_point started_{};
  int64_t stages_ = 0, overruns_ = 0;
  double real_s_ = 0, modelled_s_ = 0, slept_s_ = 0, overrun_s_ = 0;
};

}  // namespace emb
