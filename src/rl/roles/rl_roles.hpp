// The three roles of an RL run (CLOSED_LOOP.md "Asynchrony"), each a loop on its ranks:
//   simulator  steps rl.envs_per_simulator environments, each in its own slot: an environment
//              whose chunk is done asks its generator for the next one at once (sync: every
//              environment of the rank waits for the slowest, the lockstep baseline)
//   generator  batches the requests of its simulators dynamically (rl.max_batch,
//              rl.batch_timeout_ms; sync: all of them) and samples chunks with one Flow-SDE step
//   trainer    RlLearner's micro-batch steps, pushing weights to the generators after each update
// sync and async_rollout work in rounds of rl.update_chunks transitions: a generator serves
// a round's chunks with the round's weights and then waits for the next version; async never
// waits (samples may be stale: rl.max_staleness and the decoupled loss).
// Every rank ends through drain_and_finish: it stops producing, discards what still arrives
// and leaves once every rank's sends completed (no message is left unmatched, so
// MPI_Finalize cannot hang).
#pragma once
#include <mpi.h>

#include <chrono>
#include <deque>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "comm/world.hpp"
#include "config/model_config.hpp"
#include "data/vl_features_source.hpp"
#include "rl/backoff.hpp"
#include "rl/channel.hpp"
#include "rl/rl_groups.hpp"
#include "rl/stage_cost.hpp"
#include "rl/stage_pacer.hpp"
#include "rl/utilisation.hpp"
#include "rl/roles/policy_normalization.hpp"
#include "rl/roles/rl_failure.hpp"
#include "rl/roles/rl_options.hpp"
#include "rl/roles/update_totals.hpp"
#include "rl/roles/vl_observer.hpp"
#include "sim/task.hpp"

namespace emb {

// Channel tags (each channel uses its tag and tag + 1 for credits).
constexpr int kTagRequest = 100, kTagReply = 110, kTagSegment = 120, kTagWeights = 130, kTagStop = 140;

struct RlSetup {
  RlSetup(const RlOptions& options, const RlGroups& g, const TaskSpec& t)
      : o(options), groups(g), task(t), cost(options.cost, options.seed) {}
  const RlOptions& o;
  const RlGroups& groups;
  const TaskSpec& task;
  ModelConfig cfg;                 // the policy's
  std::string sft_deck_text;       // the SFT checkpoint's deck (stored in RL checkpoints)
  VlFeaturesRecord sft_vl_features;  // the SFT checkpoint's vl encoder record (stored in RL checkpoints)
  PolicyNormalization normalization;  // the SFT checkpoint's (simulators apply it; RL checkpoints record it)
  std::vector<float> init_params;  // of the SFT (or resumed) checkpoint
  int flow_steps = 4, exec_steps = 4;
  int64_t start_version = 0, start_value_steps = 0, start_policy_steps = 0;
  // The version this RL run started from: its last is run_start_version + rl.updates. A run
  // continued by train.resume keeps its checkpoint's; any other starts at start_version.
  int64_t run_start_version = 0;
  UpdateTotals start_totals;       // train.resume: the run's totals so far
  std::string resume_dir;          // train.resume: the checkpoint's directory (rl_sim_state.hpp)
  std::string resume_sidecar;      // the rl_ sidecar read, if any (named in errors)
  std::string saved_state;         // train.resume: rl_state_digest when it was saved (empty: older sidecar)
  std::vector<float> value_state;  // a resumed value head: params, moment1, moment2 (empty = fresh)
  std::vector<float> exp_avg, exp_avg_sq;  // a resumed policy's AdamW moments (empty = fresh)
  StageCostModel cost;
  int round_chunks_per_env = 0;    // sync / async_rollout: chunks per environment per round
  int local_rank = 0;              // among the ranks of this node (the GPU of run.device = cuda)
  int node = 0;                    // World::node: which ranks' processes this rank can see
  FailureClaim claim_failure;      // who reports a failure (rl_failure.hpp); empty = every rank
  VlObserverFactory vl_observer;   // a simulator's vl tokens (the caller's renderer and encoder)
};

// Busy and waiting time of a rank's loop (the per-group utilisation of summary.json).
class LoopClock {
 public:
  void busy_since(std::chrono::steady_clock::time_point start);
  void wait_since(std::chrono::steady_clock::time_point start);
  void set(const Utilisation& u) { u_ = u; }
  nlohmann::json json() const;

 private:
  Utilisation u_;
};

// {busy_s, wait_s, busy_fraction} (summary.json).
nlohmann::json utilisation_json(const Utilisation& u);

// A pacer's real and modelled totals and overruns (summary.json).
nlohmann::json pacer_json(const StagePacer& p);

// Messages waiting for a channel's credit: no loop ever blocks in a send (a peer that stopped
// would hold it forever); flush() sends what the channel takes now.
class Outbox {
 public:
  explicit Outbox(ChannelSender& to) : to_(to) {}
  void push(std::vector<uint8_t> message) { queue_.push_back(std::move(message)); }
  bool flush();  // whether anything went out
  size_t size() const { return queue_.size(); }

 private:
  ChannelSender& to_;
  std::deque<std::vector<uint8_t>> queue_;
};

// Throws when a rank that waits for something heard nothing for the watchdog's time.
class Watchdog {
 public:
  explicit Watchdog(double timeout_s) : timeout_s_(timeout_s), last_(std::chrono::steady_clock::now()) {}
  void progress() { last_ = std::chrono::steady_clock::now(); }
  void check(const RlGroups& g, const std::string& waiting_for) const;

 private:
  double timeout_s_;
  std::chrono::steady_clock::time_point last_;
};

// rl.mode = async: a rank fed by several peers stays busy when one of them stops, so its
// watchdog never fires; each peer it listens to must be heard from within the watchdog's time.
// (Round modes need every peer for every round: a silent one stalls the rank and its watchdog.)
class PeerSilence {
 public:
  PeerSilence(std::vector<int> peers, double timeout_s, bool on);
  void heard(size_t i) { last_[i] = std::chrono::steady_clock::now(); }
  void restart();  // every peer just heard (the loop starts)
  // Throws naming the first peer silent for longer than the timeout.
  void check(const RlGroups& g, const std::string& what) const;

 private:
  std::vector<int> peers_;  // world ranks
  std::vector<std::chrono::steady_clock::time_point> last_;
  double timeout_s_;
  bool on_;
};

// The end of every turn of a role's loop: the turn's time counts busy when it did some work;
// otherwise it counts waiting, the watchdog checks how long nothing came and the loop backs off.
class RoleLoop {
 public:
  explicit RoleLoop(double watchdog_s) : watchdog_(watchdog_s), watchdog_s_(watchdog_s) {}
  // Every rank's loop starts together (a non-blocking barrier over the world, at most
  // kRlStartSeconds or train.watchdog_s, whichever is longer): set-up takes each role its own
  // time (MuJoCo models, renderers, the policy), and none of it is the silence the watchdog
  // watches for.
  void start(const RlGroups& g);
  void end_turn(bool worked, std::chrono::steady_clock::time_point turn_start, const RlGroups& g,
                const std::string& waiting_for);
  LoopClock& clock() { return clock_; }

 private:
  LoopClock clock_;
  Watchdog watchdog_;
  double watchdog_s_;
  Backoff backoff_;
};

constexpr double kRlStartSeconds = 120;

// Each returns this rank's statistics (a JSON object) for summary.json.
nlohmann::json run_simulator(const RlSetup& s);
nlohmann::json run_generator(const RlSetup& s);
nlohmann::json run_trainer(const RlSetup& s);

// The checks of a loaded setup against the ranks and the policy (one line each, the same on
// every rank); sets s.round_chunks_per_env.
void check_rl_setup(RlSetup& s);

// Runs this rank's role from a checked setup, collective over `world`: writes
// run_dir/summary.json (rank 0) and returns its path. s.o.ckpt_dir must be set.
std::string run_rl_roles(MPI_Comm world, const RlSetup& s, const std::string& run_dir);

}  // namespace emb
