// The tiny DreamZero encoders of the tests: make_tiny_encoders.py's upstream-format Wan files
// (Wan2.1_VAE, Wan2.2_VAE, umT5, CLIP as .pth and .safetensors, tiny_dims.json) written once per
// test program into a temporary folder, and the reference driver wan_encoders_reference.py run
// on a batch of jobs.
#pragma once
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "python_reference.hpp"

namespace emb::test {

struct TinyWan {
  std::string dir;  // holds wan/
  std::string wan() const { return dir + "/wan"; }
  std::string vae21() const { return wan() + "/Wan2.1_VAE.pth"; }
  std::string vae22() const { return wan() + "/Wan2.2_VAE.pth"; }
  std::string t5() const { return wan() + "/models_t5_umt5-xxl-enc-bf16.pth"; }
  std::string clip() const { return wan() + "/models_clip_open-clip-xlm-roberta-large-vit-huge-14.pth"; }
  TinyWan() {
    dir = make_temp_dir("tiny_wan");
    const std::string command = "/usr/bin/python3 " + std::string(PROJECT_SOURCE_DIR) +
                                "/tests/encoders_ref/make_tiny_encoders.py --which vae21,vae22,t5,clip --out " + dir +
                                " > /dev/null";
    BOOST_REQUIRE_MESSAGE(std::system(command.c_str()) == 0, "failed: " << command);
  }
};

inline const TinyWan& tiny_wan() {
  static const TinyWan t;
  return t;
}

template <class T>
std::vector<T> read_binary(const std::string& path) {
  const std::string bytes = read_file(path);
  std::vector<T> v(bytes.size() / sizeof(T));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
  return v;
}

template <class T>
void write_binary(const std::string& path, const std::vector<T>& v) {
  write_file(path, std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T)));
}

// Runs the jobs (wan_encoders_reference.py's request format) and returns each job's float64 output.
inline std::vector<std::vector<double>> run_wan_reference(const nlohmann::json& jobs, const std::string& dir) {
  run_python_reference("wan_encoders_reference.py", nlohmann::json{{"jobs", jobs}}, dir);
  std::vector<std::vector<double>> out;
  for (const auto& job : jobs) out.push_back(read_binary<double>(job["out"].get<std::string>()));
  return out;
}

// max|got − want| / max|want|
template <class Got>
double normwise_error(const Got& got, const std::vector<double>& want) {
  BOOST_REQUIRE_EQUAL(got.size(), want.size());
  double err = 0, scale = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    err = std::max(err, std::fabs(double(got[i]) - want[i]));
    scale = std::max(scale, std::fabs(want[i]));
  }
  return scale > 0 ? err / scale : err;
}

}  // namespace emb::test
