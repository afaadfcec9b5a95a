// What a rank does when the run fails after set-up: print the error with its rank and end
// the whole job (MPI_Abort), so no other rank is left waiting in a collective. It must run
// where the failure is caught, before the stack unwinds: destructors of the loader (whose
// prefetch thread may sit in a collective read) or of in-flight communication would block.
#pragma once
#include <exception>
#include <string>

#include "checkpoint/checkpoint_lock.hpp"
#include "comm/world.hpp"

namespace emb {

// From now on a reported failure also leaves <run_dir>/FAILED holding the error line (the
// first failing rank writes it), so a failed run's directory never looks like a finished
// one. "" stops that.
void mark_failures_in(const std::string& run_dir);
// From now on fail_run discards `lock` (its lock file, and its checkpoint directory when this
// run made it and wrote nothing) before aborting: an abort skips the destructor that would.
// nullptr stops that.
void discard_on_abort(const CheckpointLock* lock);

// Writes the error line into <run_dir>/FAILED (the first failing rank's line stays), for a
// failure reported outside report_failure (the watchdog's thread).
void write_failure_marker(const std::string& line);

// The error line's message: e.what(), or for std::bad_alloc what ran out and what to change.
std::string failure_message(const std::exception& e);

// Prints "embtrain: error[ on rank r]: ..." and returns the exit code the error asks for. An
// AgreedError (every rank has it) is printed by rank 0 only, as "embtrain: error: ...".
int report_failure(const World& world, const std::exception& e);

// Multi-rank: report_failure, then abort every rank with that code. One rank: rethrows the
// exception being handled, for main() to report after cleaning up.
[[noreturn]] void fail_run(const World& world, const std::exception& e);

}  // namespace emb
