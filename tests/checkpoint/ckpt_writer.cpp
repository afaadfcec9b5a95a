// Helper of kill_during_save.sh.
//   ckpt_writer write DIR    records each rank's pid in DIR/writer.<rank>.pid, then saves
//                            checkpoints of a 64 MiB model (192 MiB with the moments) at steps
//                            1, 2, ... (keeping the newest 2) until it is killed.
//   ckpt_writer verify DIR   resumes as a run would (resume = auto, on any rank count and
//                            another shard mode), checks every restored value and that every
//                            step_*.h5 of DIR is complete; rank 0 prints "resumed step N".
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "checkpoint/checkpoint_fixture.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "checkpoint/checkpoint.hpp"
#include "checkpoint/checkpoint_dir.hpp"

using namespace emb;

namespace {

constexpr const char* kPreset = "ckpt_writer";

ParamRegistry big_registry() {
  ParamRegistry reg;
  for (int u = 0; u < 4; ++u) {
    reg.begin_unit(str("block", u));
    reg.add(str("blocks.", u, ".weight"), {2048, 2048}, ParamInit::normal, true);
  }
  return reg;
}

void write_forever(MPI_Comm comm, const std::string& dir, int rank, int size) {
  std::ofstream(str(dir, "/writer.", rank, ".pid")) << getpid() << "\n";
  const ParamRegistry reg = big_registry();
  ShardLayout layout(reg, ShardMode::full, rank, size);
  for (int64_t step = 1;; ++step) {
    OwnedStates s = expected_states(layout, step);
    CheckpointMeta meta;
    meta.step = step;
    meta.preset = kPreset;
    save_checkpoint(comm, dir, reg, layout, s.params.data(), OptimizerState{s.exp_avg.data(), s.exp_avg_sq.data()},
                    meta, 2);
  }
}

void verify(MPI_Comm comm, const std::string& dir, int rank, int size) {
  const std::vector<std::string> candidates = resolve_resume(comm, "auto", dir, "");
  EMB_CHECK(!candidates.empty(), dir, ": no complete checkpoint to resume from");
  const std::string& path = candidates.front();
  const ParamRegistry reg = big_registry();
  ShardLayout layout(reg, ShardMode::grads, rank, size);
  OwnedStates got = blank_states(layout);
  const CheckpointMeta meta =
      load_checkpoint(comm, path, kPreset, reg, layout, got.params.data(),
                      OptimizerState{got.exp_avg.data(), got.exp_avg_sq.data()});
  const OwnedStates want = expected_states(layout, meta.step);
  int bad = got.params != want.params || got.exp_avg != want.exp_avg || got.exp_avg_sq != want.exp_avg_sq;
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm);
  EMB_CHECK(!bad, path, ": restored values differ from those saved at step ", meta.step);
  if (rank == 0) {
    for (const std::string& name : list_checkpoints(dir)) {
      const std::string problem = checkpoint_problem(dir + "/" + name);
      EMB_CHECK(problem.empty(), "a checkpoint under its final name is unusable: ", problem);
    }
    std::printf("resumed step %lld\n", static_cast<long long>(meta.step));
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  set_log_rank(rank, size);
  int rc = 0;
  try {
    const std::string mode = argc == 3 ? argv[1] : "";
    EMB_CHECK(mode == "write" || mode == "verify", "usage: ckpt_writer write|verify DIR");
    if (mode == "write")
      write_forever(MPI_COMM_WORLD, argv[2], rank, size);
    else
      verify(MPI_COMM_WORLD, argv[2], rank, size);
  } catch (const Error& e) {
    std::fprintf(stderr, "ckpt_writer: %s\n", e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
