// This machine's host name, as the messages naming a rank's node (watchdog, locks, RL peers,
// start-up checks) print it.
#pragma once
#include <string>

namespace emb {

// gethostname(2); "?" when it cannot be read.
std::string host_name();

}  // namespace emb
