// Chooses the Comm for a run from the deck's comm settings (backend, progress, fabric).
#pragma once
#include <memory>
#include <string>

#include "comm/comm.hpp"
#include "comm/comm_fabric.hpp"
#include "comm/world.hpp"

namespace emb {

// backend: "nccl" (an error when not built with NCCL), "mpi", or "auto" (NCCL when built
// and a GPU is visible, else MPI). progress: "thread" or "none" (MPI only). An enabled
// fabric model wraps the MPI backend in a FabricComm (host backends only).
std::unique_ptr<Comm> make_comm(const World& world, const std::string& backend,
                                const std::string& progress, const FabricModel& fabric);

}  // namespace emb
