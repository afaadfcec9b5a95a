// The identity of a training run, recorded in every checkpoint it writes (attribute run_id),
// so that a checkpoint directory shared by several runs is never mixed up: `ckpt_keep`
// prunes only this run's checkpoints, and `train.resume = auto` continues only this run.
//
// A run is what its deck trains: the identity is a 64-bit FNV-1a fingerprint (16 hex
// digits) of every resolved deck value except those a restart may change without changing
// what is trained (how long, on how many ranks, how it is sharded, logged, checkpointed and
// communicated, listed in run_identity.cpp). So the requeued job of a run (same deck, perhaps
// more steps or another rank count) is the same run; a deck with another seed, model, data
// or optimizer setting is another run.
#pragma once
#include <functional>
#include <string>

namespace emb {

// `value_of(key)`: the canonical text of a schema key's resolved value (Deck::text).
std::string run_identity(const std::function<std::string(const std::string& key)>& value_of);

}  // namespace emb
