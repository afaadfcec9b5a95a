// The planner's model of one optimizer step (DESIGN.md "Parallelism") on a Hardware:
//   compute   per micro-batch, GEMM FLOPs at the GEMM rate (each linear at its shape's:
//             linear_efficiency), attention FLOPs at the attention
//             rate (both per compute precision), plus the elementwise ops the model issues
//             (their bytes, from a dry step: plan/elementwise_work.hpp) at memory bandwidth (a
//             lone rank's at the memory spare-core speedup) and rope's and the sinusoids'
//             arithmetic at the hardware's elementwise_element_seconds, the weights read from
//             memory each micro-batch where GEMM rates were measured on cached weights and the
//             rank's working set outgrows its share of the last-level cache, and dropout's
//             draws of its keep words (forward and backward, at the hardware's
//             dropout_element_seconds); recompute adds the forward work it re-runs (full: the
//             forward; selective: the attention cores and their q/k/v projections); FP8 runs the
//             GEMMs at the FP8 rate and adds one more activation pass (each GEMM input read
//             in bf16 and written in FP8 with its scales); padding (packing off) costs GEMM
//             FLOPs but no attention pairs;
//   comm      every collective of the step, bucket by bucket, timed by collective_model;
//   exposed   what the unit overlap schedule leaves uncovered: each bucket's collective runs
//             under the previous bucket's compute (a pipeline of the pass's buckets), the
//             first gather and the last reduction stay exposed; ZeRO-3 with at most 4 buckets
//             (the gather slots) gathers once a step, and the reductions of every micro-batch
//             but the last drain under the next micro-batch. With no core to spare for the progress
//             thread (comm_overlaps_compute = false) a collective under the compute runs on
//             the rank's core: the compute is longer by its core seconds (the hardware's
//             core_seconds_per_byte of what a rank sends and core_seconds_per_call of each
//             call; comm_core_fwd/bwd), and only what
//             the schedule leaves uncovered is a wait (1/R of it the compute of the rank that
//             issues it last, on its own core), ZeRO-3's first gathers run under the step's
//             head (`other`); a file without that figure exposes every collective;
//   imbalance with more than one rank, compute is longer by the wait for the slowest rank
//             (ranks time-sharing cores finish equal work at different times, and every
//             synchronisation waits for the slowest): the hardware's rank_imbalance of the
//             compute, scaled from the ranks it was measured with to R ranks by the expected
//             maximum of R independent normal delays; for ranks on cores of their own waited at
//             every synchronisation, for ranks time-sharing cores in the collectives, the head's
//             wait then the partners' turns after it (the first turn first_turn_s, the later ones
//             turn_s, each at a full core; hwprobe --imbalance measures both, the first in rounds
//             opened as a step's head), which move time between the head (`other`) and the
//             passes; packed samples of different
//             context lengths (the data's spread, read from its files) spread each rank's
//             compute too (data_spread_s), in quadrature with the timing (which for ranks
//             time-sharing cores moves the cores as the samples do: session 35); timed
//             where the ranks wait (host reductions: `other`, collectives: exposed comm; the
//             samples' spread in the collective that closes the backward);
//   fixed     what no FLOP or byte accounts for (plan/op_calls.hpp counts, hardware FixedCosts
//             figures): the op calls of every micro-batch (its dry step's, by pass) and of
//             the optimizer at the host's seconds per call, in the phase that makes them, the
//             host allocations at seconds per allocation (both at the rank's share of a CPU
//             node's cores, as its compute), the step's blocking host reductions (with more
//             than one rank), and on a GPU every op call's kernel launch, as a CUDA graph node
//             when run.cuda_graphs is on; a GPU's host runs ahead of its stream, so there
//             only the host work beyond the compute counts;
//   optimizer the gradients' Σg² and AdamW over the owned shard's trained elements, at the
//             hardware's optimizer_element_seconds (at the rank's share of a CPU node's cores,
//             a lone rank's at the memory spare-core speedup)
//             or, where the file has none, at memory bandwidth (read g twice, p, m, v; write p,
//             m, v); and, timed as `other`, the bf16 copy of the whole shard;
//   data      the bytes per sample a node must read per second, and the wait when storage is
//             slower than the step consumes;
//   memory    state of the shard mode (its largest rank's, plan/state_memory.hpp) + one micro-batch's activations (the blocks' in the
//             storage type a run on the hardware gives them: planned_blocks_dtype) + the
//             cuBLASLt workspace + NCCL's buffers + the reserve,
//             against the device's memory;
//   checkpoint parameters in fp32 and the AdamW moments of the trained ones (a frozen tensor
//             has none: checkpoint/checkpoint.cpp), written by every node at once.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/model_config.hpp"
#include "plan/model_cost.hpp"
#include "plan/collective_model.hpp"
#include "plan/elementwise_work.hpp"
#include "plan/hardware.hpp"

namespace emb {

// One training configuration, as the deck states it.
struct Workload {
  ModelConfig model;  // model.recompute and model.precision included
  bool fp8 = false;   // model.fp8: GEMMs at the hardware's FP8 rate, plus quantizing their inputs
  int ranks = 1;
  int64_t global_batch = 1;
  bool packing = true;
  int64_t tokens_per_mb = 4096;  // query + context tokens per micro-batch, as the packer fills it
  int64_t micro_batch = 0;       // samples, packing off; 0 = as many as fit in tokens_per_mb
  PlanSample sample;             // the data's mean context length, and the padding of packing off
  // The data's longest context, tokens (0: unknown): a packed micro-batch must hold its sample,
  // so the config search offers no data.tokens_per_mb below it.
  int64_t longest_context = 0;
  ShardMode shard = ShardMode::full;
  double bucket_bytes = 25 << 20;
  bool overlap = true;           // comm.overlap
  bool cuda_graphs = false;      // run.cuda_graphs: a GPU replays each micro-batch as a graph
  int64_t dataset_samples = 0;   // 0 = unknown (no epoch time)
  double loader_s = 0;           // a rank's loader per step on this host (plan/loader_cost.hpp); 0 = untimed
  // Per tensor of the model's registry: train.tune_* freezes it (train/freezing.hpp: no AdamW
  // moments, in memory or in checkpoints); empty = every tensor trained.
  std::vector<bool> frozen;

  PlanSharding sharding() const { return {int64_t(bucket_bytes), frozen}; }
  // GR00T's backbone in the step (plan/backbone_cost.hpp backbone_memory), in the memory verdict:
  // per sample of a micro-batch, model.backbone = online's forward buffers or train.tune_visual's
  // activations kept for the backward; and in the state, the frozen weights every rank holds
  // (the online backbone's, or tune_visual's fp32 LLM).
  double context_activation_bytes_per_sample = 0;
  double frozen_weight_bytes = 0;
  // The model's elementwise work (plan/elementwise_work.hpp, two dry steps) when a caller has it
  // for this model and recompute (run_plan and rank_configurations: once per recompute mode, not
  // once per configuration); null: predict_step fits it. A copy that changes the model must reset it.
  std::shared_ptr<const ElementwiseFit> elementwise;
};

struct CollectiveCost {
  std::string what;  // e.g. "forward all_gather of parameters"
  Collective op;
  double bytes = 0;  // one pass over every bucket (the full buffers)
  int buckets = 0;   // calls per pass
  int per_step = 0;  // passes per step
  std::string algorithm;
  double seconds = 0;  // all calls of the step
};

// The step's fixed costs (FixedCosts), each count with its seconds.
struct FixedCostPrediction {
  int64_t op_calls = 0, allocations = 0, launches = 0;
  int64_t noise_draws = 0;  // the flow noise's N(0, 1) draws, drawn on the host in the forward
  int syncs = 0;
  double op_calls_s = 0, allocations_s = 0, syncs_s = 0, launches_s = 0, noise_draws_s = 0, total_s = 0;
  // Of total_s, the host time inside the forward, the backward and the optimizer: a CPU's (a
  // GPU's host runs ahead of its stream).
  double forward_host_s = 0, backward_host_s = 0, optimizer_host_s = 0;
};

// A pass's own compute by kind, as run.profile_ops sums a run's ops (train/op_profile.hpp): the
// linears' GEMMs (with the weights' traffic beyond cached GEMM rates), attention, dropout's draws
// and traffic, the elementwise ops the model issues (and in the backward the gradient buffers'
// zero and add passes), and the op calls' and allocations' host time inside the pass (a CPU's;
// set by the phases).
struct ComputeKinds {
  double gemm = 0, attention = 0, dropout = 0, elementwise = 0, host = 0;
  double total() const { return gemm + attention + dropout + elementwise + host; }
  ComputeKinds scaled(double f) const { return {gemm * f, attention * f, dropout * f, elementwise * f, host * f}; }
  ComputeKinds plus(const ComputeKinds& o) const {
    return {gemm + o.gemm, attention + o.attention, dropout + o.dropout, elementwise + o.elementwise, host + o.host};
  }
};

// The step's parts as the trainer times them (core/timer.hpp kStepParts): fwd and bwd hold
// a rank's own compute, the collectives' core seconds under it and the op calls' and
// allocations' host time; comm_exposed the waits; other the blocking host reductions with the
// wait for the slowest rank (and a GPU's host time beyond its stream). They sum to the step.
struct PhasePrediction {
  double data_wait = 0, fwd = 0, bwd = 0, comm_exposed = 0, optim = 0, other = 0;
};

struct StepPrediction {
  Workload w;
  int samples_per_rank = 0, samples_per_mb = 0, micro_batches = 0, buckets = 0, nodes = 1;
  int64_t tokens_per_mb = 0;  // the micro-batch the prediction costs: samples_per_mb samples' tokens and context
  double flops_per_sample = 0;            // model FLOPs (forward + backward), no recompute
  double recompute_flops_per_sample = 0;  // re-run forward work
  double compute_s = 0, fwd_s = 0, bwd_s = 0, recompute_s = 0;
  // fwd_s, and bwd_s + recompute_s + gradient_backward_s (elementwise), by kind; with the passes' host time
  ComputeKinds fwd_kinds, bwd_kinds;
  double comm_total_s = 0, comm_exposed_s = 0, optimizer_s = 0, data_wait_s = 0, step_s = 0;
  double comm_core_fwd_s = 0, comm_core_bwd_s = 0;  // covered collectives' core seconds (shared core)
  // Ranks time-sharing a core: the polls of the ranks waiting in a pass's closing collective while
  // their partners on the core still compute; half of it in comm_core_*_s, half in comm_exposed_s.
  double partner_polls_s = 0;
  double weight_traffic_s = 0;  // of fwd_s and bwd_s: weights and gradients read from memory (gemm_rate_on_cached_weights)
  // The bytes of the views the elementwise ops are given in each pass (the model's dry step, and
  // in the backward the gradient buffers' passes; the bytes run.profile_ops reports).
  double elementwise_bytes_fwd = 0, elementwise_bytes_bwd = 0;
  // ZeRO-3's first gathers, issued behind the last update, waited for at the step's head
  // (`other`) beyond the head's wait for the slowest rank, which they overlap.
  double comm_head_s = 0;
  // Their core seconds (the progress thread's on the rank's core, comm_core_seconds_per_call and
  // _per_byte), spent beside the head's host work: the loader's share of the core while they run.
  double comm_head_core_s = 0;
  double imbalance_s = 0;  // of compute_s: the wait for the slowest rank (rank_imbalance)
  double imbalance_in_collectives_s = 0;  // of imbalance_s: waited in collectives (exposed comm), not host reductions
  // Ranks time-sharing cores leave the step's head in the scheduler's turns: their mean wait there
  // for their first turn, and their forward's mean change from the paced one (HeadTurns).
  double head_turn_wait_s = 0, head_turn_forward_change_s = 0;
  // The loader's host time per step (Workload::loader_s): on a CPU node its thread takes the
  // rank's core, so the step waits for it (data_wait); a GPU node's host cores hide it under the step.
  double loader_s = 0;
  double loader_beside_gathers_s = 0;  // of data_wait_s: the loader's core given to comm_head_core_s
  double data_spread_s = 0;  // one standard deviation of a rank's compute from its samples' context lengths (packed)
  int head_gathers = 0;  // ZeRO-3 gathers run under the step's head (comm_head_s)
  // The data-parallel layer's passes over the gradient buffers (plan/gradient_traffic.hpp):
  // inside the backward passes, and begin_step's and finish_gradients' outside them.
  double gradient_backward_s = 0, gradient_step_s = 0;
  double bf16_round_s = 0;  // the bf16 compute copy rounded from the owned fp32 parameters (publish_params)
  FixedCostPrediction fixed;
  PhasePrediction phases;
  std::vector<CollectiveCost> collectives;
  double samples_per_s_per_device = 0, mfu = 0, epoch_s = 0;
  double data_bytes_per_sample = 0, data_bytes_per_s_per_node = 0;
  double state_bytes = 0, activation_bytes = 0, reserved_bytes = 0, memory_bytes = 0, capacity_bytes = 0;
  double blas_workspace_bytes = 0, comm_library_bytes = 0;  // cuBLASLt's, NCCL's (Hardware)
  bool fits = false;
  double checkpoint_bytes = 0, checkpoint_s = 0;
  double preemption_signal_s = 0;  // Slurm --signal=USR1@T: a step, a checkpoint and margin
};

// The storage type of the blocks' activations in a run of `c` on `hw`: training_blocks_dtype
// with the hardware's backend (activations_in_compute_precision: CUDA's mixed storage).
DType planned_blocks_dtype(const Hardware& hw, const ModelConfig& c);

StepPrediction predict_step(const Hardware& hw, const Workload& w);
// The workload's model's elementwise work, its blocks' activations as `hw` keeps them (two dry
// steps: what Workload::elementwise holds).
std::shared_ptr<const ElementwiseFit> model_elementwise_work(const Hardware& hw, const Workload& w);

}  // namespace emb
