// The backend a training rank computes on, from the deck's run.device (BACKENDS.md): CpuOps, or
// CudaOps on the rank's GPU. A build has the CUDA backend when kernels/cuda was built, by nvcc
// or against the CUDA emulation (EMBTRAIN_CUDA=EMULATE: CudaOps runs on the host, which is how
// CI trains run.device = cuda without a GPU).
#pragma once
#include <memory>
#include <string>

#include "comm/comm_factory.hpp"
#include "comm/world.hpp"
#include "config/deck.hpp"
#include "kernels/ops.hpp"

namespace emb {

// Throws emb::Error (exit 2, naming where run.device was set) when this build cannot run the
// deck's run.device, or when the deck asks that backend for what it does not implement.
void check_backend(const Deck& deck);

// The Ops of run.device for this rank (cuda: the GPU device_for_local_rank picks).
std::unique_ptr<Ops> make_backend(const Deck& deck, const World& world);

// Where the step's buffers live, which decides the Comm backend: device memory (NCCL) on a real
// GPU; host memory on the CPU and under the CUDA emulation, whose device memory is host memory
// that MPI carries.
BufferMemory backend_buffer_memory(const Deck& deck);

}  // namespace emb
