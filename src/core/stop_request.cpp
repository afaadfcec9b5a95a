#include "core/stop_request.hpp"

#include <csignal>

namespace emb {

namespace {

volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void note_stop_signal(int sig) { g_stop_signal = sig; }

}  // namespace

void catch_stop_signals(std::initializer_list<int> signals) {
  for (int sig : signals) std::signal(sig, note_stop_signal);
}

bool stop_requested() { return g_stop_signal != 0; }

}  // namespace emb
