// The subset of the CUDA runtime API the project uses, over host memory: device allocations
// are host allocations (ASan sees overruns; fresh memory reads as 0xff bytes, NaN in floats),
// streams queue work that runs lazily at the next synchronising call, events order and time
// that work (times are host times: meaningless for speed), and stream capture records the
// calls into a graph that a launch replays. Each stream keeps its own queue: work runs in its
// stream's order, after the events it waits on, and the legacy default stream is a barrier
// (stricter than CUDA, never looser); which ready stream runs first is the stream order
// (runtime.hpp), so a missing event wait between two streams changes results under one of
// the orders. A kernel fault (block_scheduler.hpp) is a sticky error, as on a GPU: every later
// call returns it, and cudaGetErrorString says what happened.
#include "kernels/cuda/emu/runtime.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "kernels/cuda/emu/block_scheduler.hpp"

struct Op {
  std::string what;
  std::function<void()> work;
};

// Work issued on a stream and not run yet: an operation, or a wait until an event's
// `record`-th recording has run (cudaStreamWaitEvent).
struct Issued {
  Op op;
  uint64_t seq;  // issue order over all streams
  struct CUevent_st* event = nullptr;
  uint64_t record = 0;
};

struct CUstream_st {
  unsigned flags = 0;
  uint64_t created = 0;  // creation order, for the stream orders
  bool capturing = false;
  bool capture_invalidated = false;
  std::vector<Op> captured;
  std::deque<Issued> queue;
};

struct CUevent_st {
  bool recorded = false, completed = false;
  uint64_t records = 0, reached = 0;  // recordings issued / run
  double time_ms = 0.0;
  CUstream_st* captured_on = nullptr;
};

struct CUgraph_st {
  std::vector<Op> ops;
};

struct CUgraphExec_st {
  std::vector<Op> ops;
};

namespace emb::emu {

namespace {

StreamOrder order_from_environment() {
  const char* v = std::getenv("EMB_EMU_STREAM_ORDER");
  const std::string name = v ? v : "issue";
  if (name == "oldest_first") return StreamOrder::oldest_first;
  if (name == "newest_first") return StreamOrder::newest_first;
  if (name != "issue")
    std::fprintf(stderr, "emulated CUDA: EMB_EMU_STREAM_ORDER=%s is not issue, oldest_first or newest_first; using issue\n",
                 name.c_str());
  return StreamOrder::issue;
}

// The emulated GPU's memory: 16 GiB, or EMB_EMU_DEVICE_MEMORY bytes (a small GPU, to test what
// running out of memory does).
size_t memory_from_environment() {
  const char* v = std::getenv("EMB_EMU_DEVICE_MEMORY");
  return v && *v ? size_t(std::strtoull(v, nullptr, 10)) : size_t(16) << 30;
}

// EMB_EMU_FAIL_ALLOCATION = N: the N-th cudaMalloc of a non-zero size (counted from 1) runs out
// of memory, whatever the size, so a test can walk a run's allocations one by one; 0 = never.
uint64_t failing_allocation_from_environment() {
  const char* v = std::getenv("EMB_EMU_FAIL_ALLOCATION");
  return v && *v ? std::strtoull(v, nullptr, 10) : 0;
}

// CUDA_VISIBLE_DEVICES as the runtime reads it: set but empty, or a first entry that names no
// device ("-1"), hides the emulated GPU, so a test can run a CUDA build as on a CPU-only node.
bool gpu_hidden_by_environment() {
  const char* v = std::getenv("CUDA_VISIBLE_DEVICES");
  return v && (*v == '\0' || *v == '-');
}

struct Device {
  std::recursive_mutex mutex;
  CUstream_st legacy;                       // the default stream (0, cudaStreamLegacy, cudaStreamPerThread)
  std::vector<CUstream_st*> streams{&legacy};  // every live stream, legacy first
  uint64_t issued = 0, streams_created = 0;
  StreamOrder order = order_from_environment();
  std::map<uintptr_t, size_t> allocations;  // device memory: start → bytes
  std::set<const void*> pinned;
  cudaError_t sticky = cudaSuccess;
  cudaError_t last = cudaSuccess;
  std::map<int, std::string> messages;  // what cudaGetErrorString says, per code
  std::vector<uint64_t>* copy_digests = nullptr;
  int captures = 0;  // streams capturing now
  size_t allocated = 0;                  // bytes in `allocations`
  size_t memory = memory_from_environment();
  uint64_t allocations_made = 0;  // cudaMalloc calls of a non-zero size
  uint64_t failing_allocation = failing_allocation_from_environment();
};

Device& device() {
  static Device d;
  return d;
}

using Lock = std::lock_guard<std::recursive_mutex>;

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

CUstream_st* resolve(cudaStream_t s) {
  if (s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread) return &device().legacy;
  return s;
}

uint64_t digest(const void* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  const auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h ^ n;
}

// Whether the oldest work of stream s may run: its event (if it waits on one) was reached, and
// no earlier work is pending across the legacy stream's barrier.
bool ready(const CUstream_st* s) {
  Device& d = device();
  const Issued& w = s->queue.front();
  if (w.event && w.event->reached < w.record) return false;
  for (const CUstream_st* o : d.streams)
    if (o != s && !o->queue.empty() && o->queue.front().seq < w.seq && (s == &d.legacy || o == &d.legacy))
      return false;
  return true;
}

// The stream whose oldest work runs next under the stream order (null: nothing is ready).
CUstream_st* next_stream() {
  Device& d = device();
  CUstream_st* best = nullptr;
  for (CUstream_st* s : d.streams) {
    if (s->queue.empty() || !ready(s)) continue;
    const bool better = !best || (d.order == StreamOrder::issue          ? s->queue.front().seq < best->queue.front().seq
                                  : d.order == StreamOrder::oldest_first ? s->created < best->created
                                                                          : s->created > best->created);
    if (better) best = s;
  }
  return best;
}

// Runs queued operations, each stream in its order, until `done` (a stream or event
// synchronisation waits for its own work only; what else runs first is the stream order's
// choice) or nothing is left. After a fault the rest is dropped, as a GPU context that faulted
// runs nothing more.
void drain_until(const std::function<bool()>& done) {
  Device& d = device();
  Lock lock(d.mutex);
  while (!done()) {
    CUstream_st* s = next_stream();
    if (!s) break;
    Issued w = std::move(s->queue.front());
    s->queue.pop_front();
    if (d.sticky != cudaSuccess || w.event) continue;
    try {
      w.op.work();
    } catch (const std::exception& e) {
      d.sticky = cudaErrorLaunchFailure;
      d.messages[cudaErrorLaunchFailure] =
          "unspecified launch failure (emulated CUDA: " + w.op.what + ": " + e.what() + ")";
      std::fprintf(stderr, "emulated CUDA: %s: %s\n", w.op.what.c_str(), e.what());
    }
  }
  // Issue order satisfies every wait (an event is recorded before it is waited on), so work
  // that never became ready is a bug of the emulation.
  if (!done()) {
    std::fprintf(stderr, "emulated CUDA: queued work never became ready\n");
    std::abort();
  }
}

bool nothing_queued() {
  for (const CUstream_st* s : device().streams)
    if (!s->queue.empty()) return false;
  return true;
}

void drain() { drain_until(nothing_queued); }

void issue(CUstream_st* s, Issued w) {
  w.seq = ++device().issued;
  s->queue.push_back(std::move(w));
}

// A synchronous call: fails while a stream is capturing (it would break the capture).
cudaError_t synchronize(const char* call) {
  Device& d = device();
  if (d.captures > 0)
    return api_error(cudaErrorStreamCaptureUnsupported, std::string(call) + " while a stream is capturing");
  drain();
  return d.sticky;
}

// The allocation holding [p, p + n), or null.
bool is_device_range(const void* p, size_t n) {
  Device& d = device();
  const auto a = reinterpret_cast<uintptr_t>(p);
  auto it = d.allocations.upper_bound(a);
  if (it == d.allocations.begin()) return false;
  --it;
  return a >= it->first && a + n <= it->first + it->second;
}

bool is_device_pointer(const void* p) { return is_device_range(p, 1); }

cudaError_t check_copy(const char* call, void* dst, const void* src, size_t n, cudaMemcpyKind& kind) {
  if (kind == cudaMemcpyDefault)
    kind = is_device_pointer(src) ? (is_device_pointer(dst) ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost)
                                  : (is_device_pointer(dst) ? cudaMemcpyHostToDevice : cudaMemcpyHostToHost);
  const bool dst_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  const bool src_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  if (n == 0) return cudaSuccess;
  if (dst_dev && !is_device_range(dst, n))
    return api_error(cudaErrorInvalidValue, std::string(call) + ": destination [" + std::to_string(uintptr_t(dst)) +
                                                " + " + std::to_string(n) + ") is not inside one device allocation");
  if (src_dev && !is_device_range(src, n))
    return api_error(cudaErrorInvalidValue, std::string(call) + ": source [" + std::to_string(uintptr_t(src)) + " + " +
                                                std::to_string(n) + ") is not inside one device allocation");
  return cudaSuccess;
}

void copy_now(void* dst, const void* src, size_t n, cudaMemcpyKind kind) {
  std::memmove(dst, src, n);
  Device& d = device();
  if (kind == cudaMemcpyDeviceToHost && d.copy_digests) d.copy_digests->push_back(digest(dst, n));
}

const char* standard_message(cudaError_t e) {
  switch (e) {
    case cudaSuccess:
      return "no error";
    case cudaErrorInvalidValue:
      return "invalid argument";
    case cudaErrorMemoryAllocation:
      return "out of memory";
    case cudaErrorInvalidConfiguration:
      return "invalid configuration argument";
    case cudaErrorLaunchFailure:
      return "unspecified launch failure";
    case cudaErrorInvalidDevice:
      return "invalid device ordinal";
    case cudaErrorNoDevice:
      return "no CUDA-capable device is detected";
    case cudaErrorInvalidResourceHandle:
      return "invalid resource handle";
    case cudaErrorNotReady:
      return "device not ready";
    case cudaErrorStreamCaptureUnsupported:
      return "operation not permitted when stream is capturing";
    case cudaErrorStreamCaptureInvalidated:
      return "operation failed due to a previous error during capture";
    case cudaErrorIllegalState:
      return "the operation cannot be performed in the present state";
    default:
      return "emulated CUDA error";
  }
}

}  // namespace

cudaError_t api_error(cudaError_t code, const std::string& message) {
  Device& d = device();
  Lock lock(d.mutex);
  d.messages[int(code)] = std::string(standard_message(code)) + " (emulated CUDA: " + message + ")";
  if (d.last == cudaSuccess) d.last = code;
  std::fprintf(stderr, "emulated CUDA: %s\n", message.c_str());
  return code;
}

void enqueue(cudaStream_t stream, const char* what, std::function<void()> work) {
  Device& d = device();
  Lock lock(d.mutex);
  CUstream_st* s = resolve(stream);
  if (s->capturing)
    s->captured.push_back(Op{what, std::move(work)});
  else
    issue(s, Issued{Op{what, std::move(work)}, 0});
}

void set_stream_order(StreamOrder order) {
  Lock lock(device().mutex);
  device().order = order;
}

StreamOrder stream_order() { return device().order; }

void launch(const LaunchConfig& c, std::function<void()> body) {
  const dim3 g = c.grid, b = c.block;
  std::string bad;
  if (g.x == 0 || g.y == 0 || g.z == 0) bad = "a zero-sized grid";
  if (g.y > 65535 || g.z > 65535 || g.x > 2147483647u) bad = "a grid beyond (2^31-1, 65535, 65535)";
  if (b.x == 0 || b.y == 0 || b.z == 0 || b.x > 1024 || b.y > 1024 || b.z > 64 || uint64_t(b.x) * b.y * b.z > 1024)
    bad = "a block of " + std::to_string(b.x) + "x" + std::to_string(b.y) + "x" + std::to_string(b.z) +
          " threads (at most 1024, z at most 64)";
  if (c.shared_bytes > (size_t(227) << 10)) bad = "more than 227 KiB of dynamic shared memory";
  if (!bad.empty()) {
    api_error(cudaErrorInvalidConfiguration, std::string("launch of ") + c.kernel + " with grid (" +
                                                 std::to_string(g.x) + "," + std::to_string(g.y) + "," +
                                                 std::to_string(g.z) + "): " + bad);
    return;
  }
  const std::string kernel = c.kernel;
  enqueue(c.stream, c.kernel, [kernel, g, b, shared = c.shared_bytes, body = std::move(body)] {
    run_grid(kernel.c_str(), g, b, shared, body);
  });
}

bool is_device_memory(const void* p) {
  Lock lock(device().mutex);
  return is_device_pointer(p);
}

void record_copies(std::vector<uint64_t>* sink) {
  Lock lock(device().mutex);
  device().copy_digests = sink;
}

}  // namespace emb::emu

using namespace emb::emu;

extern "C" {

cudaError_t cudaGetLastError() {
  Device& d = device();
  Lock lock(d.mutex);
  if (d.sticky != cudaSuccess) return d.sticky;
  const cudaError_t e = d.last;
  d.last = cudaSuccess;
  return e;
}

cudaError_t cudaPeekAtLastError() {
  Device& d = device();
  return d.sticky != cudaSuccess ? d.sticky : d.last;
}

const char* cudaGetErrorString(cudaError_t e) {
  Device& d = device();
  Lock lock(d.mutex);
  auto it = d.messages.find(int(e));
  return it != d.messages.end() ? it->second.c_str() : standard_message(e);
}

const char* cudaGetErrorName(cudaError_t e) {
  switch (e) {
    case cudaSuccess:
      return "cudaSuccess";
    case cudaErrorInvalidValue:
      return "cudaErrorInvalidValue";
    case cudaErrorInvalidConfiguration:
      return "cudaErrorInvalidConfiguration";
    case cudaErrorLaunchFailure:
      return "cudaErrorLaunchFailure";
    default:
      return "cudaError (emulated)";
  }
}

cudaError_t cudaDeviceReset() {
  Device& d = device();
  Lock lock(d.mutex);
  for (CUstream_st* s : d.streams) s->queue.clear();
  d.sticky = d.last = cudaSuccess;
  d.messages.clear();
  return cudaSuccess;
}

cudaError_t cudaGetDeviceCount(int* count) {
  *count = gpu_hidden_by_environment() ? 0 : 1;
  return *count > 0 ? cudaSuccess : cudaErrorNoDevice;
}
cudaError_t cudaGetDevice(int* dev) {
  *dev = 0;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int dev) {
  return dev == 0 ? cudaSuccess
                  : api_error(cudaErrorInvalidDevice, "device " + std::to_string(dev) + " (one emulated)");
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int dev) {
  if (dev != 0) return api_error(cudaErrorInvalidDevice, "device " + std::to_string(dev) + " (one emulated)");
  *prop = cudaDeviceProp{};
  std::snprintf(prop->name, sizeof(prop->name), "embtrain CUDA emulation (host)");
  prop->major = 9;
  prop->minor = 0;
  prop->multiProcessorCount = 1;
  prop->warpSize = 32;
  prop->maxThreadsPerBlock = 1024;
  prop->sharedMemPerBlock = 48 << 10;
  prop->sharedMemPerBlockOptin = 227 << 10;
  prop->totalGlobalMem = device().memory;
  return cudaSuccess;
}

// Only the dynamic shared memory opt-in is understood; its limit is sharedMemPerBlockOptin. The
// emulation does not tie the opt-in to later launches (EMB_LAUNCH names a kernel, which may be
// an overload set, not a function address): a launch over 48 KiB without it passes here and
// fails on a GPU.
cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value) {
  if (func == nullptr) return api_error(cudaErrorInvalidDeviceFunction, "cudaFuncSetAttribute of a null function");
  if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize)
    return api_error(cudaErrorNotSupported, "cudaFuncSetAttribute: only cudaFuncAttributeMaxDynamicSharedMemorySize");
  if (value < 0 || value > (227 << 10))
    return api_error(cudaErrorInvalidValue,
                     "cudaFuncSetAttribute: " + std::to_string(value) + " bytes of dynamic shared memory (at most 227 KiB)");
  return cudaSuccess;
}

// Kernels have no register file here: numRegs is EMB_EMU_KERNEL_REGISTERS (read at each call, so
// that a test can set it), else 255, the most a thread may have, so that every setmaxnreg split
// fits (attention_wgmma_ring.cuh's prepare_launch).
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, const void* func) {
  if (func == nullptr) return api_error(cudaErrorInvalidDeviceFunction, "cudaFuncGetAttributes of a null function");
  *attr = cudaFuncAttributes{};
  const char* v = std::getenv("EMB_EMU_KERNEL_REGISTERS");
  attr->numRegs = v && *v ? std::atoi(v) : 255;
  attr->maxThreadsPerBlock = 1024;
  attr->maxDynamicSharedSizeBytes = 48 << 10;
  return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total) {
  Device& d = device();
  Lock lock(d.mutex);
  *total = d.memory;
  *free_bytes = d.memory - std::min(d.memory, d.allocated);
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize() { return synchronize("cudaDeviceSynchronize"); }

cudaError_t cudaMalloc(void** p, size_t bytes) {
  Device& d = device();
  Lock lock(d.mutex);
  if (d.sticky != cudaSuccess) return d.sticky;
  *p = nullptr;
  if (bytes == 0) return cudaSuccess;
  if (++d.allocations_made == d.failing_allocation)
    return api_error(cudaErrorMemoryAllocation, "cudaMalloc number " + std::to_string(d.allocations_made) +
                                                    " (EMB_EMU_FAIL_ALLOCATION)");
  if (bytes > d.memory - std::min(d.memory, d.allocated))
    return api_error(cudaErrorMemoryAllocation, "cudaMalloc of " + std::to_string(bytes) + " bytes with " +
                                                    std::to_string(d.allocated) + " of " + std::to_string(d.memory) +
                                                    " allocated");
  if (posix_memalign(p, 256, bytes) != 0)
    return api_error(cudaErrorMemoryAllocation, "cudaMalloc of " + std::to_string(bytes) + " bytes");
  std::memset(*p, 0xff, bytes);
  d.allocations[reinterpret_cast<uintptr_t>(*p)] = bytes;
  d.allocated += bytes;
  return cudaSuccess;
}

cudaError_t cudaFree(void* p) {
  if (p == nullptr) return cudaSuccess;
  Device& d = device();
  Lock lock(d.mutex);
  if (const cudaError_t e = synchronize("cudaFree"); e != cudaSuccess) return e;
  auto it = d.allocations.find(reinterpret_cast<uintptr_t>(p));
  if (it == d.allocations.end())
    return api_error(cudaErrorInvalidValue, "cudaFree of a pointer cudaMalloc did not return");
  d.allocated -= it->second;
  d.allocations.erase(it);
  std::free(p);
  return cudaSuccess;
}

cudaError_t cudaMallocAsync(void** p, size_t bytes, cudaStream_t) { return cudaMalloc(p, bytes); }

cudaError_t cudaFreeAsync(void* p, cudaStream_t stream) {
  Device& d = device();
  Lock lock(d.mutex);
  if (p && !is_device_pointer(p))
    return api_error(cudaErrorInvalidValue, "cudaFreeAsync of a pointer cudaMalloc did not return");
  enqueue(stream, "cudaFreeAsync", [p] {
    Lock l(device().mutex);
    const auto it = device().allocations.find(reinterpret_cast<uintptr_t>(p));
    if (it == device().allocations.end()) return;
    device().allocated -= it->second;
    device().allocations.erase(it);
    std::free(p);
  });
  return cudaSuccess;
}

cudaError_t cudaMallocHost(void** p, size_t bytes) {
  Device& d = device();
  Lock lock(d.mutex);
  *p = std::malloc(bytes ? bytes : 1);
  if (!*p) return api_error(cudaErrorMemoryAllocation, "cudaMallocHost of " + std::to_string(bytes) + " bytes");
  d.pinned.insert(*p);
  return cudaSuccess;
}

cudaError_t cudaHostAlloc(void** p, size_t bytes, unsigned) { return cudaMallocHost(p, bytes); }

cudaError_t cudaFreeHost(void* p) {
  Device& d = device();
  Lock lock(d.mutex);
  if (const cudaError_t e = synchronize("cudaFreeHost"); e != cudaSuccess) return e;
  if (!d.pinned.erase(p))
    return api_error(cudaErrorInvalidValue, "cudaFreeHost of a pointer cudaMallocHost did not return");
  std::free(p);
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t n, cudaMemcpyKind kind) {
  Device& d = device();
  Lock lock(d.mutex);
  if (const cudaError_t e = check_copy("cudaMemcpy", dst, src, n, kind); e != cudaSuccess) return e;
  if (const cudaError_t e = synchronize("cudaMemcpy"); e != cudaSuccess) return e;
  copy_now(dst, src, n, kind);
  return cudaSuccess;
}

// Pageable sources are staged at the call (the caller may reuse them at once, as CUDA
// allows); pageable destinations make the copy synchronous, as in CUDA; pinned memory is
// read and written when the copy runs.
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t n, cudaMemcpyKind kind, cudaStream_t stream) {
  Device& d = device();
  Lock lock(d.mutex);
  if (const cudaError_t e = check_copy("cudaMemcpyAsync", dst, src, n, kind); e != cudaSuccess) return e;
  if (d.sticky != cudaSuccess) return d.sticky;
  if (n == 0) return cudaSuccess;
  if (kind == cudaMemcpyHostToDevice && !d.pinned.count(src)) {
    auto staged = std::make_shared<std::vector<char>>(static_cast<const char*>(src), static_cast<const char*>(src) + n);
    enqueue(stream, "cudaMemcpyAsync", [dst, staged, kind] { copy_now(dst, staged->data(), staged->size(), kind); });
    return cudaSuccess;
  }
  enqueue(stream, "cudaMemcpyAsync", [dst, src, n, kind] { copy_now(dst, src, n, kind); });
  if (kind == cudaMemcpyDeviceToHost && !d.pinned.count(dst)) return synchronize("cudaMemcpyAsync to pageable memory");
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* p, int value, size_t n, cudaStream_t stream) {
  Device& d = device();
  Lock lock(d.mutex);
  if (d.sticky != cudaSuccess) return d.sticky;
  if (n && !is_device_range(p, n))
    return api_error(cudaErrorInvalidValue, "cudaMemset: [" + std::to_string(uintptr_t(p)) + " + " + std::to_string(n) +
                                                ") is not inside one device allocation");
  enqueue(stream, "cudaMemset", [p, value, n] { std::memset(p, value, n); });
  return cudaSuccess;
}

cudaError_t cudaMemset(void* p, int value, size_t n) { return cudaMemsetAsync(p, value, n, nullptr); }

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned flags) {
  Device& d = device();
  Lock lock(d.mutex);
  *s = new CUstream_st;
  (*s)->flags = flags;
  (*s)->created = ++d.streams_created;
  d.streams.push_back(*s);
  return cudaSuccess;
}
cudaError_t cudaStreamCreate(cudaStream_t* s) { return cudaStreamCreateWithFlags(s, cudaStreamDefault); }
cudaError_t cudaStreamCreateWithPriority(cudaStream_t* s, unsigned flags, int) {
  return cudaStreamCreateWithFlags(s, flags);
}

cudaError_t cudaStreamDestroy(cudaStream_t s) {
  if (s == nullptr || s->capturing)
    return api_error(cudaErrorInvalidResourceHandle, "cudaStreamDestroy of this stream");
  Device& d = device();
  Lock lock(d.mutex);
  drain();  // its queued work still runs, as on a GPU
  d.streams.erase(std::find(d.streams.begin(), d.streams.end(), s));
  delete s;
  return cudaSuccess;
}

// Waits for the stream's own work (the legacy stream's waits for all work issued before it).
cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  CUstream_st* stream = resolve(s);
  if (stream->capturing)
    return api_error(cudaErrorStreamCaptureUnsupported, "cudaStreamSynchronize of a capturing stream");
  if (stream == &device().legacy) return synchronize("cudaStreamSynchronize");
  if (device().captures > 0)
    return api_error(cudaErrorStreamCaptureUnsupported, "cudaStreamSynchronize while a stream is capturing");
  drain_until([stream] { return stream->queue.empty(); });
  return device().sticky;
}

cudaError_t cudaStreamQuery(cudaStream_t s) { return cudaStreamSynchronize(s); }

// Work issued on s later runs after the event's latest recording (none: no wait). Inside a
// capture the recorded calls keep their order, so a wait on the capturing stream's own event
// is already satisfied.
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned) {
  if (e == nullptr) return api_error(cudaErrorInvalidResourceHandle, "cudaStreamWaitEvent on a null event");
  Device& d = device();
  Lock lock(d.mutex);
  CUstream_st* stream = resolve(s);
  if (e->captured_on && e->captured_on != stream)
    return api_error(cudaErrorStreamCaptureUnsupported,
                     "cudaStreamWaitEvent joining two streams into a capture (not emulated)");
  if (!stream->capturing && !e->captured_on && e->records > 0)
    issue(stream, Issued{Op{"cudaStreamWaitEvent", nullptr}, 0, e, e->records});
  return d.sticky;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned) {
  *e = new CUevent_st;
  return cudaSuccess;
}
cudaError_t cudaEventCreate(cudaEvent_t* e) { return cudaEventCreateWithFlags(e, cudaEventDefault); }
cudaError_t cudaEventDestroy(cudaEvent_t e) {
  delete e;
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
  if (e == nullptr) return api_error(cudaErrorInvalidResourceHandle, "cudaEventRecord of a null event");
  Device& d = device();
  Lock lock(d.mutex);
  CUstream_st* stream = resolve(s);
  e->recorded = true;
  e->completed = false;
  e->captured_on = stream->capturing ? stream : nullptr;
  const uint64_t record = stream->capturing ? 0 : ++e->records;
  enqueue(s, "cudaEventRecord", [e, record] {
    e->completed = true;
    e->reached = std::max(e->reached, record);
    e->time_ms = now_ms();
  });
  return d.sticky;
}

// Waits until the event's latest recording ran (at once for an event never recorded).
// Inside a capture every recording is a node of the graph (cudaEventRecordExternal's meaning);
// the other flags change nothing here.
cudaError_t cudaEventRecordWithFlags(cudaEvent_t e, cudaStream_t s, unsigned) { return cudaEventRecord(e, s); }

cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  if (e == nullptr) return api_error(cudaErrorInvalidResourceHandle, "cudaEventSynchronize of a null event");
  if (device().captures > 0)
    return api_error(cudaErrorStreamCaptureUnsupported, "cudaEventSynchronize while a stream is capturing");
  const uint64_t record = e->records;
  drain_until([e, record] { return e->reached >= record; });
  return device().sticky;
}

cudaError_t cudaEventQuery(cudaEvent_t e) { return cudaEventSynchronize(e); }

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  if (const cudaError_t e = synchronize("cudaEventElapsedTime"); e != cudaSuccess) return e;
  if (!start->completed || !end->completed)
    return api_error(cudaErrorInvalidResourceHandle, "cudaEventElapsedTime of an event never recorded");
  *ms = float(end->time_ms - start->time_ms);
  return cudaSuccess;
}

cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode) {
  CUstream_st* stream = resolve(s);
  if (stream == &device().legacy)
    return api_error(cudaErrorStreamCaptureUnsupported, "capturing the legacy default stream");
  if (stream->capturing)
    return api_error(cudaErrorIllegalState, "cudaStreamBeginCapture of a stream already capturing");
  stream->capturing = true;
  stream->capture_invalidated = false;
  stream->captured.clear();
  ++device().captures;
  return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t* graph) {
  CUstream_st* stream = resolve(s);
  if (!stream->capturing) return api_error(cudaErrorIllegalState, "cudaStreamEndCapture of a stream not capturing");
  stream->capturing = false;
  --device().captures;
  *graph = new CUgraph_st{std::move(stream->captured)};
  stream->captured.clear();
  return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t s, cudaStreamCaptureStatus* status) {
  *status = resolve(s)->capturing ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
  return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long) {
  *exec = new CUgraphExec_st{graph->ops};
  return cudaSuccess;
}

cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* count) {
  if (nodes) return api_error(cudaErrorNotSupported, "cudaGraphGetNodes: only the count is emulated");
  *count = graph->ops.size();
  return cudaSuccess;
}

// The update takes the graph's calls when they are the same sequence of operations (the same
// kernels, copies, sets and event records, in order): stricter than CUDA, which lets a kernel
// node change its function, never looser.
cudaError_t cudaGraphExecUpdate(cudaGraphExec_t exec, cudaGraph_t graph, cudaGraphExecUpdateResultInfo* info) {
  bool same = exec->ops.size() == graph->ops.size();
  for (size_t i = 0; same && i < graph->ops.size(); ++i) same = exec->ops[i].what == graph->ops[i].what;
  if (info) *info = cudaGraphExecUpdateResultInfo{};
  if (!same) {
    if (info) info->result = cudaGraphExecUpdateErrorTopologyChanged;
    Device& d = device();
    Lock lock(d.mutex);
    if (d.last == cudaSuccess) d.last = cudaErrorGraphExecUpdateFailure;
    return cudaErrorGraphExecUpdateFailure;
  }
  exec->ops = graph->ops;
  if (info) info->result = cudaGraphExecUpdateSuccess;
  return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s) {
  for (const Op& op : exec->ops) enqueue(s, op.what.c_str(), op.work);
  return device().sticky;
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  delete graph;
  return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  delete exec;
  return cudaSuccess;
}

}  // extern "C"
