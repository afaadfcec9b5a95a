#include "state_allocations.hpp"

#include "comm/comm_factory.hpp"
#include "comm/world_fixture.hpp"
#include "counting_ops.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#include "parallel/data_parallel.hpp"
#include "train/optimizer.hpp"

namespace emb::test {

int64_t allocated_state_bytes(const ParamRegistry& reg, ShardMode mode, int rank, int ranks,
                              const PlanSharding& sharding, bool bf16) {
  CpuOps cpu;
  CountingOps ops(cpu);
  const ShardLayout layout(reg, mode, rank, ranks, sharding.bucket_bytes, sharding.frozen);
  auto comm = make_comm(test_world(), {CommBackend::mpi});
  PhaseTimers timers;
  DataParallel dp(layout, *comm, ops, timers, true, bf16);
  Optimizer optimizer(layout, ops, AdamWConfig{}, 1.0f);
  return ops.live_bytes();
}

}  // namespace emb::test
