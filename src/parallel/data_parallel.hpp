// Sharded data parallelism with explicit overlap (DESIGN.md "Parallelism"), implemented as
// the model's UnitHooks so communication is issued exactly where a bucket's data is ready or
// needed (a bucket is one or more consecutive model units, ShardLayout):
//   none  (DDP)    parameters replicated; a bucket's gradients are all-reduced as soon as the
//                  backward of its units in the step's last micro-batch finishes, while the
//                  earlier units compute.
//   grads (ZeRO-2) gradients reduce-scattered per bucket the same way; AdamW updates only the
//                  owned shard; the updated shards are all-gathered right after the optimizer
//                  and each bucket's gather is waited on only when the next forward reaches it.
//   full  (ZeRO-3) only shards are kept; a bucket's parameters are all-gathered when the model
//                  reaches it (the next bucket prefetched while this one computes, the previous
//                  one in backward) and its gradients reduce-scattered after each micro-batch's
//                  backward of its units.
// Every rank issues the same collectives in the same order (units ascending in forward,
// descending in backward), including ranks that got fewer micro-batches (run_empty_pass).
//
// Mixed precision (bf16_compute): master weights and AdamW moments stay fp32 in the owned
// shards; the model computes on bf16 copies (rounded once per update, gathered in bf16 so
// parameter traffic halves), handed to it in the dtype each unit asks for: the bf16 copy itself
// (the blocks on bf16 activations, Model::training_blocks_dtype), or widened into one shared
// fp32 buffer of a bucket (the units computing in fp32, one at a time: `widened_`); gradients
// and their reductions stay fp32.
//
// Every buffer lives in the memory of the backend the model runs on (Ops: host memory on the
// CPU, device memory on CUDA), and every operation on them is an Ops call on its stream, so a
// GPU step never copies parameters or gradients to the host. Collectives are ordered after the
// compute stream (NCCL by an event; a host backend over lazily-run device memory, the CUDA
// emulation, by synchronising the stream before it issues), and their consumers are ordered
// after them with wait_on_compute_stream.
#pragma once
#include <cstdint>
#include <vector>

#include "comm/comm.hpp"
#include "core/timer.hpp"
#include "kernels/ops_buffer.hpp"
#include "model/unit_hooks.hpp"
#include "parallel/shard_layout.hpp"

namespace emb {

// The elements of the buffers DataParallel allocates for a layout (0: none), what --plan counts
// as a rank's parameter and gradient memory: the constructor allocates exactly these.
struct DataParallelBuffers {
  int64_t flat_params = 0, flat_grads = 0;  // fp32, none and grads (bf16 grads: no flat fp32 parameters)
  int64_t owned = 0;                        // fp32 owned parameters and as many owned gradients (grads, full)
  int64_t flat_bf16 = 0, owned_bf16 = 0;    // bf16 compute copies
  int grad_slots = 0;                       // full: bucket gradients of one micro-batch, and their shard
  int64_t grad_slot_full = 0, grad_slot_shard = 0;
  int gather_slots = 0;                     // full: gathered buckets, fp32 (gather_slot) or bf16 (gather_staged)
  int64_t gather_slot = 0, gather_staged = 0;
  int64_t widened = 0;                      // bf16: one bucket widened to fp32 for the units computing in fp32

  static DataParallelBuffers of(const ShardLayout& layout, bool bf16_compute);
  int64_t bytes() const;
};

class DataParallel final : public UnitHooks {
 public:
  // overlap = false is the no-overlap baseline: every collective is waited on right after it
  // is issued.
  DataParallel(const ShardLayout& layout, Comm& comm, Ops& ops, PhaseTimers& timers, bool overlap = true,
               bool bf16_compute = false);
  // Waits for collectives still in flight (e.g. the prefetch of bucket 0 after the last step):
  // they write into this object's buffers.
  ~DataParallel() override;
  const ShardLayout& layout() const { return layout_; }

  // Owned fp32 master parameters (none: the flat replicated parameters), in backend memory.
  float* owned_params() { return mode() == ShardMode::none ? flat_params_.data() : owned_params_.data(); }
  // Owned gradients, summed over ranks after finish_gradients(), in backend memory.
  float* owned_grads() { return mode() == ShardMode::none ? flat_grads_.data() : owned_grads_.data(); }
  // A fresh start: draws this rank's owned parameters straight into the owned buffer
  // (ParamRegistry::init_range, the same values on any rank count) and publishes them, so no
  // rank ever holds the full parameters unless its mode keeps them (ZeRO-3 of dreamzero14b
  // could not: 56 GB).
  void init_owned_params(const ParamRegistry& reg, uint64_t seed, double init_std);
  // Sets this rank's owned parameters from host memory (checkpoint restore) and publishes them.
  void load_owned_params(const float* owned);
  // Copies this rank's owned parameters / gradients into host memory (layout().owned_total() floats).
  void download_owned_params(float* owned);
  void download_owned_grads(float* owned);
  // The full flat parameters in host memory (collective in full mode); for checks and dumps.
  std::vector<float> full_params();

  void begin_step();
  // Fault injection (debug.inject_nan_step): a NaN in this rank's local gradients, which the
  // reductions spread to every rank as a real one would.
  void inject_nan();
  // Starts one micro-batch's forward/backward; reductions are issued during it when `last`
  // (none/grads accumulate locally until the step's last micro-batch; full reduces every one).
  void begin_micro_batch(bool last);
  void end_micro_batch();
  // The collectives of one forward/backward without a batch, for a rank that has fewer
  // micro-batches than the others this step.
  void run_empty_pass(bool last);
  // Waits for every gradient reduction of the step (issuing those not yet issued).
  void finish_gradients();
  // After the optimizer updated the owned parameters: makes them visible to the next forward.
  // ZeRO-2 gathers the trained pieces only: the frozen ones' replicated copies stand as
  // load_owned_params gathered them.
  void publish_params();
  // Wall seconds during which at least one of this step's collectives was in flight
  // (comm_total: overlapping collectives count once); resets the count.
  double take_comm_seconds();

  const void* unit_params(int u, bool backward, DType dtype) override;
  float* unit_grads(int u) override;
  void unit_grads_ready(int u) override;

 private:
  // A bucket's compute copy gathered by ZeRO-3.
  struct GatherSlot {
    int bucket = -1;
    std::vector<CommHandle> handles;  // full: the gathers of its pieces
    uint64_t last_use = 0;
    OpsBuffer<float> data;   // fp32 full
    OpsBuffer<bf16> staged;  // bf16 full: what the gather delivers
  };
  struct PendingReduce {
    int bucket = -1;
    std::vector<CommHandle> handles;  // the all-reduce, or the reduce-scatters of its trained pieces
    int grad_slot = -1;  // full: the bucket-sized gradient buffer to release
  };

  ShardMode mode() const { return layout_.mode(); }
  // Before a collective reads buffers the compute stream writes.
  void order_after_compute();
  void wait(CommHandle& h);
  void wait(std::vector<CommHandle>& handles);
  // Issues a collective (`issue` returns its handle) and records it for the step's comm time and
  // the trace. The time is taken before the call: with MPI's progress thread at a higher
  // priority on the rank's core, the call can return only after the thread has run the rank's
  // part of the collective (the last rank to issue), and a time taken after it would start the
  // span late by that part and end it late by as much.
  template <class Issue>
  CommHandle track(const char* op, int bucket, int64_t bytes, Issue&& issue) {
    const PhaseTimers::Clock::time_point issued = PhaseTimers::Clock::now();
    CommHandle h = issue();
    step_ops_.push_back({h, issued, op, bucket, bytes});
    if (!overlap_) wait(h);
    return h;
  }
  GatherSlot& gather_bucket(int b, int keep);
  // bf16: the bucket's bf16 compute copy (full: in its gather slot `slot`; none, grads: in the
  // rounded or gathered flat copy, slot null).
  View bf16_copy(const GatherSlot* slot, int b) const;
  void fill_slot(GatherSlot& slot, int b);
  // Gathers the pieces of bucket b (bf16 compute: the bf16 shards), every one or the trained
  // ones only, into `bucket_copy`, a copy of the whole bucket, one collective a piece; `handles`
  // becomes theirs.
  void gather_pieces(int b, void* bucket_copy, std::vector<CommHandle>& handles, bool frozen_too);
  // Rounds the owned parameters for bf16 compute and makes them the compute copy's (ZeRO-2: the
  // gathers; frozen_too: the frozen pieces' as well, after a load).
  void publish(bool frozen_too);
  void round_owned_to_bf16();
  void prefetch(int b, int keep);
  void issue_reduction(int b, float* bucket_grad, int grad_slot);
  void complete_reduction(PendingReduce& r);
  void check_order(int u, bool backward);

  const ShardLayout& layout_;
  Comm& comm_;
  Ops& ops_;
  PhaseTimers& timers_;
  OpsBuffer<float> flat_params_, flat_grads_;    // none, grads
  OpsBuffer<float> owned_params_, owned_grads_;  // grads, full
  OpsBuffer<bf16> owned_bf16_;                   // bf16 grads/full: the rounded owned shard
  OpsBuffer<bf16> flat_bf16_;                    // bf16 none: the rounded compute copy; grads: gathered
  std::vector<std::vector<CommHandle>> param_ready_;  // grads: all-gathers of each bucket's pieces after the optimizer
  std::vector<GatherSlot> gather_slots_;           // full
  // bf16: the fp32 copy of one bucket, widened from its bf16 copy when a unit computing in fp32
  // (the encoders, the head) asks. One suffices: a unit's parameters are read only while it runs
  // (ParamAccess asks again on entering it), and the units run one at a time.
  OpsBuffer<float> widened_;
  int widened_bucket_ = -1;  // the bucket widened_ holds; -1: none (or stale: publish_params)
  // full: a bucket's gradients of one micro-batch, and this rank's reduce-scatter result,
  // which is added to the owned gradients once the collective completed. Each in-flight
  // reduction owns its slot: successive micro-batches of one bucket never share a buffer.
  struct GradSlot {
    OpsBuffer<float> full, shard;
    bool busy = false;
  };
  std::vector<GradSlot> grad_slots_;
  std::vector<PendingReduce> pending_;
  std::vector<bool> reduced_;                      // none/grads: bucket reduced this step
  struct IssuedOp {
    CommHandle handle;
    PhaseTimers::Clock::time_point issued;
    const char* op;  // for the trace: what, which bucket, how many bytes
    int bucket;
    int64_t bytes;
  };
  // The unit computing now, for the trace (-1: none).
  int traced_unit_ = -1;
  bool traced_backward_ = false;
  PhaseTimers::Clock::time_point unit_started_{};
  void trace_unit_boundary(int next_unit, bool backward);
  std::vector<IssuedOp> step_ops_;
  uint64_t use_clock_ = 0;
  bool overlap_ = true, bf16_ = false;
  bool last_micro_batch_ = false, in_backward_ = false;
  int expected_unit_ = 0;
  int current_grad_slot_ = -1;  // full: the slot of the bucket in backward
};

}  // namespace emb
