#include "checkpoint/run_identity.hpp"

#include <cstdint>
#include <cstdio>
#include <set>

#include "config/schema.hpp"

namespace emb {
namespace {

// Sections and keys a restart may change: they decide where and how a run executes, not
// the sequence of parameters it computes (the equivalence tests show the losses do not
// depend on them).
const std::set<std::string> kRestartSections = {"comm", "debug"};
const std::set<std::string> kRestartKeys = {
    "run.name",           "run.output_dir", "run.log_every",   "run.profile_ops", "run.device",       "run.cuda_graphs",
    "run.deterministic",  "model.recompute",
    "data.tokens_per_mb", "data.lookahead", "data.prefetch",   "data.mpio_transfer", "data.verify",   "train.steps",
    "train.micro_batch",  "train.shard",    "train.bucket_mb", "train.ranks",      "train.nan_policy",
    "train.resume",       "train.ckpt_every", "train.ckpt_dir", "train.ckpt_keep",  "train.ckpt_on_error", "train.watchdog_s",
    "train.frozen_peer_s", "rl.updates",     "rl.ckpt_every",  "rl.ckpt_dir"};

uint64_t fnv1a(uint64_t hash, const std::string& bytes) {
  for (unsigned char c : bytes) hash = (hash ^ c) * 0x100000001b3ull;
  return hash;
}

}  // namespace

std::string run_identity(const std::function<std::string(const std::string& key)>& value_of) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (const KeySpec& spec : deck_schema()) {
    if (kRestartSections.count(spec.section()) || kRestartKeys.count(spec.key)) continue;
    hash = fnv1a(hash, spec.key + "=" + value_of(spec.key) + "\n");
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

}  // namespace emb
