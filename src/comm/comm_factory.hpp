// Makes the Comm of a run from its [comm] settings and from where its Ops keep the step's
// buffers (kernels/make_ops.hpp makes the Ops first and this Comm from them).
#pragma once
#include <memory>

#include "comm/comm.hpp"
#include "comm/world.hpp"
#include "config/comm_config.hpp"

namespace emb {

// Where the step's buffers (parameters, gradients) live, which decides the backend: a GPU's
// memory, or host memory (the CPU backend, and the CUDA emulation, whose device memory is
// host memory: BACKENDS.md).
enum class BufferMemory { host, device };

// What the Comm needs of the Ops it serves.
struct CommPlacement {
  BufferMemory memory = BufferMemory::host;
  int gpu = 0;                     // device memory: the CUDA device the Ops run on
  void* compute_stream = nullptr;  // device memory: the Ops' stream, which collectives are ordered after
};

// backend: auto follows the memory (host: MPI; device: NCCL, an error when not built with
// NCCL), mpi needs host buffers (it is not CUDA-aware here), nccl device buffers (it cannot
// read host memory); a mismatch is an error. progress: MPI only. An enabled fabric model
// wraps the MPI backend in a FabricComm (host backends only).
std::unique_ptr<Comm> make_comm(const World& world, const CommConfig& cfg, const CommPlacement& placement = {});

}  // namespace emb
