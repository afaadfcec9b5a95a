// How a run's collectives are carried (the [comm] keys; DESIGN.md "Parallelism"): which
// backend, how the MPI backend makes progress, a modelled fabric for overlap studies on one
// machine, and whether collectives overlap compute. comm/comm_factory.hpp makes the Comm.
#pragma once

namespace emb {

enum class CommBackend { automatic, mpi, nccl };  // comm.backend = auto | mpi | nccl
// comm.progress (MPI): a progress thread runs the collectives, or each runs inside issue().
enum class CommProgress { thread, none };

struct CommConfig {
  CommBackend backend = CommBackend::automatic;  // comm.backend: auto follows the step's buffers
  CommProgress progress = CommProgress::thread;  // comm.progress
  double fabric_latency_us = 0;                  // comm.fabric_latency_us, per collective
  double fabric_gbps = 0;                        // comm.fabric_gbps; both 0 = no fabric model
  bool overlap = true;                           // comm.overlap = on
};

}  // namespace emb
