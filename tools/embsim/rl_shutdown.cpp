#include "rl_shutdown.hpp"

#include <chrono>

#include "core/error.hpp"
#include "rl/backoff.hpp"
#include "rl_roles.hpp"

namespace emb {

bool StopSignal::poll() {
  if (stopped_) return true;
  int arrived = 0;
  MPI_Status st;
  MPI_Iprobe(g_.trainers[0], kTagStop, MPI_COMM_WORLD, &arrived, &st);
  if (arrived) {
    int word = 0;
    MPI_Recv(&word, 1, MPI_INT, g_.trainers[0], kTagStop, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    stopped_ = true;
  }
  return stopped_;
}

void StopSignal::send_to_all() {
  int word = 1;  // one int: eager, so MPI_Send returns at once
  for (const std::vector<int>* group : {&g_.simulators, &g_.generators})
    for (int r : *group) MPI_Send(&word, 1, MPI_INT, r, kTagStop, MPI_COMM_WORLD);
}

void drain_and_finish(const RlGroups& g, const std::vector<ChannelReceiver*>& receivers,
                      const std::vector<ChannelSender*>& senders, double timeout_s, WeightPublisher* publisher,
                      const std::function<void()>& receive_others) {
  const Deadline deadline(timeout_s);
  Backoff backoff;
  MPI_Request barrier = MPI_REQUEST_NULL;
  bool entered = false;
  std::vector<uint8_t> dropped;
  for (;;) {
    bool any = false;
    for (ChannelReceiver* r : receivers)
      while (r->try_recv(dropped)) any = true;
    if (receive_others) receive_others();
    bool consumed = true;
    for (ChannelSender* s : senders) s->progress(), consumed = consumed && s->in_flight() == 0;
    if (publisher) consumed = publisher->idle() && consumed;
    if (!entered && consumed) {
      MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
      entered = true;
    }
    if (entered) {
      int done = 0;
      MPI_Test(&barrier, &done, MPI_STATUS_IGNORE);
      if (done) return;
    }
    EMB_CHECK(!deadline.passed(), "rl: ", role_name(g.role), " rank ", g.world_rank, " waited ", timeout_s,
              " s for the other ranks to finish (", entered ? "they did not" : "what it sent was not consumed", ")");
    if (any) backoff.reset();
    else backoff.wait();
  }
}

}  // namespace emb
