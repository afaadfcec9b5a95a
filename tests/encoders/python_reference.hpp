// Runs a Python reference script of tests/encoders on a JSON request and returns its JSON
// result; scratch files live in a fresh temporary folder.
#pragma once
#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace emb::test {

// Removes every folder make_temp_dir made when the test program ends.
struct TempDirs {
  std::vector<std::string> made;
  ~TempDirs() {
    for (const std::string& dir : made) std::filesystem::remove_all(dir);
  }
};

inline std::string make_temp_dir(const std::string& tag) {
  static TempDirs dirs;
  std::string pattern = "/tmp/embtrain_" + tag + "_XXXXXX";
  BOOST_REQUIRE(mkdtemp(pattern.data()) != nullptr);
  dirs.made.push_back(pattern);
  return pattern;
}

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  BOOST_REQUIRE(out.good());
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  BOOST_REQUIRE(in.good());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline nlohmann::json run_python_reference(const std::string& script, const nlohmann::json& request,
                                           const std::string& dir) {
  write_file(dir + "/request.json", request.dump());
  const std::string command = "/usr/bin/python3 " + std::string(PROJECT_SOURCE_DIR) + "/tests/encoders/" + script +
                              " " + dir + "/request.json " + dir + "/result.json";
  BOOST_REQUIRE_MESSAGE(std::system(command.c_str()) == 0, "failed: " << command);
  return nlohmann::json::parse(read_file(dir + "/result.json"));
}

// A file of float64 values (the references' outputs).
inline std::vector<double> read_doubles(const std::string& path) {
  const std::string bytes = read_file(path);
  std::vector<double> v(bytes.size() / sizeof(double));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(double));
  return v;
}

// A host fp32 vector as the bytes of a file (the references' inputs).
inline std::string float_bytes(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

// max |got − want| / max(1, max |want|) over [begin, end).
inline double relative_error(const std::vector<float>& got, const std::vector<double>& want, size_t begin,
                             size_t end) {
  double worst = 0, scale = 1;
  for (size_t i = begin; i < end; ++i) scale = std::max(scale, std::fabs(want[i]));
  for (size_t i = begin; i < end; ++i) worst = std::max(worst, std::fabs(double(got[i]) - want[i]));
  return worst / scale;
}

}  // namespace emb::test
