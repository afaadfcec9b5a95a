#include "rl/roles/rl_shutdown.hpp"

#include <chrono>

#include "comm/host_collectives.hpp"
#include "comm/messages.hpp"
#include "core/error.hpp"
#include "rl/backoff.hpp"
#include "rl/roles/rl_roles.hpp"

namespace emb {

bool StopSignal::poll() {
  if (stopped_) return true;
  int word = 0;
  if (receive_if_arrived(MPI_COMM_WORLD, g_.trainers[0], kTagStop, &word, sizeof word)) stopped_ = true;
  return stopped_;
}

void StopSignal::send_to_all() {
  const int word = 1;
  for (const std::vector<int>* group : {&g_.simulators, &g_.generators})
    for (int r : *group) send_small(MPI_COMM_WORLD, r, kTagStop, &word, sizeof word);
}

void drain_and_finish(const RlGroups& g, const std::vector<ChannelReceiver*>& receivers,
                      const std::vector<ChannelSender*>& senders, double timeout_s, WeightPublisher* publisher,
                      const std::function<void()>& receive_others) {
  const Deadline deadline(timeout_s);
  Backoff backoff;
  NonBlockingBarrier barrier;
  std::vector<uint8_t> dropped;
  for (;;) {
    bool any = false;
    for (ChannelReceiver* r : receivers)
      while (r->try_recv(dropped)) any = true;
    if (receive_others) receive_others();
    bool consumed = true;
    for (ChannelSender* s : senders) s->progress(), consumed = consumed && s->in_flight() == 0;
    if (publisher) consumed = publisher->idle() && consumed;
    if (!barrier.entered() && consumed) barrier.enter(MPI_COMM_WORLD);
    if (barrier.entered() && barrier.done()) return;
    EMB_CHECK(!deadline.passed(), "rl: ", role_name(g.role), " rank ", g.world_rank, " waited ", timeout_s,
              " s for the other ranks to finish (", barrier.entered() ? "they did not" : "what it sent was not consumed", ")");
    if (any) backoff.reset();
    else backoff.wait();
  }
}

}  // namespace emb
