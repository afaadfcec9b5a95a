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
// Any rank: a failure's line (its text ends in a newline) on stderr, at once. With several ranks
// it starts on a line of its own: mpirun forwards each rank's output in the chunks it reads, and
// another rank's (or this rank's stdout's) unfinished line may come just before it, where a
// reader or a test looking for the line at a line's start would miss it (stop 41's CI failure:
// "rl checkpoint: /tmp/tmp.BS" + "embsim rl: simulator rank 2 ... died" + "BILgKaXb/..."; 4-6 of
// 10 kills of a fast-printing toy job landed mid-line, none with the newline). When nothing
// interleaves it costs a blank line before the line.
void error_line(const std::string& text);

template <class... Args>
void log_info(const Args&... args) {
  log_line(str(args...));
}
template <class... Args>
void log_warn(const Args&... args) {
  warn_line(str(args...));
}

}  // namespace emb
