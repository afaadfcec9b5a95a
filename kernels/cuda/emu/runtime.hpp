// The emulated CUDA runtime beyond cuda_runtime_api.h (which runtime.cpp implements): kernel
// launches, work queued on a stream by the cuBLASLt stand-in, and the record of device-to-host
// copies that the two-schedule check compares.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace emb::emu {

struct LaunchConfig {
  const char* kernel;
  dim3 grid, block;
  size_t shared_bytes;
  cudaStream_t stream;
};

// Checks the configuration as a GPU does (a bad one sets the launch error, as
// cudaGetLastError reports) and queues the grid on the stream.
void launch(const LaunchConfig& config, std::function<void()> body);

// Queues work on a stream. Work runs lazily, in queue order, at the next synchronising call
// (a host that reads device memory without synchronising sees stale data, as it may on a GPU).
void enqueue(cudaStream_t stream, const char* what, std::function<void()> work);

// Which stream runs first when several have work ready at a synchronising call: `issue`
// runs all work in the order it was issued (events then order nothing further); the other two
// run each stream as far ahead as its event waits allow, oldest or newest stream first, so
// work that lacks a wait on another stream's event runs before or after that work and the
// result changes. The environment's EMB_EMU_STREAM_ORDER (issue, oldest_first, newest_first)
// sets it at start-up.
enum class StreamOrder { issue, oldest_first, newest_first };
void set_stream_order(StreamOrder order);
StreamOrder stream_order();

// Reports an API misuse on stderr and returns `code`, which cudaGetErrorString then explains.
cudaError_t api_error(cudaError_t code, const std::string& message);

// True for an address inside a cudaMalloc allocation (global memory).
bool is_device_memory(const void* p);

// While a sink is set, every device-to-host copy appends a 64-bit digest of its bytes.
void record_copies(std::vector<uint64_t>* sink);

}  // namespace emb::emu
