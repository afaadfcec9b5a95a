// Chooses the Comm for a run from the deck's comm settings (backend, progress, fabric).
#pragma once
#include <memory>
#include <string>

#include "comm/comm.hpp"
#include "comm/comm_fabric.hpp"
#include "comm/world.hpp"

namespace emb {

// Where the step's buffers (parameters, gradients) live, which decides the backend: a GPU's
// memory, or host memory (the CPU backend, and the CUDA emulation, whose device memory is
// host memory: BACKENDS.md).
enum class BufferMemory { host, device };

// backend: "auto" follows `memory` (host: MPI; device: NCCL, an error when not built with
// NCCL), "mpi" needs host buffers (it is not CUDA-aware here), "nccl" device buffers (it
// cannot read host memory); a mismatch is an error. progress: "thread" or "none" (MPI only).
// An enabled fabric model wraps the MPI backend in a FabricComm (host backends only).
std::unique_ptr<Comm> make_comm(const World& world, const std::string& backend, const std::string& progress,
                                const FabricModel& fabric, BufferMemory memory);

}  // namespace emb
