// Runs a command line (the embpack executable) and captures exit code, stdout and stderr.
#pragma once
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

namespace emb {

struct ToolResult {
  int code = 0;
  std::string out, err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline ToolResult run_tool(const std::string& command) {
  std::string base = "/tmp/embtrain_tool_" + std::to_string(getpid());
  int status = std::system((command + " >" + base + ".out 2>" + base + ".err").c_str());
  ToolResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(base + ".out"), r.err = slurp(base + ".err");
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  return r;
}

}  // namespace emb
