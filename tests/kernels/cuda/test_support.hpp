// Host helpers of the standalone CUDA tests and benchmarks: device detection, device arrays
// filled from and read back to fp32 host vectors (converting to the storage type), random data.
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <algorithm>
#include <random>
#include <type_traits>
#include <vector>

#include "core/dtype.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/op_types.hpp"
#ifdef EMB_CUDA_EMULATE
#include "kernels/cuda/emu/block_scheduler.hpp"
#include "kernels/cuda/emu/runtime.hpp"
#endif

namespace emb::cuda::testing {

// The types the kernels share with the Ops interface (kernels/op_types.hpp), as the tests and
// benchmarks name them (they use this namespace and emb::cuda).
using emb::Activation;
using emb::AdamWConfig;
using emb::AttnIndex;
using emb::AttnMask;
using emb::RopeMode;

// False when there is no usable GPU (no driver, no device): the callers then skip.
inline bool cuda_device_present() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

// How many schedules run_under_schedules tries: two under the emulation, one on a GPU.
#ifdef EMB_CUDA_EMULATE
constexpr int kSchedules = 2;
#else
constexpr int kSchedules = 1;
#endif

// Runs a test body (which downloads its results) once on a GPU. Under the emulation it runs
// it under the forward and then the reverse schedule (blocks, and the ready threads of each
// block, in opposite orders; in the reverse one each warp runs ahead to its next barrier,
// block_scheduler.hpp) and returns how many of its device-to-host copies differ between the
// two: a race or a missing barrier shows up as a difference.
template <class Body>
int64_t run_under_schedules(Body body) {
#ifdef EMB_CUDA_EMULATE
  std::vector<uint64_t> digests[kSchedules];
  const emu::Schedule schedules[kSchedules] = {{emu::Order::forward, 0, false}, {emu::Order::reverse, 0, true}};
  struct Restore {
    ~Restore() {
      emu::record_copies(nullptr);
      emu::set_schedule({});
    }
  } restore;
  for (int r = 0; r < kSchedules; ++r) {
    emu::set_schedule(schedules[r]);
    emu::record_copies(&digests[r]);
    body();
  }
  int64_t differing =
      int64_t(std::max(digests[0].size(), digests[1].size()) - std::min(digests[0].size(), digests[1].size()));
  for (size_t i = 0; i < std::min(digests[0].size(), digests[1].size()); ++i)
    differing += digests[0][i] != digests[1][i];
  return differing;
#else
  body();
  return 0;
#endif
}

// The value a float takes once stored as T (bf16 rounds to nearest even, as on the GPU).
template <class T>
float stored(float x) {
  if constexpr (std::is_same_v<T, float>)
    return x;
  else
    return to_float(to_bf16(x));
}

template <class T>
std::vector<float> stored(std::vector<float> v) {
  for (float& x : v) x = stored<T>(x);
  return v;
}

// A device array of n elements of T; owns its memory.
template <class T>
class DeviceArray {
 public:
  explicit DeviceArray(size_t n) : n_(n) { check_cuda(cudaMalloc(&ptr_, std::max<size_t>(n, 1) * sizeof(T)), "alloc"); }
  explicit DeviceArray(const std::vector<float>& host) : DeviceArray(host.size()) { upload(host); }
  ~DeviceArray() { cudaFree(ptr_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* get() const { return ptr_; }
  size_t size() const { return n_; }
  void upload(const std::vector<float>& host) {
    std::vector<T> raw(n_);
    for (size_t i = 0; i < n_; ++i) raw[i] = convert(host[i]);
    check_cuda(cudaMemcpy(ptr_, raw.data(), n_ * sizeof(T), cudaMemcpyHostToDevice), "upload");
  }
  std::vector<float> download() const {
    std::vector<T> raw(n_);
    check_cuda(cudaMemcpy(raw.data(), ptr_, n_ * sizeof(T), cudaMemcpyDeviceToHost), "download");
    std::vector<float> host(n_);
    for (size_t i = 0; i < n_; ++i) host[i] = back(raw[i]);
    return host;
  }

 private:
  static T convert(float x) {
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
      __nv_bfloat16_raw raw;
      raw.x = to_bf16(x).bits;
      return T(raw);
    } else {
      return static_cast<T>(x);
    }
  }
  static float back(T t) {
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
      const __nv_bfloat16_raw raw(t);
      return to_float(emb::bf16{raw.x});
    } else {
      return static_cast<float>(t);
    }
  }
  T* ptr_ = nullptr;
  size_t n_ = 0;
};

inline std::vector<float> random_normal(size_t n, std::mt19937& rng, float stddev = 1.0f) {
  std::normal_distribution<float> dist(0.0f, stddev);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// max |got − ref| / max |ref|: the normwise relative error the tolerances are stated in. NaN
// when any difference is NaN (std::max would drop it: a NaN result must fail, not vanish).
inline double relative_error(const std::vector<float>& got, const std::vector<double>& ref) {
  double err = 0.0, scale = 0.0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double d = std::fabs(double(got[i]) - ref[i]);
    if (std::isnan(d)) return d;
    err = std::max(err, d);
    scale = std::max(scale, std::fabs(ref[i]));
  }
  return scale > 0.0 ? err / scale : err;
}

}  // namespace emb::cuda::testing
