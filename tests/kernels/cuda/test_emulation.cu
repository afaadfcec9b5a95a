// The emulation's own rules (block_scheduler.hpp, runtime.cpp, cublaslt.cpp): warp collectives
// compute what CUDA specifies, misuse is a clear error rather than undefined behaviour, the
// schedules expose a missing barrier, and the runtime queues, captures and checks as stated.
#define BOOST_TEST_MODULE emulation
#include <boost/test/unit_test.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/cuda/emu/block_scheduler.hpp"
#include "kernels/cuda/emu/runtime.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/mma.cuh"
#include "kernels/cuda/tma.cuh"
#include "kernels/cuda/wgmma.cuh"

namespace {

template <class T>
struct Buffer {  // a device array of n elements
  T* p = nullptr;
  size_t n;
  explicit Buffer(size_t count) : n(count) { BOOST_REQUIRE_EQUAL(cudaMalloc(&p, n * sizeof(T)), cudaSuccess); }
  ~Buffer() { cudaFree(p); }
  std::vector<T> download() const {
    std::vector<T> h(n);
    BOOST_REQUIRE_EQUAL(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return h;
  }
};

// The error a faulting launch leaves, then a clean device for the next test.
std::string fault_of_last_launch() {
  const cudaError_t e = cudaDeviceSynchronize();
  const std::string message = e == cudaSuccess ? "" : cudaGetErrorString(e);
  cudaDeviceReset();
  return message;
}

// out[8·i + j]: lane i's results of eight collectives.
__global__ void collectives_kernel(int* out) {
  const int lane = threadIdx.x % 32, i = threadIdx.x;
  out[8 * i + 0] = __shfl_xor_sync(0xffffffffu, lane, 5);
  out[8 * i + 1] = __shfl_down_sync(0xffffffffu, lane, 3);
  out[8 * i + 2] = __shfl_up_sync(0xffffffffu, lane, 2, 8);
  out[8 * i + 3] = __shfl_sync(0xffffffffu, lane, 31 - lane);
  out[8 * i + 4] = int(__ballot_sync(0xffffffffu, lane % 3 == 0));
  out[8 * i + 5] = __any_sync(0xffffffffu, lane == 7);
  out[8 * i + 6] = __all_sync(0xffffffffu, lane < 31);
  __syncwarp();
  out[8 * i + 7] = __shfl_xor_sync(0xffffffffu, lane, 4, 4);  // the partner leaves the width-4 segment
}

BOOST_AUTO_TEST_CASE(shuffles_and_votes_follow_cuda) {
  Buffer<int> out(64 * 8);
  EMB_LAUNCH(collectives_kernel, 1, 64, 0, nullptr)(out.p);
  const std::vector<int> h = out.download();
  unsigned ballot = 0;
  for (int l = 0; l < 32; l += 3) ballot |= 1u << l;
  for (int i = 0; i < 64; ++i) {
    const int l = i % 32;
    BOOST_TEST(h[8 * i + 0] == (l ^ 5));
    BOOST_TEST(h[8 * i + 1] == (l + 3 < 32 ? l + 3 : l));
    BOOST_TEST(h[8 * i + 2] == (l % 8 >= 2 ? l - 2 : l));
    BOOST_TEST(h[8 * i + 3] == 31 - l);
    BOOST_TEST(unsigned(h[8 * i + 4]) == ballot);
    BOOST_TEST(h[8 * i + 5] == 1);
    BOOST_TEST(h[8 * i + 6] == 0);
    BOOST_TEST(h[8 * i + 7] == l);
  }
}

__global__ void divergent_shuffle_kernel(int* out) {
  if (threadIdx.x < 16) out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, int(threadIdx.x), 1);
}
__global__ void partial_mask_kernel(int* out) { out[threadIdx.x] = __shfl_xor_sync(0x0000ffffu, int(threadIdx.x), 1); }
__global__ void barrier_not_reached_kernel(int* out) {
  if (threadIdx.x == 3) return;
  __syncthreads();
  out[threadIdx.x] = 1;
}
__global__ void divergent_barriers_kernel(int* out) {
  if (threadIdx.x < 32)
    __syncthreads();
  else
    __syncthreads();
  out[threadIdx.x] = 1;
}
__global__ void shuffle_against_barrier_kernel(int* out) {
  if (threadIdx.x % 32 < 16)
    __syncthreads();
  else
    out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1, 1);
}

BOOST_AUTO_TEST_CASE(misuse_is_a_clear_error) {
  Buffer<int> out(64);
  EMB_LAUNCH(divergent_shuffle_kernel, 1, 32, 0, nullptr)(out.p);
  BOOST_TEST(fault_of_last_launch().find("exited while lanes of its warp wait at __shfl_xor_sync") !=
             std::string::npos);
  EMB_LAUNCH(partial_mask_kernel, 1, 32, 0, nullptr)(out.p);
  BOOST_TEST(fault_of_last_launch().find("partial masks are not emulated") != std::string::npos);
  EMB_LAUNCH(barrier_not_reached_kernel, 1, 64, 0, nullptr)(out.p);
  const std::string not_reached = fault_of_last_launch();
  BOOST_TEST(not_reached.find("a barrier every thread must reach") != std::string::npos);
  BOOST_TEST(not_reached.find("barrier_not_reached_kernel") != std::string::npos);
  EMB_LAUNCH(divergent_barriers_kernel, 1, 64, 0, nullptr)(out.p);
  BOOST_TEST(fault_of_last_launch().find("while other threads wait at __syncthreads") != std::string::npos);
  EMB_LAUNCH(shuffle_against_barrier_kernel, 1, 64, 0, nullptr)(out.p);
  BOOST_TEST(fault_of_last_launch().find("divergent warp") != std::string::npos);
  // The device works again after a reset.
  Buffer<int> results(32 * 8);
  EMB_LAUNCH(collectives_kernel, 1, 32, 0, nullptr)(results.p);
  BOOST_TEST(cudaDeviceSynchronize() == cudaSuccess);
}

// Each thread stores its index in shared memory and reads its neighbour's: without the
// barrier, what it reads depends on which thread ran first.
template <bool kBarrier>
__global__ void neighbour_kernel(int* out) {
  __shared__ int s[64];
  s[threadIdx.x] = int(threadIdx.x) + 1;
  if (kBarrier) __syncthreads();
  out[threadIdx.x] = s[(threadIdx.x + 1) % 64];
}

template <bool kBarrier>
std::vector<int> neighbours_under(emb::emu::Order order) {
  emb::emu::set_schedule({order, 0});
  Buffer<int> out(64);
  EMB_LAUNCH(neighbour_kernel<kBarrier>, 1, 64, 0, nullptr)(out.p);
  std::vector<int> h = out.download();
  emb::emu::set_schedule({});
  return h;
}

BOOST_AUTO_TEST_CASE(schedules_expose_a_missing_barrier) {
  BOOST_TEST((neighbours_under<true>(emb::emu::Order::forward) == neighbours_under<true>(emb::emu::Order::reverse)));
  BOOST_TEST((neighbours_under<true>(emb::emu::Order::forward) == neighbours_under<true>(emb::emu::Order::shuffled)));
  BOOST_TEST((neighbours_under<false>(emb::emu::Order::forward) != neighbours_under<false>(emb::emu::Order::reverse)));
}

// Each thread copies one 16-byte row with cp.async, waits for its own copy, then reads the row
// another warp copied: without a barrier after the wait that row may not have landed yet.
template <bool kBarrier>
__global__ void async_neighbour_kernel(const int4* in, int* out) {
  __shared__ __align__(16) int4 s[64];
  s[threadIdx.x] = int4{-1, -1, -1, -1};
  __syncthreads();
  emb::cuda::cp_async_16(&s[threadIdx.x], &in[threadIdx.x]);
  emb::cuda::cp_async_commit();
  emb::cuda::cp_async_wait<0>();
  if (kBarrier) __syncthreads();
  out[threadIdx.x] = s[(threadIdx.x + 32) % 64].x;
}

template <bool kBarrier>
std::vector<int> async_neighbours_under(emb::emu::Schedule schedule) {
  std::vector<int4> rows(64);
  for (int i = 0; i < 64; ++i) rows[size_t(i)] = int4{i, i, i, i};
  Buffer<int4> in(64);
  BOOST_REQUIRE_EQUAL(cudaMemcpy(in.p, rows.data(), sizeof(int4) * 64, cudaMemcpyHostToDevice), cudaSuccess);
  Buffer<int> out(64);
  emb::emu::set_schedule(schedule);
  EMB_LAUNCH(async_neighbour_kernel<kBarrier>, 1, 64, 0, nullptr)(in.p, out.p);
  std::vector<int> h = out.download();
  emb::emu::set_schedule({});
  return h;
}

// With warps running ahead, a warp reads right after its own cp_async_wait, before the other
// warp's copies were performed; in lockstep the wait's yield happens to hide the missing barrier.
BOOST_AUTO_TEST_CASE(warps_running_ahead_expose_a_missing_barrier_after_cp_async_wait) {
  using emb::emu::Order;
  std::vector<int> expected(64);
  for (int i = 0; i < 64; ++i) expected[size_t(i)] = (i + 32) % 64;
  for (bool ahead : {false, true})
    BOOST_TEST((async_neighbours_under<true>({Order::reverse, 0, ahead}) == expected));
  BOOST_TEST((async_neighbours_under<false>({Order::reverse, 0, false}) == expected));
  BOOST_TEST((async_neighbours_under<false>({Order::reverse, 0, true}) != expected));
}

__global__ void count_kernel(int* counter, int* out) {
  atomicAdd(counter, 1);
  EMB_DYNAMIC_SHARED(int, scratch);
  scratch[threadIdx.x] = int(blockIdx.x);
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = scratch[blockDim.x - 1];
}

BOOST_AUTO_TEST_CASE(atomics_and_dynamic_shared_memory) {
  Buffer<int> counter(1), out(4);
  BOOST_REQUIRE_EQUAL(cudaMemset(counter.p, 0, sizeof(int)), cudaSuccess);
  EMB_LAUNCH(count_kernel, 4, 96, 96 * sizeof(int), nullptr)(counter.p, out.p);
  BOOST_TEST(counter.download()[0] == 4 * 96);
  BOOST_TEST(out.download() == std::vector<int>({0, 1, 2, 3}), boost::test_tools::per_element());
}

__global__ void add_kernel(int* x, int n, int v) {
  for (int i = int(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += int(gridDim.x * blockDim.x)) x[i] += v;
}

BOOST_AUTO_TEST_CASE(launch_configuration_errors) {
  Buffer<int> x(8);
  EMB_LAUNCH(add_kernel, 0, 32, 0, nullptr)(x.p, 8, 1);
  BOOST_TEST(cudaGetLastError() == cudaErrorInvalidConfiguration);
  BOOST_TEST(std::string(cudaGetErrorString(cudaErrorInvalidConfiguration)).find("zero-sized grid") !=
             std::string::npos);
  EMB_LAUNCH(add_kernel, 1, 2048, 0, nullptr)(x.p, 8, 1);
  BOOST_TEST(cudaGetLastError() == cudaErrorInvalidConfiguration);
  BOOST_TEST(cudaGetLastError() == cudaSuccess);  // launch errors are not sticky
}

// The dynamic shared memory opt-in (runtime.cpp): accepted up to sharedMemPerBlockOptin.
BOOST_AUTO_TEST_CASE(shared_memory_opt_in) {
  const void* kernel = reinterpret_cast<const void*>(&add_kernel);
  BOOST_TEST(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 << 10) == cudaSuccess);
  BOOST_TEST(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (227 << 10) + 1) ==
             cudaErrorInvalidValue);
  BOOST_TEST(cudaFuncSetAttribute(nullptr, cudaFuncAttributeMaxDynamicSharedMemorySize, 0) ==
             cudaErrorInvalidDeviceFunction);
  BOOST_TEST(cudaGetLastError() == cudaErrorInvalidValue);  // the first error, then cleared
  BOOST_TEST(cudaGetLastError() == cudaSuccess);
}

BOOST_AUTO_TEST_CASE(work_runs_at_synchronisation_and_graphs_replay) {
  Buffer<int> x(8);
  BOOST_REQUIRE_EQUAL(cudaMemset(x.p, 0, 8 * sizeof(int)), cudaSuccess);
  cudaStream_t s;
  BOOST_REQUIRE_EQUAL(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  EMB_LAUNCH(add_kernel, 1, 32, 0, s)(x.p, 8, 5);
  int unsynchronised;
  std::memcpy(&unsynchronised, x.p, sizeof(int));  // a host read without synchronising (illegal on a GPU)
  BOOST_TEST(unsynchronised != 5);
  BOOST_REQUIRE_EQUAL(cudaStreamSynchronize(s), cudaSuccess);
  BOOST_TEST(x.download()[7] == 5);

  cudaGraph_t graph;
  cudaGraphExec_t exec;
  BOOST_REQUIRE_EQUAL(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
  EMB_LAUNCH(add_kernel, 1, 32, 0, s)(x.p, 8, 2);
  BOOST_TEST(cudaDeviceSynchronize() == cudaErrorStreamCaptureUnsupported);
  BOOST_REQUIRE_EQUAL(cudaStreamEndCapture(s, &graph), cudaSuccess);
  BOOST_REQUIRE_EQUAL(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  cudaGetLastError();
  BOOST_TEST(x.download()[0] == 5);  // captured, not run
  for (int i = 0; i < 3; ++i) BOOST_REQUIRE_EQUAL(cudaGraphLaunch(exec, s), cudaSuccess);
  BOOST_REQUIRE_EQUAL(cudaStreamSynchronize(s), cudaSuccess);
  BOOST_TEST(x.download()[0] == 11);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(s);
}

// Streams keep their own queues: under `issue` work runs in issue order, under the other stream
// orders each stream runs as far as its event waits allow, so a read on stream `reader` of what
// stream `writer` wrote without waiting on writer's event sees the old data under
// `newest_first` (reader was created last), and the right data under every order with the wait.
BOOST_AUTO_TEST_CASE(stream_orders_expose_a_missing_event_wait) {
  using emb::emu::StreamOrder;
  for (bool wait : {true, false})
    for (StreamOrder order : {StreamOrder::issue, StreamOrder::oldest_first, StreamOrder::newest_first}) {
      emb::emu::set_stream_order(order);
      Buffer<int> x(8), y(8);
      BOOST_REQUIRE_EQUAL(cudaMemset(x.p, 0, 8 * sizeof(int)), cudaSuccess);
      cudaStream_t writer, reader;
      cudaEvent_t written;
      BOOST_REQUIRE_EQUAL(cudaStreamCreateWithFlags(&writer, cudaStreamNonBlocking), cudaSuccess);
      BOOST_REQUIRE_EQUAL(cudaStreamCreateWithFlags(&reader, cudaStreamNonBlocking), cudaSuccess);
      BOOST_REQUIRE_EQUAL(cudaEventCreate(&written), cudaSuccess);
      BOOST_REQUIRE_EQUAL(cudaStreamSynchronize(writer), cudaSuccess);  // the memset is done
      EMB_LAUNCH(add_kernel, 1, 32, 0, writer)(x.p, 8, 5);
      BOOST_REQUIRE_EQUAL(cudaEventRecord(written, writer), cudaSuccess);
      if (wait) BOOST_REQUIRE_EQUAL(cudaStreamWaitEvent(reader, written, 0), cudaSuccess);
      BOOST_REQUIRE_EQUAL(cudaMemcpyAsync(y.p, x.p, 8 * sizeof(int), cudaMemcpyDeviceToDevice, reader), cudaSuccess);
      BOOST_REQUIRE_EQUAL(cudaStreamSynchronize(reader), cudaSuccess);
      const bool stale = !wait && order == StreamOrder::newest_first;
      BOOST_TEST(y.download()[3] == (stale ? 0 : 5), "wait " << wait << ", order " << int(order));
      cudaEventDestroy(written);
      cudaStreamDestroy(writer);
      cudaStreamDestroy(reader);
    }
  emb::emu::set_stream_order(StreamOrder::issue);
}

BOOST_AUTO_TEST_CASE(copies_outside_an_allocation_are_refused) {
  Buffer<int> x(8);
  std::vector<int> h(16);
  BOOST_TEST(cudaMemcpy(h.data(), x.p, 16 * sizeof(int), cudaMemcpyDeviceToHost) == cudaErrorInvalidValue);
  BOOST_TEST(cudaMemcpy(x.p + 4, h.data(), 8 * sizeof(int), cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
  cudaGetLastError();
}

BOOST_AUTO_TEST_CASE(cublaslt_refuses_what_it_does_not_emulate) {
  cublasLtHandle_t handle;
  cublasLtMatmulDesc_t op;
  cublasLtMatrixLayout_t a, b, d;
  cublasLtMatmulPreference_t pref;
  BOOST_REQUIRE(cublasLtCreate(&handle) == CUBLAS_STATUS_SUCCESS);
  BOOST_REQUIRE(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS);
  const cublasLtEpilogue_t gelu = CUBLASLT_EPILOGUE_GELU;
  BOOST_REQUIRE(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &gelu, sizeof(gelu)) ==
                CUBLAS_STATUS_SUCCESS);
  cublasLtMatrixLayoutCreate(&a, CUDA_R_32F, 4, 4, 4);
  cublasLtMatrixLayoutCreate(&b, CUDA_R_32F, 4, 4, 4);
  cublasLtMatrixLayoutCreate(&d, CUDA_R_32F, 4, 4, 4);
  cublasLtMatmulPreferenceCreate(&pref);
  cublasLtMatmulHeuristicResult_t result;
  int found = -1;
  BOOST_TEST(cublasLtMatmulAlgoGetHeuristic(handle, op, a, b, d, d, pref, 1, &result, &found) ==
             CUBLAS_STATUS_NOT_SUPPORTED);
  BOOST_TEST(found == 0);
  const cublasLtEpilogue_t none = CUBLASLT_EPILOGUE_DEFAULT;
  cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &none, sizeof(none));
  cublasLtMatrixLayout_t wrong;
  cublasLtMatrixLayoutCreate(&wrong, CUDA_R_32F, 5, 4, 5);
  BOOST_TEST(cublasLtMatmulAlgoGetHeuristic(handle, op, wrong, b, d, d, pref, 1, &result, &found) ==
             CUBLAS_STATUS_INVALID_VALUE);
  BOOST_TEST(cublasLtMatmulAlgoGetHeuristic(handle, op, a, b, d, d, pref, 1, &result, &found) == CUBLAS_STATUS_SUCCESS);
  BOOST_TEST(found == 1);
  // Mixed types as cuBLASLt's CUBLAS_COMPUTE_32F table has them: bf16 A and B into fp32 D, not
  // fp32 A and B into bf16 D.
  cublasLtMatrixLayout_t a16, b16, d16;
  cublasLtMatrixLayoutCreate(&a16, CUDA_R_16BF, 4, 4, 4);
  cublasLtMatrixLayoutCreate(&b16, CUDA_R_16BF, 4, 4, 4);
  cublasLtMatrixLayoutCreate(&d16, CUDA_R_16BF, 4, 4, 4);
  BOOST_TEST(cublasLtMatmulAlgoGetHeuristic(handle, op, a16, b16, d, d, pref, 1, &result, &found) ==
             CUBLAS_STATUS_SUCCESS);
  BOOST_TEST(cublasLtMatmulAlgoGetHeuristic(handle, op, a, b, d16, d16, pref, 1, &result, &found) ==
             CUBLAS_STATUS_NOT_SUPPORTED);
  for (cublasLtMatrixLayout_t l : {a, b, d, wrong, a16, b16, d16}) cublasLtMatrixLayoutDestroy(l);
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatmulDescDestroy(op);
  cublasLtDestroy(handle);
}

// The epilogue rules of cublasLt.h the stand-in enforces: GELU_AUX needs an aux pointer and an aux
// leading dimension divisible by 8 and >= m; BGRADA needs a bias pointer; both are offered then.
BOOST_AUTO_TEST_CASE(cublaslt_checks_epilogue_operands) {
  cublasLtHandle_t handle;
  cublasLtMatmulDesc_t op;
  cublasLtMatrixLayout_t a, d;
  cublasLtMatmulPreference_t pref;
  BOOST_REQUIRE(cublasLtCreate(&handle) == CUBLAS_STATUS_SUCCESS);
  BOOST_REQUIRE(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS);
  cublasLtMatrixLayoutCreate(&a, CUDA_R_32F, 16, 16, 16);
  cublasLtMatrixLayoutCreate(&d, CUDA_R_32F, 16, 16, 16);
  cublasLtMatmulPreferenceCreate(&pref);
  cublasLtMatmulHeuristicResult_t result;
  int found = -1;
  auto heuristic = [&] { return cublasLtMatmulAlgoGetHeuristic(handle, op, a, a, d, d, pref, 1, &result, &found); };
  auto set = [&](cublasLtMatmulDescAttributes_t attribute, const auto& value) {
    BOOST_REQUIRE(cublasLtMatmulDescSetAttribute(op, attribute, &value, sizeof(value)) == CUBLAS_STATUS_SUCCESS);
  };
  float buffer[16 * 24];
  set(CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_GELU_AUX);
  BOOST_TEST(heuristic() == CUBLAS_STATUS_INVALID_VALUE);  // no aux pointer
  set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, static_cast<void*>(buffer));
  set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, int64_t(20));
  BOOST_TEST(heuristic() == CUBLAS_STATUS_INVALID_VALUE);  // ld not divisible by 8
  set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, int64_t(8));
  BOOST_TEST(heuristic() == CUBLAS_STATUS_INVALID_VALUE);  // ld < m
  set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, int64_t(24));
  BOOST_TEST(heuristic() == CUBLAS_STATUS_SUCCESS);
  set(CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BGRADA);
  BOOST_TEST(heuristic() == CUBLAS_STATUS_INVALID_VALUE);  // no bias pointer
  set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(buffer));
  BOOST_TEST(heuristic() == CUBLAS_STATUS_SUCCESS);
  set(CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_DGELU_BGRAD);
  BOOST_TEST(heuristic() == CUBLAS_STATUS_NOT_SUPPORTED);  // not modelled: not used
  for (cublasLtMatrixLayout_t l : {a, d}) cublasLtMatrixLayoutDestroy(l);
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatmulDescDestroy(op);
  cublasLtDestroy(handle);
}

}  // namespace

// Hopper misuse (wgmma.cuh, tma.cuh), each a clear fault: 0 wgmma without wgmma.fence, 1 shared
// memory written while a wgmma reading it is in flight, 2 a descriptor reading past the dynamic
// shared memory, 3 a wait on an mbarrier nobody arrives on, 4 accumulators written in flight.
__global__ void hopper_misuse_kernel(int misuse) {
  EMB_DYNAMIC_SHARED(uint4, shared);
  char* base = reinterpret_cast<char*>(shared);
  if (misuse == 3) {
    uint64_t* bar = reinterpret_cast<uint64_t*>(base);
    if (threadIdx.x == 0) emb::cuda::mbarrier_init(bar, 1);
    __syncthreads();
    emb::cuda::mbarrier_wait(bar, 0);
    return;
  }
  float d[8][4] = {};
  if (misuse != 0) emb::cuda::wgmma_fence();
  const uint64_t a = emb::cuda::wgmma_descriptor(base, 1024, 128);
  const uint64_t b = emb::cuda::wgmma_descriptor(base + 2048, 1024, misuse == 2 ? 1024 : 128);
  emb::cuda::wgmma_ss<64, 0>(d, a, b, true);
  emb::cuda::wgmma_commit();
  if (misuse == 1 && threadIdx.x == 5) base[100] = 1;
  if (misuse == 4) d[0][0] = 1.0f;
  emb::cuda::wgmma_wait<0>();
}

BOOST_AUTO_TEST_CASE(hopper_misuse_is_a_clear_error) {
  const char* expected[] = {"without a wgmma.fence", "shared memory it reads was written while it was in flight",
                            "beyond the block's 4096 bytes", "mbarrier_wait never completes",
                            "accumulator registers were written while it was in flight"};
  for (int misuse = 0; misuse < 5; ++misuse) {
    EMB_LAUNCH(hopper_misuse_kernel, 1, 128, 4096, nullptr)(misuse);
    const std::string fault = fault_of_last_launch();
    BOOST_TEST(fault.find(expected[misuse]) != std::string::npos, "misuse " << misuse << ": " << fault);
  }
}

// A wgmma group that a wait_group 1 leaves in flight (the newest, so the oldest pending too), then
// a wgmma chained on its accumulator: out = 2 · A·B, A and B all ones over K = 16, so 32 in
// every element. The chained instruction reads the first one's held-back result; the emulation
// once emptied that result when the wait kept the group where it was (a self-move).
__global__ void chained_on_kept_group_kernel(float* out) {
  EMB_DYNAMIC_SHARED(uint4, shared);
  uint16_t* tiles = reinterpret_cast<uint16_t*>(shared);
  for (int e = int(threadIdx.x); e < 2048; e += int(blockDim.x)) tiles[e] = 0x3f80;  // bf16 1.0: A, then B
  __syncthreads();
  const char* base = reinterpret_cast<const char*>(shared);
  const uint64_t a = emb::cuda::wgmma_descriptor(base, 1024, 128), b = emb::cuda::wgmma_descriptor(base + 2048, 1024, 128);
  float d[8][4] = {};
  emb::cuda::wgmma_fence();
  emb::cuda::wgmma_ss<64, 0>(d, a, b, false);
  emb::cuda::wgmma_commit();
  emb::cuda::wgmma_wait<1>();
  emb::cuda::wgmma_fence();
  emb::cuda::wgmma_ss<64, 0>(d, a, b, true);
  emb::cuda::wgmma_commit();
  emb::cuda::wgmma_wait<0>();
  for (int i = 0; i < 32; ++i) out[32 * threadIdx.x + i] = d[i / 4][i % 4];
}

BOOST_AUTO_TEST_CASE(wgmma_chained_on_a_group_still_in_flight) {
  Buffer<float> out(128 * 32);
  EMB_LAUNCH(chained_on_kept_group_kernel, 1, 128, 4096, nullptr)(out.p);
  BOOST_REQUIRE_EQUAL(cudaDeviceSynchronize(), cudaSuccess);
  BOOST_TEST(out.download() == std::vector<float>(128 * 32, 32.0f), boost::test_tools::per_element());
}

// Two 8 × 8 bf16 boxes (128 bytes each) completing on one mbarrier whose phase announced only
// the first: the second lands after the phase completed. Under the forward schedule (copies land
// at the wait; under the reverse one the second copy is issued into the next phase already).
__global__ void short_expect_tx_kernel(const __grid_constant__ CUtensorMap map) {
  EMB_DYNAMIC_SHARED(uint4, shared);
  char* base = reinterpret_cast<char*>(shared);
  uint64_t* bar = reinterpret_cast<uint64_t*>(base + 256);
  emb::cuda::mbarrier_init(bar, 1);
  emb::cuda::mbarrier_arrive_expect_tx(bar, 128);
  emb::cuda::bulk_load_2d(base, &map, 0, 0, bar);
  emb::cuda::bulk_load_2d(base + 128, &map, 0, 8, bar);
  emb::cuda::mbarrier_wait(bar, 0);
}

BOOST_AUTO_TEST_CASE(bulk_copy_beyond_expect_tx_is_a_clear_error) {
  Buffer<uint16_t> tensor(16 * 8);
  CUtensorMap map;
  const uint64_t dims[2] = {8, 16}, strides[1] = {16};
  const uint32_t box[2] = {8, 8};
  emb::cuda::make_tensor_map(&map, tensor.p, 2, dims, strides, box, 2);
  EMB_LAUNCH(short_expect_tx_kernel, 1, 1, 512, nullptr)(map);
  const std::string fault = fault_of_last_launch();
  BOOST_TEST(fault.find("landed after the mbarrier phase it was issued in had completed") != std::string::npos, fault);
}

// A warpgroup instruction in a block whose threads do not fill a warpgroup.
__global__ void partial_warpgroup_kernel() {
  EMB_DYNAMIC_SHARED(uint4, shared);
  float d[8][4] = {};
  emb::cuda::wgmma_fence();
  const uint64_t desc = emb::cuda::wgmma_descriptor(shared, 1024, 128);
  emb::cuda::wgmma_ss<64, 0>(d, desc, desc, false);
}

BOOST_AUTO_TEST_CASE(wgmma_needs_a_whole_warpgroup) {
  EMB_LAUNCH(partial_warpgroup_kernel, 1, 96, 4096, nullptr)();
  BOOST_TEST(fault_of_last_launch().find("not in a complete warpgroup") != std::string::npos);
}
