#include "train/fail_run.hpp"

#include <cstdio>

#include "core/error.hpp"

namespace emb {

int report_failure(const World& world, const std::exception& e) {
  std::fprintf(stderr, "embtrain: error%s: %s\n", world.size > 1 ? str(" on rank ", world.rank).c_str() : "",
               e.what());
  std::fflush(stderr);
  auto* err = dynamic_cast<const Error*>(&e);
  return err ? err->exit_code() : kExitFailure;
}

void fail_run(const World& world, const std::exception& e) {
  if (world.size > 1) abort_world(report_failure(world, e));
  throw;
}

}  // namespace emb
