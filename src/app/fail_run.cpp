#include "app/fail_run.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <new>
#include <thread>

#include "comm/agreement.hpp"
#include "core/error.hpp"
#include "core/log.hpp"

namespace emb {

namespace {

std::string g_failure_dir;
const CheckpointLock* g_lock = nullptr;

}  // namespace

// O_EXCL: the first rank to fail writes the marker, the others leave it.
bool write_failure_marker(const std::string& line) {
  if (g_failure_dir.empty()) return true;
  const int fd = ::open((g_failure_dir + "/FAILED").c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) return errno != EEXIST;
  if (::write(fd, line.data(), line.size()) < 0) std::fprintf(stderr, "embtrain: cannot write %s/FAILED\n", g_failure_dir.c_str());
  ::close(fd);
  return true;
}

void mark_failures_in(const std::string& run_dir) { g_failure_dir = run_dir; }

void discard_on_abort(const CheckpointLock* lock) { g_lock = lock; }

std::string failure_message(const std::exception& e) {
  // The start-up check refuses a model the node cannot hold; what still runs out says what to do.
  if (dynamic_cast<const std::bad_alloc*>(&e))
    return str("out of memory (", e.what(), ") allocating the model's parameters, gradients, optimizer state or a "
               "micro-batch's activations; make the model smaller, lower data.tokens_per_mb or use train.shard = "
               "full (embtrain DECK --plan estimates the memory per rank)");
  return e.what();
}

int report_failure(const World& world, const std::exception& e) {
  auto* err = dynamic_cast<const Error*>(&e);
  const int code = err ? err->exit_code() : kExitFailure;
  const bool agreed = dynamic_cast<const AgreedError*>(&e) != nullptr;
  if (agreed && world.rank != 0) return code;  // rank 0 says it for all
  const std::string line = str("embtrain: error", world.size > 1 && !agreed ? str(" on rank ", world.rank) : "", ": ",
                               failure_message(e), "\n");
  error_line(line);
  write_failure_marker(line);
  return code;
}

void fail_run(const World& world, const std::exception& e) {
  if (world.size == 1) {
    g_lock = nullptr;  // the lock's destructor discards it as the exception unwinds
    throw;
  }
  const int code = report_failure(world, e);
  if (g_lock) g_lock->discard();
  // An error every rank has is printed by rank 0: the others give it time to print and abort
  // (which ends them too) before aborting themselves, so the line is never lost to the race.
  if (dynamic_cast<const AgreedError*>(&e) && world.rank != 0) std::this_thread::sleep_for(std::chrono::seconds(10));
  abort_world(code);
}

}  // namespace emb
