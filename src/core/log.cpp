#include "core/log.hpp"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <mutex>

namespace emb {
namespace {
int g_rank = 0;
int g_world = 1;
std::mutex g_mutex;
std::ofstream g_file;
}  // namespace

void set_log_rank(int rank, int world_size) {
  g_rank = rank;
  g_world = world_size;
}

void set_log_file(const std::string& path) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_file.is_open()) g_file.close();
  if (!path.empty() && g_rank == 0) {
    g_file.open(path, std::ios::app);
    EMB_CHECK(g_file.good(), path, ": cannot open log file for writing");
  }
}

void log_line(const std::string& line) {
  if (g_rank != 0) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  std::cout << line << std::endl;
  if (g_file.is_open()) g_file << line << std::endl;
}

void warn_line(const std::string& line) {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::string text = g_world > 1 ? str("[rank ", g_rank, "] warning: ", line) : "warning: " + line;
  std::cerr << text << std::endl;
  if (g_file.is_open()) g_file << text << std::endl;
}

void error_line(const std::string& text) {
  std::fputs(((g_world > 1 ? "\n" : "") + text).c_str(), stderr);
  std::fflush(stderr);
}

}  // namespace emb
