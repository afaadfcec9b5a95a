#include "train/fail_run.hpp"

#include <cstdio>

#include "comm/agreement.hpp"
#include "core/error.hpp"

namespace emb {

int report_failure(const World& world, const std::exception& e) {
  auto* err = dynamic_cast<const Error*>(&e);
  const int code = err ? err->exit_code() : kExitFailure;
  const bool agreed = dynamic_cast<const AgreedError*>(&e) != nullptr;
  if (agreed && world.rank != 0) return code;  // rank 0 says it for all
  std::fprintf(stderr, "embtrain: error%s: %s\n",
               world.size > 1 && !agreed ? str(" on rank ", world.rank).c_str() : "", e.what());
  std::fflush(stderr);
  return code;
}

void fail_run(const World& world, const std::exception& e) {
  if (world.size > 1) abort_world(report_failure(world, e));
  throw;
}

}  // namespace emb
