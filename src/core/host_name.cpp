#include "core/host_name.hpp"

#include <unistd.h>

namespace emb {

std::string host_name() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') return "?";
  return host;
}

}  // namespace emb
