// Test helpers for the config suites: a private temporary directory to write decks into, and
// catching the one-line input error a bad deck or command line must raise.
#pragma once
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"

namespace emb_test {

class DeckTestDir {
 public:
  DeckTestDir() {
    static int count = 0;
    root_ = std::filesystem::temp_directory_path() /
            ("embtrain_config_" + std::to_string(getpid()) + "_" + std::to_string(count++));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  ~DeckTestDir() { std::filesystem::remove_all(root_); }
  DeckTestDir(const DeckTestDir&) = delete;
  DeckTestDir& operator=(const DeckTestDir&) = delete;

  // The path a file `name` (may contain folders) has in this directory, as the deck code
  // shows it in messages.
  std::string path(const std::string& name) const { return (root_ / name).string(); }

  // Writes `text` to `name`, creating folders, and returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    std::filesystem::path file = root_ / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << text;
    return file.string();
  }

 private:
  std::filesystem::path root_;
};

// Runs `f`, which must throw emb::Error with exit code 2 and a one-line message; returns it.
template <class F>
std::string input_error_of(F f) {
  try {
    f();
  } catch (const emb::Error& e) {
    BOOST_TEST(e.exit_code() == emb::kExitInput);
    std::string message = e.what();
    BOOST_TEST(message.find('\n') == std::string::npos);
    return message;
  }
  BOOST_FAIL("expected an emb::Error");
  return "";
}

}  // namespace emb_test
