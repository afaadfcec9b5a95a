// The counter-RNG streams of the RL pieces. core/rng.hpp names the trainer's streams (1-7);
// these lie beyond them, so no RL draw ever shares a counter with a trainer draw of the same
// seed: each purpose keeps its own stream.
#pragma once
#include "core/rng.hpp"

namespace emb::rl_stream {

constexpr RngStream stage_cost = RngStream(101);  // modelled simulator step times (stage_cost.hpp)
constexpr RngStream value_init = RngStream(102);  // the value head's initial weights (value_head.hpp)

}  // namespace emb::rl_stream
