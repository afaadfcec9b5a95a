// How RL's ranks stop (rl_roles.hpp). Trainer 0 sends every simulator and generator one stop
// message once the last update is done; every rank then calls drain_and_finish: it produces
// nothing more, receives and discards whatever still arrives (any source, any tag: requests,
// replies, segments, weights, credits), waits for its own sends to complete, and leaves once
// every rank got that far (a non-blocking barrier polled between discards). No message is
// left half-sent, so nothing blocks in MPI_Finalize. Timeouts name the rank and what it waited for.
#pragma once
#include <functional>
#include <vector>

#include "rl/channel.hpp"
#include "rl/rl_groups.hpp"
#include "rl/weight_push.hpp"

namespace emb {

class StopSignal {
 public:
  explicit StopSignal(const RlGroups& g) : g_(g) {}
  // Simulators and generators: whether trainer 0 said stop (received once, then remembered).
  bool poll();
  // Trainer 0: stop to every simulator and generator (non-blocking; drain_and_finish completes it).
  void send_to_all();

 private:
  const RlGroups& g_;
  bool stopped_ = false;
};

void drain_and_finish(const RlGroups& g, const std::vector<ChannelReceiver*>& receivers,
                      const std::vector<ChannelSender*>& senders, double timeout_s,
                      WeightPublisher* publisher = nullptr, const std::function<void()>& receive_others = {});

}  // namespace emb
