#include "comm/comm_factory.hpp"

#include "comm/comm_mpi.hpp"
#include "core/error.hpp"
#ifdef EMBTRAIN_WITH_NCCL
#include "comm/comm_nccl.hpp"
#endif

namespace emb {

static bool nccl_usable() {
#ifdef EMBTRAIN_WITH_NCCL
  return visible_gpu_count() > 0;
#else
  return false;
#endif
}

static std::unique_ptr<Comm> make_nccl(const World& world) {
#ifdef EMBTRAIN_WITH_NCCL
  return std::make_unique<NcclComm>(world, device_for_local_rank(world.local_rank, visible_gpu_count()));
#else
  (void)world;
  throw Error("comm.backend = nccl but this embtrain was built without CUDA/NCCL "
              "(configure with -DEMBTRAIN_CUDA=ON on a machine with nvcc and NCCL)", kExitInput);
#endif
}

std::unique_ptr<Comm> make_comm(const World& world, const std::string& backend,
                                const std::string& progress, const FabricModel& fabric) {
  EMB_CHECK(backend == "auto" || backend == "mpi" || backend == "nccl",
            "comm.backend: expected auto, mpi or nccl, got '", backend, "'");
  EMB_CHECK(progress == "thread" || progress == "none",
            "comm.progress: expected thread or none, got '", progress, "'");
  const bool nccl = backend == "nccl" || (backend == "auto" && nccl_usable());
  if (nccl) {
    if (fabric.enabled())
      throw Error("comm.fabric_latency_us/comm.fabric_gbps model a fabric for the MPI backend only; "
                  "unset them or use comm.backend = mpi", kExitInput);
    return make_nccl(world);
  }
  std::unique_ptr<Comm> mpi = std::make_unique<MpiComm>(
      world.comm, progress == "thread" ? Progress::thread : Progress::none);
  if (!fabric.enabled()) return mpi;
  return std::make_unique<FabricComm>(std::move(mpi), fabric);
}

}  // namespace emb
