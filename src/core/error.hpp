// Errors that reach the user. Every failure a user can cause (bad deck, bad data, missing
// file, shape mismatch, non-finite loss) is thrown as emb::Error whose message is already
// one complete line naming where it happened ("deck.in:12: ...", "data.h5:/steps/state: ...").
// main() prints it once and exits non-zero on every rank.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace emb {

// Exit codes: 2 for input the user must fix (deck, command line), 1 for everything else.
constexpr int kExitInput = 2;
constexpr int kExitFailure = 1;

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, int exit_code = kExitFailure)
      : std::runtime_error(message), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

// Concatenates anything streamable: str("expected ", n, " rows") .
template <class... Args>
std::string str(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

// User input inside a message: control bytes shown as \xHH (a NUL or an escape sequence
// never reaches the terminal raw), and text longer than 80 bytes cut to its first 60 with
// "... (N bytes, truncated)", so a 10 MB line never floods a log. quoted() adds '...'.
std::string clipped(const std::string& text);
std::string quoted(const std::string& text);
// A path inside a message: shown whole up to the longest path the system accepts (PATH_MAX,
// 4096 bytes; a real file's path is never cut), longer text cut as clipped() cuts it, to
// its first 4000 bytes; control bytes as \xHH.
std::string clipped_path(const std::string& path);
// A name inside a message (a tensor, file or key name read from input): shown whole up to
// 1024 bytes, since released tensor names reach 90 bytes and a cut name cannot be searched
// for; control bytes escaped and longer text cut as clipped() cuts, so a corrupt header's
// megabyte "name" still never floods a log.
std::string quoted_name(const std::string& name);

}  // namespace emb

// User-facing check: throws emb::Error with the streamed message.
#define EMB_CHECK(cond, ...)                                  \
  do {                                                        \
    if (!(cond)) throw ::emb::Error(::emb::str(__VA_ARGS__)); \
  } while (0)

// Internal invariant: a failure is a bug in embtrain, reported with the source location.
#define EMB_ASSERT(cond)                                                                  \
  do {                                                                                    \
    if (!(cond))                                                                          \
      throw ::emb::Error(::emb::str(__FILE__, ":", __LINE__, ": internal error: ", #cond)); \
  } while (0)
