#include "core/injected_failure.hpp"

#include <csignal>

#include "core/error.hpp"

namespace emb {

void fail_injected(InjectedFailure how, const std::string& message) {
  if (how == InjectedFailure::kill) std::raise(SIGKILL);
  throw Error(message);
}

}  // namespace emb
