// The failure debug.fail_rank injects (the failure-handling tests): a one-line error, as a bad
// input or a failed read would end the rank, or SIGKILL to itself, as kill -9 or the OOM killer
// would, at a moment the rank chooses, so a test of a rank dying at that moment needs no
// outside killer racing the run's forwarded output.
#pragma once
#include <string>

namespace emb {

enum class InjectedFailure { error, kill };  // debug.fail_how

// Ends this rank as `how` says; error: throws Error(message).
[[noreturn]] void fail_injected(InjectedFailure how, const std::string& message);

}  // namespace emb
