// A Comm that models an interconnect on top of a real backend. This 2-core machine has no
// spare core for MPI progress (MACHINE.md), so overlap scheduling is measured against a
// modelled fabric: each collective completes no earlier than its start on the fabric plus
// α + bytes/β, where bytes is what a ring algorithm sends per rank. Collectives occupy the
// fabric one after another in issue order, as on one NCCL stream. Waiting sleeps (no CPU).
#pragma once
#include <chrono>
#include <memory>

#include "comm/comm.hpp"
#include "comm/op_pool.hpp"

namespace emb {

struct FabricModel {
  double latency_us = 0;  // α, per collective (deck: comm.fabric_latency_us)
  double gbps = 0;        // β in GB/s (1e9 bytes/s); 0 = unlimited (deck: comm.fabric_gbps)

  bool enabled() const { return latency_us > 0 || gbps > 0; }
  // Bytes one rank sends for `c` on `size` ranks with ring algorithms.
  static double bytes_per_rank(const Collective& c, int size);
  double seconds(const Collective& c, int size) const;
};

struct FabricOp;

class FabricComm final : public Comm {
 public:
  FabricComm(std::unique_ptr<Comm> inner, FabricModel model);
  ~FabricComm() override;

  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  const char* name() const override { return "fabric"; }
  bool ordered_after_compute() const override { return inner_->ordered_after_compute(); }
  CommHandle issue(const Collective& c) override;

 private:
  std::unique_ptr<Comm> inner_;
  FabricModel model_;
  std::chrono::steady_clock::time_point fabric_free_{};  // when the last issued op leaves the fabric
  OpPool<FabricOp> pool_;
};

}  // namespace emb
