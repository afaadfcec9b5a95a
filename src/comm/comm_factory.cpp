#include "comm/comm_factory.hpp"

#include "comm/comm_fabric.hpp"
#include "comm/comm_mpi.hpp"
#include "core/error.hpp"
#ifdef EMBTRAIN_WITH_NCCL
#include "comm/comm_nccl.hpp"
#endif

namespace emb {

static std::unique_ptr<Comm> make_nccl(const World& world, const CommPlacement& placement) {
#ifdef EMBTRAIN_WITH_NCCL
  return std::make_unique<NcclComm>(world, placement.gpu, placement.compute_stream);
#else
  (void)world, (void)placement;
  throw Error("comm.backend: device buffers need NCCL but this embtrain was built without CUDA/NCCL "
              "(configure with -DEMBTRAIN_CUDA=ON on a machine with nvcc and NCCL)", kExitInput);
#endif
}

std::unique_ptr<Comm> make_comm(const World& world, const CommConfig& cfg, const CommPlacement& placement) {
  const bool device = placement.memory == BufferMemory::device;
  if (cfg.backend == CommBackend::nccl && !device)
    throw Error("comm.backend = nccl needs the step's buffers in GPU memory, but they are in host memory "
                "(run.device = cpu, or the CUDA emulation); use comm.backend = mpi or auto", kExitInput);
  if (cfg.backend == CommBackend::mpi && device)
    throw Error("comm.backend = mpi needs the step's buffers in host memory, but they are in GPU memory "
                "(run.device = cuda); use comm.backend = nccl or auto", kExitInput);
  const FabricModel fabric{cfg.fabric_latency_us, cfg.fabric_gbps};
  if (device) {
    if (fabric.enabled())
      throw Error("comm.fabric_latency_us/comm.fabric_gbps model a fabric for the MPI backend only; "
                  "unset them or use comm.backend = mpi", kExitInput);
    return make_nccl(world, placement);
  }
  std::unique_ptr<Comm> mpi = std::make_unique<MpiComm>(world.comm, cfg.progress);
  if (!fabric.enabled()) return mpi;
  return std::make_unique<FabricComm>(std::move(mpi), fabric);
}

}  // namespace emb
