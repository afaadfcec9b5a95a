// Logging: rank 0 prints progress to stdout and (once a run directory exists) to train.log;
// every rank may print warnings and errors prefixed with its rank.
#pragma once
#include <string>

#include "core/error.hpp"

namespace emb {

void set_log_rank(int rank, int world_size);
// Tees rank 0's lines into `path` (train.log) from now on; "" closes it.
void set_log_file(const std::string& path);

void log_line(const std::string& line);   // rank 0 only
void warn_line(const std::string& line);  // any rank, "[rank r] warning: ..."

template <class... Args>
void log_info(const Args&... args) {
  log_line(str(args...));
}
template <class... Args>
void log_warn(const Args&... args) {
  warn_line(str(args...));
}

}  // namespace emb
