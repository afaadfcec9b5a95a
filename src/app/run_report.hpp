// End-of-run outputs every scaling study reads (DESIGN.md "Timers and outputs"): rank 0
// reads each rank's streamed timings (<run_dir>/timings/rank<R>.csv, core/run_trace.hpp) and
// writes timings.csv (rank, step, phase, seconds) and summary.json (per phase
// min/median/max over ranks and steps, throughput, MFU, memory).
#pragma once
#include <mpi.h>

#include <cstdint>
#include <string>

#include "core/timer.hpp"
#include "kernels/ops.hpp"

namespace emb {

struct RunTotals {
  int64_t steps = 0;
  int64_t samples = 0;      // global samples trained on (all ranks)
  int64_t tokens = 0;       // global real tokens (no padding)
  int64_t computed_tokens = 0;  // global tokens computed (padding included)
  double flops_per_sample = 0;  // model FLOPs (fwd+bwd) per sample, 0 if unknown
  double peak_flops_per_rank = 0;  // the hardware file's peak for one rank's share (MFU); 0 if unknown
  double final_loss = 0;
  size_t device_peak_bytes = 0;  // this rank's backend's peak device memory (0 on the CPU)
  size_t blas_workspace_bytes = 0;  // of device_peak_bytes, the cuBLASLt workspace
  size_t comm_device_bytes = 0;     // NCCL's, besides device_peak_bytes
  size_t activation_device_bytes = 0;  // of device_peak_bytes, the model's activation arena (its largest)
  int64_t micro_batches = 0;     // this rank's
  GraphStats graphs;             // this rank's CUDA graphs (none on the CPU)
  std::string family, preset, device;
};

// Collective over `comm`; rank 0 writes <run_dir>/timings.csv and summary.json (atomically) and logs
// where a step's time went and how far apart the ranks' compute was.
void write_run_report(MPI_Comm comm, const std::string& run_dir, const RunTotals& totals);

}  // namespace emb
