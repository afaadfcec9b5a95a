// A machine the planner predicts for (inputs/hw/*.json). Every figure in the file is an object
// {"value": number, "source": "where it comes from"}: a datasheet, a paper, or a measurement
// with the command that took it; a figure without a source is refused.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kernels/op_types.hpp"

namespace emb {

struct LinkSpec {
  double bytes_per_s = 0;  // per direction, per device
  double latency_s = 0;    // per message (the α of an α–β model)
};

// Costs no FLOP or byte accounts for (issue 36), each a named figure of the hardware file's
// "fixed_costs" (optional as a whole: a file without it predicts none):
//   op_call_s       host seconds per Ops call beyond its work: the virtual dispatch, the shape
//                   checks, the kernel's set-up (hwprobe: a tiny op called through Ops);
//   allocation_s    seconds per host heap allocation the step makes (malloc, first touch, free
//                   at the sizes the step allocates: its index vectors, staging and closures);
//   sync_s          one of the step's blocking host reductions (loss denominators, sums,
//                   gradient norm) with the ranks entering together;
//   kernel_launch_s, graph_kernel_launch_s   a GPU's host seconds per kernel launched on a
//                   stream, and per kernel node replayed in a CUDA graph (0 on a CPU).
struct FixedCosts {
  double op_call_s = 0, allocation_s = 0, sync_s = 0;
  double noise_draw_s = 0;  // per N(0, 1) draw of the flow noise, on the host; 0 where unmeasured
  double kernel_launch_s = 0, graph_kernel_launch_s = 0;
  bool gpu() const { return kernel_launch_s > 0; }
};

struct Hardware {
  std::string name, path;
  int devices_per_node = 1;     // GPUs per node, or cores of a CPU node
  bool ranks_share_node = false;  // CPU: every rank runs on the one node, sharing its cores
  // Peak (for MFU) and achieved per-op rates, FLOP/s per device, by compute precision.
  double peak_fp32 = 0, peak_bf16 = 0;
  double gemm_fp32 = 0, gemm_bf16 = 0;
  double gemm_fp8 = 0;  // FP8 GEMMs with block scales (model.fp8); 0 = the machine has none
  // The GEMM rate at a model width over gemm_fp32/bf16 (measured at D 256), as (width, ratio)
  // ascending: a narrow model's linears (D 64: [rows, 64] x [64, 256]) run below the rate of
  // wide ones (the micro-kernel's edges, packing and call set-up over fewer FLOPs). The file's
  // "gemm_width_efficiency" {"64": figure, ...}; empty: 1 at every width (a GPU file).
  std::vector<std::pair<double, double>> gemm_width_efficiency;
  // The rate of a narrow linear (its in or out features n: an action encoder 8 -> 64, a head
  // 64 -> 16) over gemm_fp32/bf16, as (n, ratio) ascending: the micro-kernel's edges, the packing
  // and the call's set-up over few FLOPs (regression/plan_validation.md round 15). The file's
  // "gemm_narrow_efficiency" {"8": figure, ...}; empty: every linear at its model width's rate.
  std::vector<std::pair<double, double>> gemm_narrow_efficiency;
  // A GEMM call's set-up (packing its weight panel, the kernel's edges) in rows: a call on M rows
  // takes as long as M + gemm_call_rows at the rate (hwprobe: the width-64 trunk on 16 and 64
  // rows). The rates were measured on 128-2048 rows, where it is 0.3-4 % of a call. The file's
  // "gemm_call_rows"; 0 where unmeasured (the GPU files).
  double gemm_call_rows = 0;
  double attention_fp32 = 0, attention_bf16 = 0;
  // Attention's per (query, key) pair and head work besides the head-dim-long dot products
  // (the softmax's exp and sums), forward + backward seconds; 0 where the attention rate
  // already includes it (GPU figures measured at head dim 128).
  double attention_pair_head_s = 0;
  // A masked tile's seconds per computed (pair, head) over a dense tile's, at head dim 16: the
  // per-pair mask applied in the forward's scores and the backward's (kernels/cpu/attention.cpp),
  // on every tile of samples shorter than a tile (the tiny decks').
  // The planner charges a masked tile's (pair, head) (ratio − 1) times a dense one's at head
  // dim 16 (attention_pair_head_s + 14·16 / the attention rate) on top of its work, whatever
  // the model's head dim: the rule's cost is per pair, not per head-dim unit. 1 where the file
  // has no attention_masked_tile_ratio (a GPU's tiles apply the mask in registers).
  double attention_masked_tile_ratio = 1;
  // A tile's fixed work besides its pairs (each query row's pass over a key tile, each key's
  // share of the GEMMs' set-up): a tile of q rows and k keys costs as (q + rows)(k + keys) pairs
  // at one rate per pair, the rates above measured on full 64 x 64 tiles (hwprobe: tiles of 8
  // rows and of 8 keys against full ones). The file's "attention_tile_rows" and
  // "attention_tile_keys"; 0 where unmeasured (the GPU files): every tile at its pairs.
  double attention_tile_rows = 0, attention_tile_keys = 0;
  // The forward's share of attention's forward + backward time (4 of the 14 FLOPs per pair and
  // head dim unless measured), by head dim where measured ("attention_forward_fraction_by_head_dim"
  // {"16": figure, "64": figure}: the softmax's work, as long in either pass, weighs more in
  // narrow heads), else the file's one "attention_forward_fraction".
  double attention_forward_fraction = 4.0 / 14;
  std::vector<std::pair<double, double>> attention_forward_fraction_by_head_dim;
  // Dropout's seconds per element and pass (forward or backward) besides its memory traffic:
  // drawing the element's counter-based keep word (Philox, kernels/dropout_keep.hpp) and
  // applying it; 0 where the file has no dropout_element_seconds.
  double dropout_element_s = 0;
  // The activation functions' seconds per element, forward (act(pre)) and backward
  // (act'(pre)·dy), beyond their bytes: the arithmetic of tanh, exp or erf that the linears
  // fuse (a CPU's; a GPU's are hidden under the bytes); an activation absent costs its bytes only.
  struct ActivationCost {
    double forward_s = 0, backward_s = 0;
  };
  std::map<Activation, ActivationCost> activation_element_s;
  // The seconds per element of the elementwise ops whose time is their arithmetic (by
  // kArithmeticElementwiseOps name, kernels/op_types.hpp: rope's and the sinusoids' sines and
  // cosines, the norms' statistics and passes), a CPU's, and the seconds per row beside them (the
  // norms': a row's statistics and set-up; 0 where absent); an op absent from the first costs its
  // tensor's bytes at the memory bandwidth.
  std::map<std::string, double> elementwise_element_s, elementwise_row_s;
  // The optimizer phase's seconds per trained element (Σg² of the gradients and the AdamW step,
  // streaming fp32 parameters, gradients and moments), per core; 0 where the file has no
  // optimizer_element_seconds: that work is its bytes at memory_bytes_per_s.
  double optimizer_element_s = 0;
  double memory_bytes_per_s = 0;  // device memory (HBM or DRAM) bandwidth
  double memory_bytes = 0;        // per device
  double reserved_bytes = 0;      // runtime, fragmentation
  // On a GPU: the GEMM library's workspace (cuBLASLt) and the communication library's channels
  // and buffers (NCCL); summary.json measures both (device_memory_bytes).
  double blas_workspace_bytes = 0, comm_library_bytes = 0;
  // The backend keeps the blocks' activations in the compute precision (a GPU: CUDA's mixed
  // storage, Model's training_blocks_dtype), or everything in fp32 (the CPU kernels widen bf16
  // to fp32).
  bool activations_in_compute_precision = true;
  // The GEMM rates were measured on weights in cache (hwprobe's trunk: one layer's weights,
  // reused): a step's linears each read their own weights from memory in the forward, again in
  // the backward with their gradients read and written (dW accumulates), which the planner then
  // costs apart at the memory rate (on a CPU the GEMM library packs each weight panel before its
  // kernel runs: a pass of its own). false: the rates include it (a GPU's tiles stream weights
  // under their math).
  bool gemm_rate_on_cached_weights = false;
  // The node's last-level cache, shared by its ranks: a rank whose step works over more than its
  // share (parameters, their gradients and a micro-batch's activations) reads its weights from
  // memory at every pass, its cycle through them evicting each before its next use; one whose
  // working set fits keeps them (the tiny decks). 0: every weight is read from memory.
  double last_level_cache_bytes = 0;
  // false: no core to spare (MACHINE.md): the MPI progress thread's copies and sums take the
  // compute's core time, so every collective adds to the step.
  bool comm_overlaps_compute = true;
  // CPU: a rank's per-op rates when the run leaves cores idle (fewer ranks than cores) over
  // the rates with every core busy, which the per-op figures are.
  double spare_core_speedup = 1;
  // The same for memory-bound work (the optimizer's passes alone over with every rank streaming;
  // the triad showed 1.04): a lone rank's elementwise passes, gradient buffers and optimizer step
  // have the memory system to themselves (regression/plan_validation.md round 23: 1.0-1.45x
  // here, median 1.31 over 28 probes, the GEMMs' 0.99-1.01x).
  double memory_spare_core_speedup = 1;
  // How much longer than the typical rank's compute a step's work takes when every collective
  // waits for the slowest rank (ranks time-sharing cores with other load), measured with
  // rank_imbalance_ranks ranks (hwprobe --imbalance at more ranks than cores: the drift of ranks
  // sharing cores); 0: dedicated devices.
  double rank_imbalance = 0;
  int rank_imbalance_ranks = 0;  // the ranks it was measured with (0: devices_per_node)
  // With more ranks than cores: how long the rank that holds a core as the step's head ends runs
  // before a rank sharing the core takes it (first_turn_s: hwprobe --imbalance at that count, when
  // its rounds' ranks that took their core second left the opening reduction less when the first
  // ones did: the median, and the interquartile range first_turn_spread_s, a step's first turn
  // taken uniform over the median ± it), and the scheduler's turns after it (turn_s: a rank's runs between its partners' turns,
  // spinning). The ranks leave the head in these turns at a full core (step_model.cpp
  // HeadTurns); 0: unmeasured, the passes paced throughout.
  double first_turn_s = 0, first_turn_spread_s = 0, turn_s = 0;
  LinkSpec intra_node, inter_node;    // inter_node: one NIC
  // Ranks time-sharing cores (more than devices_per_node on a CPU node): their collectives as
  // measured at rank_imbalance_ranks ranks by hwprobe --imbalance (the file's
  // "time_sharing_link", its keys intra_node's), the link's pass and the sums' rate by size. A
  // ring's hops wait for the partners' turns and its sums share the core with them, so neither
  // follows the figures of a rank per core: on this VM 4 ranks on 2 cores gathered at 2.3-2.4
  // GB/s a ring pass where 2 ranks read 3.1-4.8 GB/s, probe to probe, while the 4-rank runs'
  // waits did not move (regression/plan_validation.md session 18). bytes_per_s 0: not measured,
  // the intra_node figures scaled by the ranks' share of a core.
  LinkSpec time_sharing_link;
  std::vector<std::pair<double, double>> time_sharing_reduce_bytes_per_s_by_size;
  // And the core seconds their collectives take from their compute per byte a rank sends
  // (comm_core_seconds_per_byte's measure at that count, "time_sharing_link.core_seconds_per_byte"):
  // the partners' copies and sums run on the cores they compute on. A machine of one core has no
  // rank-per-core figure at all (one rank copies; round 51: every collective of 2 ranks on it a
  // wait, 30 ms predicted exposed against 5 measured). 0: not measured, comm_core_seconds_per_byte.
  double time_sharing_core_seconds_per_byte = 0;
  double time_sharing_core_seconds_per_call = 0;  // and per collective call (comm_core_seconds_per_call's)
  // The rate a rank sums the bytes it receives in a reduce-scatter or all-reduce, on top of the
  // link's pass: an MPI reduction on a CPU (the progress thread adds each piece); 0 where the
  // sum is fused into the transfer at memory speed (NCCL's kernels).
  double reduce_bytes_per_s = 0;
  // The same rate by the collective's full buffer (bytes), as (bytes, rate) ascending: Open MPI's
  // non-blocking reduce-scatter run by the progress thread sums a small buffer at memory speed
  // and a large one two orders of magnitude slower (regression/plan_validation.md round 14).
  // intra_node.reduce_bytes_per_s_by_size {"<bytes>": figure, ...}; empty: reduce_bytes_per_s
  // at every size.
  std::vector<std::pair<double, double>> reduce_bytes_per_s_by_size;
  // With no core to spare (comm_overlaps_compute = false): the core seconds the progress thread
  // takes from the rank's compute per byte a rank sends in a collective (MPI's copies and sums
  // on the rank's own core), on the rank that takes most (MPI's reduce-scatter sums on rank 0,
  // and every rank waits for it). A collective under the compute then makes the compute slower
  // by this much, and only the rest of its time is a wait. 0: every collective is a wait.
  double comm_core_seconds_per_byte = 0;
  // And per collective call, whatever its size: the progress thread's wake-ups and polls at a
  // raised priority on the rank's core (a 2-rank ZeRO-3 forward 0.15-0.29 ms above a 1-rank one
  // of the same samples with the thread, level without it; hwprobe: 0.18-0.20 ms a call on the
  // AMD VM, where 8 MiB shards' per-byte figure gave a tiny deck's 0.84 MB reduction 0.12 ms in
  // all: regression/plan_validation.md session 24). 0: not measured.
  double comm_core_seconds_per_call = 0;
  int nics_per_node = 0;
  double storage_read_per_node = 0;   // dataset read bandwidth, bytes/s
  double checkpoint_write_per_node = 0, checkpoint_write_total = 0;  // bytes/s
  FixedCosts fixed;
};

// `name_or_path`: a file path (contains '/' or ends in .json), or a name in inputs/hw.
Hardware load_hardware(const std::string& name_or_path);
// The GEMM rate at model width `width` over the file's GEMM rate (gemm_width_efficiency,
// interpolated in log2(width), held at the table's ends; 1 without a table).
double gemm_efficiency(const Hardware& hw, double width);
// The forward's share of attention's time at head dim `head_dim`: the file's table interpolated in
// log2(head_dim), held at its ends; its one figure without a table.
double attention_forward_fraction(const Hardware& hw, double head_dim);
// The GEMM rate of a linear whose narrower dimension is `narrow` in a model of width `width`
// over the file's GEMM rate: gemm_narrow_efficiency's (interpolated in log2(narrow), held at
// its narrowest key) for a linear narrower than the model and no wider than the table's widest
// key, gemm_efficiency(width) for every other (the trunk's linears and any wider one).
double linear_efficiency(const Hardware& hw, double narrow, double width);
// The rate a rank sums a reduction of a `full_bytes` buffer: reduce_bytes_per_s_by_size's rate
// at the smallest measured size that holds the buffer (the largest size's beyond it), not an
// interpolation: where between its sizes the slow regime starts is not measured (an idle probe
// sees it begin between 24 and 32 MiB, the runs already at 17.5 MB), so a buffer between two
// sizes is charged the larger one's rate. reduce_bytes_per_s without a table.
double reduce_rate(const Hardware& hw, double full_bytes);
// The same from time_sharing_reduce_bytes_per_s_by_size, for ranks time-sharing cores.
double time_sharing_reduce_rate(const Hardware& hw, double full_bytes);
// The share of a device one of `ranks` ranks gets: ranks sharing a CPU node share its cores.
double device_share(const Hardware& hw, int ranks);
// More ranks than a CPU node's cores: they take turns on them.
bool ranks_time_share_cores(const Hardware& hw, int ranks);
// The ranks that take turns on one core (1 / device_share): 1 where each has a core or a device.
double ranks_a_core(const Hardware& hw, int ranks);
// The file has time_sharing_link (hwprobe --imbalance at more ranks than cores).
bool time_sharing_link_measured(const Hardware& hw);
// The core seconds a collective takes from its rank's compute where no core is spare: per byte
// the rank sends and per call. The time_sharing_core figures for ranks time-sharing cores where
// measured, else the comm_core ones.
struct CommCoreCost {
  double per_byte = 0, per_call = 0;
};
CommCoreCost comm_core_cost(const Hardware& hw, int ranks);
// Peak FLOP/s of one rank's share (the MFU denominator).
double peak_flops_per_rank(const Hardware& hw, bool bf16, int ranks);

}  // namespace emb
