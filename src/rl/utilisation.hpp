// How a rank group spends its time: busy in its stage (real compute plus paced sleep: the
// modelled device is busy for all of it) or waiting for input or for room to send output.
// The RL loops add to it; the report divides to get each group's utilisation.
#pragma once

namespace emb {

struct Utilisation {
  double busy_s = 0, wait_s = 0;

  // busy / (busy + wait); 0 before anything was recorded.
  double busy_fraction() const { return busy_s + wait_s > 0 ? busy_s / (busy_s + wait_s) : 0.0; }
};

}  // namespace emb
