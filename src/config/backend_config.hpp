// The backend a rank computes on (the [run] device keys; BACKENDS.md). kernels/make_ops.hpp
// makes it.
#pragma once

namespace emb {

enum class Device { cpu, cuda };

inline const char* device_name(Device d) { return d == Device::cuda ? "cuda" : "cpu"; }

struct BackendConfig {
  Device device = Device::cpu;  // run.device
  bool cuda_graphs = false;     // run.cuda_graphs = on: micro-batches as CUDA graphs
  bool deterministic = false;   // run.deterministic = on: the Hopper attention backward without atomics
};

}  // namespace emb
