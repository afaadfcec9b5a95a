// The turn of a role's loop: its clock, outbox and watchdog (rl_roles.hpp).
#include <chrono>

#include "core/error.hpp"
#include "core/timer.hpp"
#include "rl/roles/rl_roles.hpp"

namespace emb {

using Clock = std::chrono::steady_clock;

void LoopClock::busy_since(Clock::time_point start) { u_.busy_s += seconds_since(start); }
void LoopClock::wait_since(Clock::time_point start) { u_.wait_s += seconds_since(start); }
nlohmann::json utilisation_json(const Utilisation& u) {
  return {{"busy_s", u.busy_s}, {"wait_s", u.wait_s}, {"busy_fraction", u.busy_fraction()}};
}

nlohmann::json LoopClock::json() const { return utilisation_json(u_); }

nlohmann::json pacer_json(const StagePacer& p) {
  return {{"stages", p.stages()}, {"real_s", p.real_s()}, {"modelled_s", p.modelled_s()}, {"slept_s", p.slept_s()},
          {"overruns", p.overruns()}, {"overrun_s", p.overrun_s()}};
}

bool Outbox::flush() {
  bool sent = false;
  while (!queue_.empty() && to_.try_send(std::move(queue_.front()))) queue_.pop_front(), sent = true;
  return sent;
}

void Watchdog::check(const RlGroups& g, const std::string& waiting_for) const {
  const double idle = std::chrono::duration<double>(std::chrono::steady_clock::now() - last_).count();
  EMB_CHECK(idle < timeout_s_, "rl: ", role_name(g.role), " rank ", g.world_rank, " heard nothing for ",
            int(timeout_s_), " s waiting for ", waiting_for, " (train.watchdog_s); a rank may have died");
}

void RoleLoop::end_turn(bool worked, Clock::time_point turn_start, const RlGroups& g, const std::string& waiting_for) {
  if (worked) {
    backoff_.reset();
    watchdog_.progress();
    clock_.busy_since(turn_start);
  } else {
    watchdog_.check(g, waiting_for);
    backoff_.wait();
    clock_.wait_since(turn_start);
  }
}

}  // namespace emb
