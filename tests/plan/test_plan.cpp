// The planner (src/plan): the α–β collective times against their closed forms, the step
// model's accounting of micro-batches, recompute, precision, sharding and overlap, the
// configuration ranking, and the hardware files.
#define BOOST_TEST_MODULE plan
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "model/flow_matching.hpp"
#include "model/model.hpp"
#include "model/presets.hpp"
#include "plan/backbone_cost.hpp"
#include "parallel/shard_layout.hpp"
#include "parallel/zero3_schedule.hpp"
#include "plan/computed_attention.hpp"
#include "plan/config_search.hpp"
#include "plan/elementwise_work.hpp"
#include "plan/gradient_traffic.hpp"
#include "plan/op_calls.hpp"
#include "plan/plan_batches.hpp"
#include "plan/plan_output.hpp"
#include "plan/step_model.hpp"

using namespace emb;

namespace {

// A GPU-like machine with round figures, so the expected times are easy to write down.
Hardware gpu_node() {
  Hardware h;
  h.name = "test gpu";
  h.devices_per_node = 8;
  h.peak_fp32 = 50e12, h.peak_bf16 = 1000e12;
  h.gemm_fp32 = 40e12, h.gemm_bf16 = 500e12;
  h.attention_fp32 = 20e12, h.attention_bf16 = 250e12;
  h.memory_bytes_per_s = 2e12, h.memory_bytes = 80e9, h.reserved_bytes = 4e9;
  h.intra_node = {400e9, 2e-6};
  h.inter_node = {50e9, 5e-6};
  h.nics_per_node = 8;
  h.storage_read_per_node = 10e9, h.checkpoint_write_per_node = 5e9, h.checkpoint_write_total = 100e9;
  return h;
}

// The step's parts as the trainer times them: they sum to the step.
double phase_sum(const PhasePrediction& ph) {
  return ph.data_wait + ph.fwd + ph.bwd + ph.comm_exposed + ph.optim + ph.other;
}

// The step's collective calls, each a synchronisation a rank may wait at.
int collective_calls(const StepPrediction& s) {
  int calls = 0;
  for (const CollectiveCost& c : s.collectives) calls += c.buckets * c.per_step;
  return calls;
}

// The same figures on a CPU node of 2 cores that its ranks share.
Hardware two_core_node() {
  Hardware h = gpu_node();
  h.ranks_share_node = true;
  h.devices_per_node = 2;
  return h;
}

// Two cores whose time-sharing link was measured at 4 ranks (hwprobe --imbalance at that count),
// no core to spare for the progress thread.
Hardware time_sharing_two_core_node() {
  Hardware h = two_core_node();
  h.intra_node.bytes_per_s = 1e9;
  h.comm_overlaps_compute = false;
  h.rank_imbalance_ranks = 4;
  h.time_sharing_link = {5e8, 1e-5};
  h.time_sharing_reduce_bytes_per_s_by_size = {{1 << 20, 1e9}};
  return h;
}

// tiny_gr00t's deck as it is (packed), at 2 ranks.
Workload tiny_gr00t_workload() {
  Workload w;
  w.model = preset_config("tiny_gr00t");
  w.ranks = 2;
  w.global_batch = 32;
  return w;
}

Workload tiny_workload() {
  Workload w;
  w.model = preset_config("tiny_wan");
  w.model.n_layers = 8;  // deep enough that recompute saves more than its work buffers cost
  w.ranks = 8;
  w.global_batch = 64;
  w.packing = false;
  w.micro_batch = 2;
  w.shard = ShardMode::full;
  w.bucket_bytes = 16 << 10;  // one unit per bucket: a pipeline to overlap
  return w;
}

// inputs/hw/cpu_dev.json with each of `sections` ({name: figures}) in place of its own, read
// back; the file written for the read is removed.
Hardware hardware_with_sections(const nlohmann::json& sections) {
  std::filesystem::create_directories("outputs");
  nlohmann::json j = nlohmann::json::parse(std::ifstream("inputs/hw/cpu_dev.json"));
  for (const auto& [section, figures] : sections.items()) j[section] = figures;
  const std::string path = "outputs/test_plan_hw_" + sections.begin().key() + ".json";
  std::ofstream(path) << j.dump();
  struct Remove {
    std::string path;
    ~Remove() { std::filesystem::remove(path); }
  } remove{path};
  return load_hardware(path);
}

Hardware hardware_with(const std::string& section, const nlohmann::json& figures) {
  return hardware_with_sections({{section, figures}});
}

nlohmann::json figure(double value) { return {{"value", value}, {"source", "test"}}; }

}  // namespace

BOOST_AUTO_TEST_CASE(ring_collectives_match_the_closed_form_inside_a_node) {
  const Hardware h = gpu_node();
  const double n = 1e9;
  const double pass = 7 * 2e-6 + 7.0 / 8 * n / 400e9;
  BOOST_TEST(collective_time(h, Collective::all_gather, n, 8).seconds == pass, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(collective_time(h, Collective::reduce_scatter, n, 8).seconds == pass, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(collective_time(h, Collective::all_reduce, n, 8).seconds <= 2 * pass + 1e-12);
  // One rank: the out-of-place collectives copy the buffer, the in-place all-reduce is free.
  BOOST_TEST(collective_time(h, Collective::all_gather, n, 1).seconds == n / h.memory_bytes_per_s,
             boost::test_tools::tolerance(1e-12));
  BOOST_TEST(collective_time(h, Collective::all_gather, n, 1).algorithm == "copy");
  BOOST_TEST(collective_time(h, Collective::all_reduce, n, 1).seconds == 0.0);
}

// A CPU's MPI sums what it receives on the progress thread: reduce-scatters and all-reduces
// take (p−1)/p·n bytes at the reduction rate on top of the pass; all-gathers do not.
BOOST_AUTO_TEST_CASE(reductions_add_their_sums_at_the_reduce_rate) {
  Hardware h = gpu_node();
  const double n = 1e9, pass = 7 * 2e-6 + 7.0 / 8 * n / 400e9;
  const double gather = collective_time(h, Collective::all_gather, n, 8).seconds;
  const double all_reduce = collective_time(h, Collective::all_reduce, n, 8).seconds;
  h.reduce_bytes_per_s = 50e9;
  const double sums = 7.0 / 8 * n / 50e9;
  BOOST_TEST(collective_time(h, Collective::all_gather, n, 8).seconds == gather, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(collective_time(h, Collective::reduce_scatter, n, 8).seconds == pass + sums,
             boost::test_tools::tolerance(1e-12));
  BOOST_TEST(collective_time(h, Collective::all_reduce, n, 8).seconds == all_reduce + sums,
             boost::test_tools::tolerance(1e-12));
}

// intra_node.reduce_bytes_per_s_by_size: the sums at the rate of the smallest measured size that
// holds the buffer, the largest size's beyond the table (a small buffer's sums at memory speed,
// a large one's on MPI's slow path); the file's table keyed by bytes, each a figure with its
// source.
BOOST_AUTO_TEST_CASE(reductions_sum_at_the_rate_of_their_buffer_size) {
  Hardware h = gpu_node();
  h.reduce_bytes_per_s = 1e8;
  h.reduce_bytes_per_s_by_size = {{1 << 20, 8e8}, {1 << 24, 2e8}};
  BOOST_TEST(reduce_rate(h, 1 << 18) == 8e8);
  BOOST_TEST(reduce_rate(h, 1 << 20) == 8e8);
  BOOST_TEST(reduce_rate(h, (1 << 20) + 1) == 2e8);  // held by the 16 MiB size
  BOOST_TEST(reduce_rate(h, 1 << 28) == 2e8);
  // 4 MiB over 8 ranks: the ring pass, and 7/8 of it summed at 2e8 B/s (the 16 MiB size's rate).
  const double n = 1 << 22, pass = 7 * 2e-6 + 7.0 / 8 * n / 400e9;
  BOOST_TEST(collective_time(h, Collective::reduce_scatter, n, 8).seconds == pass + 7.0 / 8 * n / 2e8,
             boost::test_tools::tolerance(1e-12));
  BOOST_TEST(collective_time(h, Collective::reduce_scatter, 1 << 19, 8).seconds ==
                 7 * 2e-6 + 7.0 / 8 * (1 << 19) / 400e9 + 7.0 / 8 * (1 << 19) / 8e8,
             boost::test_tools::tolerance(1e-12));
  h.reduce_bytes_per_s_by_size.clear();
  BOOST_TEST(reduce_rate(h, n) == 1e8);
  std::filesystem::create_directories("outputs");
  nlohmann::json j = nlohmann::json::parse(std::ifstream("inputs/hw/cpu_dev.json"));
  const std::string path = "outputs/test_plan_reduce_hw.json";
  j["intra_node"]["reduce_bytes_per_s_by_size"] = {{"4194304", {{"value", 5e8}, {"source", "test"}}},
                                                   {"262144", {{"value", 9e8}, {"source", "test"}}}};
  std::ofstream(path) << j.dump();
  const Hardware read = load_hardware(path);
  BOOST_TEST(read.reduce_bytes_per_s_by_size.size() == 2u);
  BOOST_TEST(read.reduce_bytes_per_s_by_size.front().first == 262144.0);  // ascending by size
  BOOST_TEST(reduce_rate(read, 1 << 20) == 5e8);
  j["intra_node"]["reduce_bytes_per_s_by_size"]["big"] = {{"value", 1e8}, {"source", "test"}};
  std::ofstream(path) << j.dump();
  BOOST_CHECK_THROW(load_hardware(path), Error);  // a key that is not a size
  j["intra_node"]["reduce_bytes_per_s_by_size"].erase("big");
  j["intra_node"]["reduce_bytes_per_s_by_size"]["4194304"].erase("source");
  std::ofstream(path) << j.dump();
  BOOST_CHECK_THROW(load_hardware(path), Error);  // a figure without its source
  std::filesystem::remove(path);
}

BOOST_AUTO_TEST_CASE(small_all_reduces_take_the_tree_and_large_multi_node_ones_the_hierarchy) {
  const Hardware h = gpu_node();
  const CollectiveTime small = collective_time(h, Collective::all_reduce, 8, 8);
  BOOST_TEST(small.algorithm == "tree");
  BOOST_TEST(small.seconds == 2 * 3 * 2e-6 + 2 * 8 / 400e9, boost::test_tools::tolerance(1e-9));
  const CollectiveTime gather = collective_time(h, Collective::all_gather, 1e9, 64);
  BOOST_TEST(gather.algorithm == "hierarchical");
  const double expected = 7 * 2e-6 + 7.0 / 8 * 1e9 / 400e9 + 7 * 5e-6 + 7.0 / 8 * (1e9 / 8) / 50e9;
  BOOST_TEST(gather.seconds == expected, boost::test_tools::tolerance(1e-9));
  Hardware one_node = h;
  one_node.nics_per_node = 0;
  BOOST_CHECK_THROW(collective_time(one_node, Collective::all_gather, 1e9, 16), Error);
}

BOOST_AUTO_TEST_CASE(the_global_batch_splits_into_micro_batches_per_rank) {
  const StepPrediction s = predict_step(gpu_node(), tiny_workload());
  BOOST_TEST(s.samples_per_rank == 8);
  BOOST_TEST(s.samples_per_mb == 2);
  BOOST_TEST(s.micro_batches == 4);
  // ZeRO-3 gathers twice and reduces once per micro-batch.
  BOOST_TEST(s.collectives.size() == 3u);
  for (const CollectiveCost& c : s.collectives) BOOST_TEST(c.per_step == 4);
  BOOST_TEST(s.samples_per_s_per_device == 64 / s.step_s / 8, boost::test_tools::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(recompute_costs_forward_work_and_saves_activations) {
  Workload w = tiny_workload();
  w.model.recompute = Recompute::none;
  const StepPrediction none = predict_step(gpu_node(), w);
  w.model.recompute = Recompute::selective;
  const StepPrediction selective = predict_step(gpu_node(), w);
  w.model.recompute = Recompute::full;
  const StepPrediction full = predict_step(gpu_node(), w);
  BOOST_TEST(none.recompute_s == 0.0);
  // The recomputed forward's elementwise ops are among the backward's (the dry step's), the rest
  // of the forward is the recompute's.
  BOOST_TEST(full.recompute_s == full.fwd_s - full.fwd_kinds.elementwise, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(full.elementwise_bytes_bwd > none.elementwise_bytes_bwd);
  BOOST_TEST(selective.recompute_s > 0.0);
  BOOST_TEST(selective.recompute_s < full.recompute_s);
  BOOST_TEST(none.activation_bytes > selective.activation_bytes);
  BOOST_TEST(selective.activation_bytes > full.activation_bytes);
  BOOST_TEST(full.flops_per_sample == none.flops_per_sample);  // MFU counts model FLOPs only
}

// bf16 on a GPU stores the blocks' data tensors in bf16 (CUDA's mixed storage) and the rest
// (residual stream, statistics, encoders, heads) in fp32, as a run does: the activations shrink
// by half of the fp32 plan's block part, less the bf16 copies the blocks take of fp32 tensors,
// measured from the plan's own layout, FP8 or not. The CPU keeps every activation in fp32.
BOOST_AUTO_TEST_CASE(bf16_halves_the_blocks_activations_on_a_gpu_and_not_on_the_cpu) {
  Workload w = tiny_workload();
  Hardware h = gpu_node();
  const StepPrediction fp32 = predict_step(h, w);
  w.model.precision = Precision::bf16;
  const StepPrediction bf16 = predict_step(h, w);
  BOOST_TEST((planned_blocks_dtype(h, w.model) == DType::bf16));

  const PlanReport sample = make_plan(w.model, w.ranks, 1, w.sample);
  const int64_t budget = bf16.samples_per_mb * (sample.tokens_per_sample + sample.context_per_sample);
  const PlanReport wide = make_plan(w.model, w.ranks, budget, w.sample, DType::f32);
  const PlanReport narrow = make_plan(w.model, w.ranks, budget, w.sample, DType::bf16);
  BOOST_TEST((narrow.blocks_dtype == DType::bf16));
  BOOST_TEST(wide.block_activation_bytes > 0.5 * wide.activation_bytes);  // the blocks hold most of it
  BOOST_TEST(wide.block_conversion_bytes == 0.0);
  BOOST_TEST(narrow.block_conversion_bytes > 0.0);
  // What stays fp32 is the same; the blocks' part halves (each tensor rounded up to 64 bytes).
  BOOST_TEST(narrow.activation_bytes - narrow.block_activation_bytes - narrow.block_conversion_bytes ==
             wide.activation_bytes - wide.block_activation_bytes);
  BOOST_TEST(narrow.block_activation_bytes == wide.block_activation_bytes / 2, boost::test_tools::tolerance(1e-3));
  BOOST_TEST(fp32.activation_bytes == wide.activation_bytes);
  const double saved = wide.block_activation_bytes / 2 - narrow.block_conversion_bytes;
  BOOST_TEST(saved > 0.25 * fp32.activation_bytes);
  BOOST_TEST(bf16.activation_bytes == fp32.activation_bytes - saved, boost::test_tools::tolerance(1e-3));
  BOOST_TEST(bf16.compute_s < fp32.compute_s);

  h.activations_in_compute_precision = false;
  BOOST_TEST(predict_step(h, w).activation_bytes == fp32.activation_bytes);
  h.activations_in_compute_precision = true;
  w.model.fp8 = true;
  BOOST_TEST((planned_blocks_dtype(h, w.model) == DType::bf16));
}

BOOST_AUTO_TEST_CASE(sharding_orders_memory_and_overlap_hides_communication) {
  Workload w = tiny_workload();
  Hardware h = gpu_node();
  double state[3];
  int i = 0;
  for (ShardMode shard : {ShardMode::none, ShardMode::grads, ShardMode::full}) {
    w.shard = shard;
    state[i++] = predict_step(h, w).state_bytes;
  }
  BOOST_TEST(state[0] > state[1]);
  BOOST_TEST(state[1] > state[2]);
  // Slow links: communication is visible, and with overlap part of it is hidden.
  h.intra_node.bytes_per_s = 1e9;
  w.shard = ShardMode::full;
  const StepPrediction hidden = predict_step(h, w);
  BOOST_TEST(hidden.comm_exposed_s < hidden.comm_total_s);
  h.comm_overlaps_compute = false;
  const StepPrediction serial = predict_step(h, w);
  BOOST_TEST(serial.comm_exposed_s == serial.comm_total_s, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(serial.step_s > hidden.step_s);
}

// Padding (packing = off) runs the GEMMs over the padded context but attention skips it; the
// packer's token budget then holds fewer samples per micro-batch.
BOOST_AUTO_TEST_CASE(padded_context_costs_gemms_and_micro_batches_but_no_attention) {
  Workload w = tiny_workload();
  w.model = preset_config("tiny_gr00t");
  w.micro_batch = 0;
  w.tokens_per_mb = 2048;
  w.sample.context_tokens = 40;
  const StepPrediction packed = predict_step(gpu_node(), w);
  w.sample.padded_context = 240;
  const StepPrediction padded = predict_step(gpu_node(), w);
  const PlanReport a = make_plan(w.model, w.ranks, 1, {40, 0}), b = make_plan(w.model, w.ranks, 1, {40, 240});
  BOOST_TEST(b.context_per_sample == 240);
  BOOST_TEST(b.cross_pairs_per_sample == a.cross_pairs_per_sample);
  BOOST_TEST(b.attn_flops_fwd == a.attn_flops_fwd);
  BOOST_TEST(b.gemm_flops_fwd > a.gemm_flops_fwd);
  BOOST_TEST(padded.compute_s > packed.compute_s);
  // 2048 tokens hold 2048 / (query + 40) packed samples, 2048 / (query + 240) padded ones.
  const int64_t q = a.tokens_per_sample;
  BOOST_TEST(packed.samples_per_mb == std::min<int64_t>(2048 / (q + 40), packed.samples_per_rank));
  BOOST_TEST(padded.samples_per_mb == 2048 / (q + 240));
  // The micro-batch costed is those samples, which --plan's header plans memory for too.
  BOOST_TEST(padded.tokens_per_mb == padded.samples_per_mb * (q + 240));
  w.micro_batch = 3;  // padded with train.micro_batch set: 3 samples whatever data.tokens_per_mb holds
  const StepPrediction three = predict_step(gpu_node(), w);
  BOOST_TEST(three.samples_per_mb == 3);
  BOOST_TEST(three.tokens_per_mb == 3 * (q + 240));
}

// FP8 runs the GEMMs at the hardware's FP8 rate (and quantizes their inputs); a machine
// without an FP8 rate refuses it.
BOOST_AUTO_TEST_CASE(fp8_runs_gemms_at_the_fp8_rate) {
  Hardware h = gpu_node();
  Workload w = tiny_workload();
  w.model = preset_config("gr00t_n1.5_3b");  // GEMM-bound: tiny_wan's step is activation traffic at GPU rates
  w.model.precision = Precision::bf16;
  BOOST_CHECK_THROW(predict_step(h, [&] { Workload f = w; f.fp8 = true; return f; }()), Error);
  h.gemm_fp8 = 4 * h.gemm_bf16;
  const StepPrediction bf16 = predict_step(h, w);
  w.fp8 = true;
  const StepPrediction fp8 = predict_step(h, w);
  BOOST_TEST(fp8.compute_s < bf16.compute_s);
  BOOST_TEST(fp8.flops_per_sample == bf16.flops_per_sample);
  BOOST_TEST(load_hardware("h100_sxm").gemm_fp8 > load_hardware("h100_sxm").gemm_bf16);
}

// The tiled kernels compute whole 64 x 64 tiles: a full mask over one sample of a multiple of 64
// tokens computes exactly its pairs; block-causal blocks that packing shifts off the tile
// grid (a second sample starting at 1032 = 16 x 64 + 8) cost more than their allowed pairs.
BOOST_AUTO_TEST_CASE(attention_time_counts_the_tiles_the_kernels_compute) {
  ModelConfig c = preset_config("tiny_wan");
  c.latent_frames = 8, c.latent_height = 16, c.latent_width = 16;  // 1024 video + 8 action tokens
  c.max_text_tokens = 64;
  const PlanSample shape{16, 0};
  const PlanReport one = make_plan(c, 1, 1, shape);
  BOOST_TEST(one.tokens_per_sample == 1032);
  const ComputedAttention aligned = computed_attention(c, 1, shape), packed = computed_attention(c, 3, shape);
  BOOST_TEST(aligned.flops_fwd >= one.attn_flops_fwd);
  BOOST_TEST(aligned.flops_fwd < 1.1 * one.attn_flops_fwd);
  BOOST_TEST(packed.flops_fwd > 1.2 * aligned.flops_fwd);
  BOOST_TEST(packed.pair_heads > 1.2 * aligned.pair_heads);
  // A dense mask loses less to the grid: only the tiles across a sample boundary are partial.
  c.self_mask = SelfMask::full;
  const PlanReport dense = make_plan(c, 1, 1, shape);
  const ComputedAttention dense_packed = computed_attention(c, 3, shape);
  BOOST_TEST(dense.attn_flops_fwd > 2.5 * one.attn_flops_fwd);
  BOOST_TEST(dense_packed.flops_fwd / dense.attn_flops_fwd < packed.flops_fwd / one.attn_flops_fwd);
}

// Samples shorter than a tile share it: ten 13-token gr00t samples with 34 context tokens,
// packed end to end (130 tokens, 340 context), compute whole the 64 x 64 tiles that span them,
// several times their own pairs; the estimate takes all ten (as many as span 4 tiles).
//   self   3 diagonal tiles (64², 64², 2²) and the 4 that samples 4 and 9 straddle
//          (2·64², 2·64·2): 16644 pairs
//   cross  query tile 0 (samples 0-4, context 0-169) meets key tiles 0-2: 3·64²; tile 1
//          (samples 4-9, context 136-339) key tiles 2-5: 3·64² + 64·20; tile 2 (sample 9,
//          context 306-339) key tiles 4-5: 2·64 + 2·20: 26024 pairs
//   context (the vision-language blocks, 34-token blocks over 340) 56208 pairs
BOOST_AUTO_TEST_CASE(samples_shorter_than_a_tile_share_its_work) {
  const ModelConfig c = preset_config("tiny_gr00t");
  const PlanSample shape{34, 0};
  const PlanReport one = make_plan(c, 1, 1, shape);
  BOOST_TEST(one.tokens_per_sample == 13);
  BOOST_TEST(one.context_per_sample == 34);
  const int n_self = c.n_layers / 2, n_cross = c.n_layers - n_self;
  const double pair_heads =
      (c.n_heads * (n_self * 16644.0 + n_cross * 26024.0) + c.n_heads_vl * c.n_layers_vl * 56208.0) / 10;
  const ComputedAttention ten = computed_attention(c, 10, shape), two = computed_attention(c, 2, shape);
  BOOST_TEST(ten.pair_heads == pair_heads, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(ten.pair_heads > 5 * one.attn_pair_heads);
  BOOST_TEST(ten.pair_heads > 2.5 * two.pair_heads);
}

// Of those tiles, the masked ones (the mask decided per pair: more than one sample in the query
// or the key tile) are all but three, each holding one sample's pairs only: self the 2 x 2 tile
// of sample 9 (4 pairs), cross sample 9's 2 queries over its last 20 context tokens (40), context
// sample 9's last 20 x 20 (400). The step charges each masked (pair, head) the file's
// attention_masked_tile_ratio less one times a dense (pair, head) at head dim 16
// (attention_pair_head_s + 14·16 / the attention rate), split by the forward's share.
BOOST_AUTO_TEST_CASE(masked_tiles_cost_the_measured_ratio_over_a_dense_pair) {
  const ModelConfig c = preset_config("tiny_gr00t");
  const PlanSample shape{34, 0};
  const int n_self = c.n_layers / 2, n_cross = c.n_layers - n_self;
  const double masked =
      (c.n_heads * (n_self * 16640.0 + n_cross * 25984.0) + c.n_heads_vl * c.n_layers_vl * 55808.0) / 10;
  BOOST_TEST(computed_attention(c, 10, shape).masked_pair_heads == masked, boost::test_tools::tolerance(1e-12));

  Hardware h = gpu_node();
  h.attention_pair_head_s = 3e-9, h.attention_forward_fraction = 0.35;
  Workload w;
  w.model = c;
  w.sample = shape;
  w.ranks = 1;
  w.global_batch = 30;
  w.packing = false;
  w.micro_batch = 10;
  const StepPrediction base = predict_step(h, w);
  h.attention_masked_tile_ratio = 1.5;
  const StepPrediction ruled = predict_step(h, w);
  const double per_pair_head = 0.5 * (3e-9 + 14.0 * 16 / 20e12);  // ratio − 1, gpu_node's fp32 attention rate
  const double added = 30 * masked * per_pair_head;
  BOOST_TEST(ruled.fwd_s - base.fwd_s == 0.35 * added, boost::test_tools::tolerance(1e-6));
  BOOST_TEST(ruled.bwd_s - base.bwd_s == 0.65 * added, boost::test_tools::tolerance(1e-6));
  BOOST_TEST(load_hardware("cpu_dev").attention_masked_tile_ratio > 1);
}

// A tile's fixed work besides its pairs: with the file's attention_tile_rows and _keys (ρ, κ) a
// tile of q rows and k keys counts as the full tile's pairs that cost as much,
// 64·64·(q + ρ)(k + κ) / ((64 + ρ)(64 + κ)). One tiny_gr00t sample (13 tokens, 34 context)
// computes one tile of each attention, self 13 x 13, cross 13 x 34 and context 34 x 34, all dense:
// at (4, 10) 318, 609 and 1361 pairs where their own are 169, 442 and 1156. Ten packed samples'
// tiles are mostly full: they gain less. The step's attention grows with them; a file without the
// figures (the GPU files) counts every tile at its pairs; negative figures are refused.
BOOST_AUTO_TEST_CASE(tiles_of_few_rows_or_keys_cost_their_fixed_work) {
  const ModelConfig c = preset_config("tiny_gr00t");
  const PlanSample shape{34, 0};
  const TilePadding padding{4, 10};
  const auto padded = [](double rows, double keys) {
    return std::round(4096 * (rows + 4) * (keys + 10) / (68.0 * 74));
  };
  const int n_self = c.n_layers / 2, n_cross = c.n_layers - n_self;
  const auto pair_heads = [&](double self, double cross, double context) {
    return c.n_heads * (n_self * self + n_cross * cross) + c.n_heads_vl * c.n_layers_vl * context;
  };
  const ComputedAttention bare = computed_attention(c, 1, shape), one = computed_attention(c, 1, shape, padding);
  BOOST_TEST(bare.pair_heads == pair_heads(169, 442, 1156));
  BOOST_TEST(padded(13, 13) == 318.0);
  BOOST_TEST(one.pair_heads == pair_heads(padded(13, 13), padded(13, 34), padded(34, 34)));
  BOOST_TEST(one.masked_pair_heads == 0.0);
  BOOST_TEST(one.flops_fwd > 1.25 * bare.flops_fwd);
  const ComputedAttention ten_bare = computed_attention(c, 10, shape), ten = computed_attention(c, 10, shape, padding);
  BOOST_TEST(ten.pair_heads > ten_bare.pair_heads);
  BOOST_TEST(ten.pair_heads / ten_bare.pair_heads < one.pair_heads / bare.pair_heads - 0.1);

  Hardware h = load_hardware("cpu_dev");
  h.attention_tile_rows = 0, h.attention_tile_keys = 0;
  Workload w = tiny_gr00t_workload();
  w.sample = shape;  // the data's (the preset's typical sample has 294 context tokens: full tiles)
  w.packing = false;
  w.micro_batch = 1;
  const StepPrediction full_tiles = predict_step(h, w);
  h.attention_tile_rows = 4, h.attention_tile_keys = 10;
  const StepPrediction fixed_work = predict_step(h, w);
  BOOST_TEST(fixed_work.fwd_kinds.attention > 1.25 * full_tiles.fwd_kinds.attention);
  BOOST_TEST(fixed_work.bwd_kinds.attention > 1.25 * full_tiles.bwd_kinds.attention);
  BOOST_TEST(fixed_work.fwd_kinds.gemm == full_tiles.fwd_kinds.gemm);

  const Hardware cpu = load_hardware("cpu_dev"), gpu = load_hardware("h200");
  BOOST_TEST(cpu.attention_tile_rows > 1);
  BOOST_TEST(cpu.attention_tile_keys > 1);
  BOOST_TEST(gpu.attention_tile_rows == 0.0);
  BOOST_TEST(gpu.attention_tile_keys == 0.0);
  BOOST_TEST(hardware_with("attention_tile_rows", figure(5)).attention_tile_rows == 5.0);
  BOOST_CHECK_THROW(hardware_with("attention_tile_keys", figure(-1)), Error);
}

// Attention's time splits between the passes by the forward's share at the trunk's head dim: the
// file's table by head dim (interpolated in log2, held at its ends), its one figure without it;
// a share outside (0, 1] is refused.
BOOST_AUTO_TEST_CASE(attention_splits_at_the_forward_share_of_the_trunks_head_dim) {
  Hardware h = gpu_node();
  h.attention_forward_fraction = 0.3;
  BOOST_TEST(attention_forward_fraction(h, 16) == 0.3);
  h.attention_forward_fraction_by_head_dim = {{16, 0.4}, {64, 0.3}};
  BOOST_TEST(attention_forward_fraction(h, 32) == 0.35, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(attention_forward_fraction(h, 8) == 0.4);
  BOOST_TEST(attention_forward_fraction(h, 128) == 0.3);
  Workload w = tiny_workload();  // tiny_wan: 4 heads of 16
  w.ranks = 1;
  BOOST_TEST(w.model.d_model / w.model.n_heads == 16);
  const auto at = [&](double share_at_16) {
    h.attention_forward_fraction_by_head_dim = {{16, share_at_16}, {64, 0.3}};
    return predict_step(h, w);
  };
  const StepPrediction low = at(0.3), mid = at(0.35), high = at(0.4);
  BOOST_TEST(high.fwd_s > low.fwd_s);
  BOOST_TEST(high.fwd_s - low.fwd_s == 2 * (mid.fwd_s - low.fwd_s), boost::test_tools::tolerance(1e-9));
  BOOST_TEST(high.fwd_s + high.bwd_s == low.fwd_s + low.bwd_s, boost::test_tools::tolerance(1e-12));

  std::filesystem::create_directories("outputs");
  nlohmann::json j = nlohmann::json::parse(std::ifstream("inputs/hw/cpu_dev.json"));
  const std::string path = "outputs/test_plan_attention_share_hw.json";
  j["attention_forward_fraction_by_head_dim"] = {{"16", {{"value", 0.38}, {"source", "test"}}},
                                                 {"64", {{"value", 0.32}, {"source", "test"}}}};
  std::ofstream(path) << j.dump();
  BOOST_TEST(attention_forward_fraction(load_hardware(path), 16) == 0.38);
  j["attention_forward_fraction_by_head_dim"]["16"]["value"] = 1.2;
  std::ofstream(path) << j.dump();
  BOOST_CHECK_THROW(load_hardware(path), Error);
  std::filesystem::remove(path);
}

// ZeRO-3 keeps up to 4 gathered buckets (DataParallel's slots): a model in one bucket is
// gathered once a step and reduced per micro-batch.
BOOST_AUTO_TEST_CASE(zero3_in_few_buckets_gathers_once_a_step) {
  Workload w = tiny_workload();
  w.bucket_bytes = 1 << 30;
  const StepPrediction s = predict_step(gpu_node(), w);
  BOOST_TEST(s.buckets == 1);
  BOOST_TEST(s.micro_batches == 4);
  BOOST_TEST(s.collectives.size() == 2u);  // the gather and the reductions
  BOOST_TEST(collective_name(s.collectives[0].op) == std::string("all_gather"));
  BOOST_TEST(s.collectives[0].per_step == 1);
  BOOST_TEST(collective_name(s.collectives[1].op) == std::string("reduce_scatter"));
  BOOST_TEST(s.collectives[1].per_step == 4);
}

// On a CPU node a rank with cores to spare runs at the measured spare-core speedups (the
// GEMMs' and, for its memory traffic, the memory's: equal here, the compute scales by both).
BOOST_AUTO_TEST_CASE(fewer_ranks_than_cores_run_faster_by_the_spare_core_speedup) {
  Hardware h = two_core_node();
  Workload w = tiny_workload();
  w.ranks = 1;
  const double busy = predict_step(h, w).compute_s;
  h.spare_core_speedup = h.memory_spare_core_speedup = 1.5;
  BOOST_TEST(predict_step(h, w).compute_s == busy / 1.5, boost::test_tools::tolerance(1e-9));
  w.ranks = 2;
  const double two = predict_step(h, w).compute_s;
  h.spare_core_speedup = h.memory_spare_core_speedup = 1;
  BOOST_TEST(predict_step(h, w).compute_s == two, boost::test_tools::tolerance(1e-12));
}

// A lone rank's memory-bound work (activation traffic, gradient buffers, the optimizer's
// streams) runs at the memory spare-core speedup, its GEMMs at the compute one; with every core
// busy neither applies.
BOOST_AUTO_TEST_CASE(a_lone_rank_streams_memory_at_the_memory_spare_core_speedup) {
  Hardware h = two_core_node();
  h.optimizer_element_s = 1e-9;
  Workload w = tiny_workload();
  w.ranks = 1;
  const StepPrediction busy = predict_step(h, w);
  h.memory_spare_core_speedup = 1.25;
  const StepPrediction alone = predict_step(h, w);
  BOOST_TEST(alone.optimizer_s == busy.optimizer_s / 1.25, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(alone.gradient_backward_s == busy.gradient_backward_s / 1.25, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(alone.fwd_s < busy.fwd_s);  // the elementwise ops' bytes
  w.ranks = 2;
  const double two = predict_step(h, w).step_s;
  h.memory_spare_core_speedup = 1;
  BOOST_TEST(predict_step(h, w).step_s == two, boost::test_tools::tolerance(1e-12));
}

// GEMM rates measured on weights in cache (a hwprobe file): a rank whose working set
// (parameters, gradients, a micro-batch's activations) outgrows its share of the last-level
// cache reads every weight from memory in the forward, and again in the backward with the
// gradients read and written: 4 N + (4 N + 8 N) bytes a micro-batch (fp32, all trained).
BOOST_AUTO_TEST_CASE(weights_beyond_the_cache_are_read_from_memory_each_micro_batch) {
  Hardware h = two_core_node();
  h.activations_in_compute_precision = false;
  Workload w = tiny_workload();
  w.ranks = 2;
  const StepPrediction rated = predict_step(h, w);
  BOOST_TEST(rated.weight_traffic_s == 0.0);
  h.gemm_rate_on_cached_weights = true;  // no cache figure: every weight from memory
  const StepPrediction streamed = predict_step(h, w);
  const double n = double(make_plan(w.model, w.ranks, streamed.tokens_per_mb).n_params);
  const double per_mb = (4 * n + 12 * n) / h.memory_bytes_per_s;
  BOOST_TEST(streamed.weight_traffic_s == per_mb * streamed.micro_batches, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(streamed.fwd_s - rated.fwd_s == 4 * n / h.memory_bytes_per_s * streamed.micro_batches,
             boost::test_tools::tolerance(1e-9));
  BOOST_TEST(streamed.bwd_s - rated.bwd_s == 12 * n / h.memory_bytes_per_s * streamed.micro_batches,
             boost::test_tools::tolerance(1e-9));
  h.last_level_cache_bytes = 2 * 1e9;  // 1 GB a rank: everything stays
  BOOST_TEST(predict_step(h, w).weight_traffic_s == 0.0);
  w.ranks = 4;  // 500 MB a rank: still
  BOOST_TEST(predict_step(h, w).weight_traffic_s == 0.0);
  h.last_level_cache_bytes = 1e3;
  BOOST_TEST(predict_step(h, w).weight_traffic_s > 0.0);
}

// On a CPU whose collectives run on the ranks' cores, ZeRO-3's first kPrefetchDepth buckets
// are gathered behind the last update (publish_params) and waited for in the step's head:
// `other`, not exposed; a GPU file keeps them a wait at the forward's start.
BOOST_AUTO_TEST_CASE(zero3_first_gathers_run_under_the_step_head_on_a_shared_core) {
  Workload w = tiny_workload();  // a bucket per unit
  Hardware h = gpu_node();
  h.intra_node.bytes_per_s = 1e9;
  const StepPrediction gpu = predict_step(h, w);
  BOOST_TEST(gpu.comm_head_s == 0.0);
  h.comm_overlaps_compute = false;
  h.comm_core_seconds_per_byte = 1e-10;
  const StepPrediction cpu = predict_step(h, w);
  BOOST_TEST(cpu.buckets > kPrefetchDepth);
  const double param_bytes = 4;  // fp32 model
  double head = 0;
  {
    const std::unique_ptr<Model> model = make_model(w.model, nullptr);
    std::vector<double> units;
    for (int u = 0; u < model->params().n_units(); ++u) units.push_back(double(model->params().unit(u).count));
    BOOST_TEST(cpu.buckets == int(units.size()));  // a bucket per unit
    for (int k = 0; k < kPrefetchDepth; ++k)
      head += collective_time(h, Collective::all_gather, units[size_t(k)] * param_bytes, w.ranks).seconds;
  }
  BOOST_TEST(cpu.comm_head_s == head, boost::test_tools::tolerance(1e-9));
  const PhasePrediction& ph = cpu.phases;
  BOOST_TEST(ph.other >= cpu.comm_head_s);
  BOOST_TEST(phase_sum(ph) == cpu.step_s,
             boost::test_tools::tolerance(1e-9));
  // The head's two host reductions wait for the slowest rank too, at the same time: the
  // gathers count beyond that share of the imbalance.
  h.ranks_share_node = true;
  h.devices_per_node = 8;
  h.rank_imbalance = 0.05;
  const StepPrediction paced = predict_step(h, w);
  const int syncs = 4 + collective_calls(paced);
  BOOST_TEST(paced.imbalance_s > 0);
  BOOST_TEST(paced.comm_head_s == std::max(0.0, head - paced.imbalance_s * 2 / syncs), boost::test_tools::tolerance(1e-9));
  w.overlap = false;  // waited for where issued: no head
  BOOST_TEST(predict_step(h, w).comm_head_s == 0.0);
}

// A core shared with the progress thread, the rank's own or time-shared: the last rank to issue
// an uncovered collective runs it on its core at once and does not wait, the others wait; over R
// ranks 1/R of the uncovered seconds is compute. One rank: none is a wait.
BOOST_AUTO_TEST_CASE(the_last_rank_to_issue_runs_the_uncovered_collective_on_its_core) {
  Workload w = tiny_workload();
  w.bucket_bytes = 1 << 30;  // one bucket, gathered under the head; its reduction after the backward
  w.micro_batch = 32;        // one micro-batch a rank at 2 ranks
  Hardware h = two_core_node();
  h.intra_node.bytes_per_s = 1e9;
  h.comm_overlaps_compute = false;
  h.comm_core_seconds_per_byte = 1e-10;
  w.ranks = 2;
  const StepPrediction two = predict_step(h, w);
  BOOST_TEST(two.micro_batches == 1);
  const double n = double(make_plan(w.model, w.ranks, two.tokens_per_mb).n_params);
  const double reduction = collective_time(h, Collective::reduce_scatter, 4 * n, 2).seconds;
  BOOST_TEST(two.comm_exposed_s == reduction / 2, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(two.comm_core_bwd_s == reduction / 2, boost::test_tools::tolerance(1e-9));
  w.ranks = 1;
  BOOST_TEST(predict_step(h, w).comm_exposed_s == 0.0);
  w.ranks = 4;  // two ranks a core: the same, at 4 ranks
  const StepPrediction four = predict_step(h, w);
  const double shared = collective_time(h, Collective::reduce_scatter, 4 * n, 4).seconds;
  BOOST_TEST(four.comm_exposed_s == shared * 3 / 4, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(four.comm_core_bwd_s == shared / 4, boost::test_tools::tolerance(1e-9));
  // Two micro-batches and a link too slow for the first one's reduction to drain under the
  // second: what the second leaves uncovered splits as the last reduction's does, and the
  // covered share of its core seconds slows the second micro-batch.
  w.ranks = 2;
  w.micro_batch = 16;
  h.intra_node.bytes_per_s = 1e6;
  const StepPrediction drained = predict_step(h, w);
  BOOST_TEST(drained.micro_batches == 2);
  const double slow = collective_time(h, Collective::reduce_scatter, 4 * n, 2).seconds;
  const double micro_batch = (drained.fwd_s + drained.bwd_s + drained.recompute_s) / 2;
  const double uncovered = slow - micro_batch, core = 0.5 * 4 * n * 1e-10;
  BOOST_TEST(uncovered > 0);
  BOOST_TEST(drained.comm_exposed_s == slow / 2 + uncovered / 2, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(drained.comm_core_fwd_s + drained.comm_core_bwd_s == slow / 2 + core * (1 - uncovered / slow) + uncovered / 2,
             boost::test_tools::tolerance(1e-9));
  // The drained reduction starts with the second micro-batch's forward: the forward holds the
  // share of its core seconds that runs beside it, the forward's seconds over the reduction's.
  const double forward = drained.fwd_s / 2;
  BOOST_TEST(forward < slow);
  BOOST_TEST(drained.comm_core_fwd_s == (core * (1 - uncovered / slow) + uncovered / 2) * forward / slow,
             boost::test_tools::tolerance(1e-9));
}

// The progress thread takes its rank's core for each call too, whatever the size (its wake-ups
// and polls): a reduction drained under the next micro-batch slows it by its bytes' core seconds
// and its call's; of the last one, uncovered, the issuing rank waits for its call, and one
// rank's are copies.
BOOST_AUTO_TEST_CASE(a_covered_collective_costs_the_core_its_call_too) {
  Workload w = tiny_workload();
  w.bucket_bytes = 1 << 30;  // one bucket, gathered under the head
  w.micro_batch = 16;        // two micro-batches a rank at 2 ranks
  w.ranks = 2;
  Hardware h = two_core_node();
  h.gemm_fp32 = h.attention_fp32 = 1e9;  // a micro-batch's compute covers the first reduction whole
  h.intra_node.bytes_per_s = 1e9;
  h.comm_overlaps_compute = false;
  h.comm_core_seconds_per_byte = 1e-10;
  const StepPrediction bytes_only = predict_step(h, w);
  h.comm_core_seconds_per_call = 2e-4;
  const StepPrediction with_calls = predict_step(h, w);
  BOOST_TEST(with_calls.micro_batches == 2);
  int reduction_calls = 0;  // a pass's calls of the bucket's trained pieces
  for (const CollectiveCost& c : with_calls.collectives)
    if (c.op == Collective::reduce_scatter) reduction_calls = c.buckets;
  BOOST_TEST(reduction_calls >= 1);
  // The drained reduction, shorter than the forward it starts with, slows the forward alone by
  // its calls' seconds.
  BOOST_TEST(with_calls.comm_core_fwd_s - bytes_only.comm_core_fwd_s ==
                 2e-4 * reduction_calls * (with_calls.micro_batches - 1),
             boost::test_tools::tolerance(1e-9));
  BOOST_TEST(bytes_only.comm_core_fwd_s > 0);
  // The last one, uncovered, the late rank (1 of 2) runs in its backward but for its last call's
  // hand-off from the progress thread, which it waits for as its partner does.
  BOOST_TEST(with_calls.comm_core_bwd_s - bytes_only.comm_core_bwd_s == -2e-4 / 2, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(with_calls.comm_exposed_s - bytes_only.comm_exposed_s == 2e-4 / 2, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(with_calls.step_s > bytes_only.step_s);
  w.ranks = 1;
  const StepPrediction one = predict_step(h, w);
  h.comm_core_seconds_per_call = 0;
  BOOST_TEST(predict_step(h, w).step_s == one.step_s);
}

// ZeRO-3's first gathers run under the step's head, their progress thread on the rank's core
// beside the loader (session 28): the loader has half the core while their core seconds last.
BOOST_AUTO_TEST_CASE(the_loader_shares_its_core_with_the_first_gathers_under_the_head) {
  Workload w = tiny_workload();
  w.bucket_bytes = 1 << 30;  // one bucket of one piece, gathered under the head
  w.ranks = 2;
  Hardware h = two_core_node();
  h.intra_node.bytes_per_s = 1e9;
  h.comm_overlaps_compute = false;
  h.comm_core_seconds_per_byte = 1e-10, h.comm_core_seconds_per_call = 2e-4;
  const StepPrediction without = predict_step(h, w);
  double params = 0;
  const std::unique_ptr<Model> model = make_model(w.model, nullptr);
  for (int u = 0; u < model->params().n_units(); ++u) params += double(model->params().unit(u).count);
  BOOST_TEST(without.head_gathers == 1);
  // The gather's call, and the half of the fp32 parameters a rank sends.
  BOOST_TEST(without.comm_head_core_s == 2e-4 + 0.5 * 4 * params * 1e-10, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(without.loader_beside_gathers_s == 0.0);
  // A loader shorter than the gathers' core seconds takes twice its time.
  w.loader_s = 0.5 * without.comm_head_core_s;
  const StepPrediction short_loader = predict_step(h, w);
  BOOST_TEST(short_loader.data_wait_s - without.data_wait_s == 2 * w.loader_s, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(short_loader.phases.data_wait == short_loader.data_wait_s);
  BOOST_TEST(phase_sum(short_loader.phases) == short_loader.step_s, boost::test_tools::tolerance(1e-9));
  // A longer one gives the gathers their core seconds and runs the rest alone.
  w.loader_s = 3 * without.comm_head_core_s;
  BOOST_TEST(predict_step(h, w).data_wait_s - without.data_wait_s == w.loader_s + without.comm_head_core_s,
             boost::test_tools::tolerance(1e-9));
  // Without the progress thread's cost measured, the gathers are no part of the head.
  h.comm_core_seconds_per_byte = 0, h.comm_core_seconds_per_call = 0;
  BOOST_TEST(predict_step(h, w).loader_beside_gathers_s == 0.0);
}

// Ranks sharing a core leave the step's head in the scheduler's turns, each at a full core: the
// rank holding the core runs a first turn (first_turn_s), each partner then a turn (turn_s) in
// order while the ones not yet run wait in the head. A rank's forward runs from its first turn
// to where its turns have given it a full core's forward: the phases move between the head
// (`other`), the forward and the backward, and the step is the paced passes'.
BOOST_AUTO_TEST_CASE(ranks_sharing_a_core_leave_the_head_in_turns) {
  Hardware h = two_core_node();
  Workload w = tiny_workload();
  w.ranks = 4;  // two ranks a core
  const StepPrediction paced = predict_step(h, w);
  BOOST_TEST(paced.comm_head_s == 0.0);  // no gathers under the head to wait beside the turns
  // A micro-batch's forward at a full core: half its paced seconds.
  const double fwd = paced.fwd_s / paced.micro_batches / 2;
  const auto moved_by = [&](const Workload& at, const StepPrediction& base, double forward_change, double head_wait) {
    const StepPrediction turns = predict_step(h, at);
    BOOST_TEST(turns.step_s == base.step_s, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(turns.phases.fwd == base.phases.fwd + forward_change, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(turns.phases.bwd == base.phases.bwd - forward_change - head_wait, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(turns.phases.other == base.phases.other + head_wait, boost::test_tools::tolerance(1e-9));
  };
  h.turn_s = fwd * 2;
  h.first_turn_s = fwd * 1.5;  // the forward ends in the first turn: each rank's a full core's
  moved_by(w, paced, fwd - 2 * fwd, h.first_turn_s / 2);
  h.first_turn_s = fwd / 2;  // it does not: the first rank's forward waits out its partner's turn
  moved_by(w, paced, (fwd + h.turn_s + fwd) / 2 - 2 * fwd, h.first_turn_s / 2);
  // A first turn uniform over fwd ± fwd/2: half the steps' first rank waits out a turn.
  h.first_turn_s = fwd, h.first_turn_spread_s = fwd / 2;
  moved_by(w, paced, (fwd + h.turn_s / 2 + fwd) / 2 - 2 * fwd, fwd / 2);
  // Four ranks a core, the first turn short of the forward: the first rank's forward holds its
  // three partners' turns, each of theirs is a full core's; they wait 0, T1, T1 + T, T1 + 2T.
  w.ranks = 8;
  h.first_turn_s = 0;
  const StepPrediction paced8 = predict_step(h, w);
  const double fwd8 = paced8.fwd_s / paced8.micro_batches / 4;
  h.first_turn_s = fwd8 / 2, h.first_turn_spread_s = 0, h.turn_s = fwd8 * 2;
  moved_by(w, paced8, (fwd8 + 3 * h.turn_s + 3 * fwd8) / 4 - 4 * fwd8, 3 * (h.first_turn_s + h.turn_s) / 4);
  w.ranks = 2;  // a core each: no turns
  const StepPrediction two = predict_step(h, w);
  h.first_turn_s = 0;
  BOOST_TEST(two.phases.fwd == predict_step(h, w).phases.fwd, boost::test_tools::tolerance(1e-12));
}

// The wait for the slowest rank is timed where the ranks wait: at the step's host reductions
// (`other`) and in its collective waits (exposed comm), a share per synchronisation.
BOOST_AUTO_TEST_CASE(the_imbalance_of_a_collective_wait_is_exposed_comm) {
  Hardware h = two_core_node();
  h.rank_imbalance = 0.05;
  Workload w = tiny_workload();
  w.ranks = 2;
  const StepPrediction s = predict_step(h, w);
  const int calls = collective_calls(s);
  BOOST_TEST(s.head_gathers == 0);  // a GPU-like file: no gathers under the head
  BOOST_TEST(s.imbalance_in_collectives_s == s.imbalance_s * calls / (4 + calls), boost::test_tools::tolerance(1e-12));
  BOOST_TEST(s.phases.comm_exposed == s.comm_exposed_s + s.imbalance_in_collectives_s, boost::test_tools::tolerance(1e-12));
  const PhasePrediction& ph = s.phases;
  BOOST_TEST(phase_sum(ph) == s.step_s,
             boost::test_tools::tolerance(1e-9));
}

// More ranks than cores: each hop waits for a time slice (latency over the ranks' share of a
// core), the bandwidth is the cores' copies as with a rank per core.
BOOST_AUTO_TEST_CASE(ranks_time_sharing_cores_pay_latency_not_bandwidth) {
  Hardware h = two_core_node();
  h.intra_node = {1e9, 1e-5};
  const double n = 1 << 24;
  BOOST_TEST(collective_time(h, Collective::all_gather, n, 2).seconds == 1e-5 + 0.5 * n / 1e9,
             boost::test_tools::tolerance(1e-12));
  BOOST_TEST(collective_time(h, Collective::all_gather, n, 4).seconds == 3 * 1e-5 / 0.5 + 0.75 * n / 1e9,
             boost::test_tools::tolerance(1e-12));
}

// Measured at such a count (time_sharing_link, hwprobe --imbalance at M ranks): the pass at the
// measured bandwidth, the hops' latency scaled by p/M and the sums' rate by M/p, by buffer size;
// a rank a core keeps the intra_node figures.
BOOST_AUTO_TEST_CASE(ranks_time_sharing_cores_run_at_the_link_measured_at_their_count) {
  Hardware h = two_core_node();
  h.intra_node = {1e9, 1e-5};
  h.reduce_bytes_per_s = 4e9;
  h.rank_imbalance_ranks = 4;
  h.time_sharing_link = {2e8, 3e-5};
  h.time_sharing_reduce_bytes_per_s_by_size = {{1 << 20, 5e8}, {1 << 27, 2.5e8}};
  const double n = 1 << 24;
  BOOST_TEST(collective_time(h, Collective::all_gather, n, 4).seconds == 3 * 3e-5 + 0.75 * n / 2e8,
             boost::test_tools::tolerance(1e-12));
  BOOST_TEST(collective_time(h, Collective::reduce_scatter, n, 4).seconds == 3 * 3e-5 + 0.75 * n / 2e8 + 0.75 * n / 2.5e8,
             boost::test_tools::tolerance(1e-12));
  BOOST_TEST(collective_time(h, Collective::reduce_scatter, 1 << 19, 4).seconds ==
                 3 * 3e-5 + 0.75 * (1 << 19) / 2e8 + 0.75 * (1 << 19) / 5e8,
             boost::test_tools::tolerance(1e-12));
  // Eight ranks on the two cores: each hop's wait twice as long, the sums at half the rate.
  BOOST_TEST(collective_time(h, Collective::reduce_scatter, n, 8).seconds ==
                 7 * 3e-5 * 2 + 7.0 / 8 * n / 2e8 + 7.0 / 8 * n / (2.5e8 / 2),
             boost::test_tools::tolerance(1e-12));
  BOOST_TEST(collective_time(h, Collective::reduce_scatter, n, 2).seconds == 1e-5 + 0.5 * n / 1e9 + 0.5 * n / 4e9,
             boost::test_tools::tolerance(1e-12));
}

// The step's blocking host reductions of ranks time-sharing cores cost the small all-reduce on
// the link measured at their count (two ranks on one core wait for the partner's turn at each
// exchange), not sync_s of ranks on cores of their own; the gradient norm's is timed in the
// optimizer's phase, the other three in `other`.
BOOST_AUTO_TEST_CASE(host_reductions_of_ranks_time_sharing_cores_run_on_their_measured_link) {
  Hardware h = two_core_node();
  h.fixed.sync_s = 3e-6;
  Workload w = tiny_workload();
  w.ranks = 4;
  const StepPrediction own_figure = predict_step(h, w);
  BOOST_TEST(own_figure.fixed.syncs_s == 4 * 2 * 3e-6, boost::test_tools::tolerance(1e-12));  // 2 rounds at 4 ranks
  h.rank_imbalance_ranks = 4;
  h.time_sharing_link = {1e9, 1e-3};
  h.time_sharing_reduce_bytes_per_s_by_size = {{1 << 20, 1e9}};
  const StepPrediction s = predict_step(h, w);
  const double one = collective_time(h, Collective::all_reduce, 32, 4).seconds;
  BOOST_TEST(one > 4e-3);  // latency-bound: the tree's 2·log2(4) hops of 1 ms
  BOOST_TEST(s.fixed.syncs_s == 4 * one, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(s.phases.optim == s.optimizer_s + one, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(phase_sum(s.phases) == s.step_s, boost::test_tools::tolerance(1e-9));
}

// The file's time_sharing_link: read with its sums' table, refused where the imbalance beside it
// was measured with a core per rank (its collectives are then not of ranks sharing cores) or
// without the table.
BOOST_AUTO_TEST_CASE(the_time_sharing_link_is_read_where_measured_at_more_ranks_than_cores) {
  std::filesystem::create_directories("outputs");
  nlohmann::json j = nlohmann::json::parse(std::ifstream("inputs/hw/cpu_dev.json"));
  const std::string path = "outputs/test_plan_time_sharing_hw.json";
  const auto figure = [](double v) { return nlohmann::json{{"value", v}, {"source", "test"}}; };
  const int cores = int(j["devices_per_node"]["value"].get<double>());
  j["rank_imbalance_ranks"] = figure(2 * cores);
  j["time_sharing_link"] = {{"bytes_per_s", figure(2.3e9)},
                            {"latency_s", figure(2.5e-6)},
                            {"reduce_bytes_per_s_by_size", {{"134217728", figure(2.4e9)}, {"1048576", figure(2.9e9)}}}};
  std::ofstream(path) << j.dump();
  const Hardware read = load_hardware(path);
  BOOST_TEST(read.time_sharing_link.bytes_per_s == 2.3e9);
  BOOST_TEST(read.time_sharing_link.latency_s == 2.5e-6);
  BOOST_TEST(time_sharing_reduce_rate(read, 835936) == 2.9e9);
  BOOST_TEST(time_sharing_reduce_rate(read, 17497952) == 2.4e9);
  const auto refusal = [&](const nlohmann::json& file) {
    std::ofstream(path) << file.dump();
    try {
      load_hardware(path);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  nlohmann::json own_cores = j;
  own_cores["rank_imbalance_ranks"] = figure(cores);
  const std::string message = refusal(own_cores);
  BOOST_TEST(message.find("time_sharing_link") != std::string::npos);
  BOOST_TEST(message.find("hwprobe --imbalance") != std::string::npos);
  nlohmann::json no_table = j;
  no_table["time_sharing_link"].erase("reduce_bytes_per_s_by_size");
  BOOST_TEST(refusal(no_table).find("reduce_bytes_per_s_by_size") != std::string::npos);
  BOOST_TEST(read.time_sharing_core_seconds_per_byte == 0.0);  // an older probe's link: the rank-per-core figure
  nlohmann::json core_cost = j;
  core_cost["time_sharing_link"]["core_seconds_per_byte"] = figure(7.2e-10);
  std::ofstream(path) << core_cost.dump();
  BOOST_TEST(load_hardware(path).time_sharing_core_seconds_per_byte == 7.2e-10);
  core_cost["time_sharing_link"]["core_seconds_per_call"] = figure(1.9e-4);
  std::ofstream(path) << core_cost.dump();
  BOOST_TEST(load_hardware(path).time_sharing_core_seconds_per_call == 1.9e-4);
  core_cost["time_sharing_link"]["core_seconds_per_call"] = figure(-1e-4);
  BOOST_TEST(refusal(core_cost).find("core_seconds_per_call") != std::string::npos);
  core_cost["time_sharing_link"]["core_seconds_per_call"] = figure(1.9e-4);
  core_cost["time_sharing_link"]["core_seconds_per_byte"] = figure(-1e-10);
  BOOST_TEST(refusal(core_cost).find("core_seconds_per_byte") != std::string::npos);
  nlohmann::json per_call = j;
  per_call["intra_node"]["core_seconds_per_call"] = figure(1.8e-4);
  std::ofstream(path) << per_call.dump();
  BOOST_TEST(load_hardware(path).comm_core_seconds_per_call == 1.8e-4);
  per_call["intra_node"]["core_seconds_per_call"] = figure(-1.8e-4);
  BOOST_TEST(refusal(per_call).find("intra_node.core_seconds_per_byte and core_seconds_per_call") != std::string::npos);
  std::filesystem::remove(path);
}

// The measured imbalance (with one rank per core) lengthens the compute of several ranks, more
// for more ranks (the expected maximum of R normals: 0.5642 at 2, 1.0294 at 4), never one.
BOOST_AUTO_TEST_CASE(rank_imbalance_paces_the_compute_by_the_slowest_rank) {
  Hardware h = two_core_node();
  Workload w = tiny_workload();
  std::map<int, double> even, skewed;
  for (int R : {1, 2, 4}) {
    w.ranks = R;
    h.rank_imbalance = 0;
    even[R] = predict_step(h, w).compute_s;
    h.rank_imbalance = 0.2;
    skewed[R] = predict_step(h, w).compute_s;
  }
  BOOST_TEST(skewed[1] == even[1], boost::test_tools::tolerance(1e-12));
  BOOST_TEST(skewed[2] == 1.2 * even[2], boost::test_tools::tolerance(1e-9));
  BOOST_TEST(skewed[4] == (1 + 0.2 * 1.0294 / 0.5642) * even[4], boost::test_tools::tolerance(1e-3));
}

// Ranks drift apart in proportion to their work: rank_imbalance of the compute, scaled from the
// ranks measured to R. On cores of their own it is waited at every synchronisation; ranks
// time-sharing cores (more than the node's) wait for it in the collectives, the same fraction
// however many there are (the partner's first turn is the head's wait). Timed in `other` and
// exposed comm.
BOOST_AUTO_TEST_CASE(ranks_time_sharing_cores_wait_for_their_drift_in_the_collectives) {
  Hardware h = two_core_node();
  h.rank_imbalance = 0.05;
  Workload w = tiny_workload();  // ZeRO-3, a bucket per unit: gathers in forward and backward
  w.ranks = 1;
  BOOST_TEST(predict_step(h, w).imbalance_s == 0.0);
  w.ranks = 2;  // a core each: the compute's fraction, a share at each synchronisation
  const StepPrediction two = predict_step(h, w);
  const auto passes = [](const StepPrediction& s) { return s.fwd_s + s.bwd_s + s.recompute_s; };
  BOOST_TEST(two.imbalance_s == 0.05 * passes(two), boost::test_tools::tolerance(1e-9));
  BOOST_TEST(two.compute_s == passes(two) + two.imbalance_s, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(two.imbalance_in_collectives_s < two.imbalance_s);
  h.rank_imbalance_ranks = 2;
  w.ranks = 4;  // two a core: all of it in the collectives
  const StepPrediction four = predict_step(h, w);
  const int calls = collective_calls(four);
  BOOST_TEST(calls == 3 * four.buckets * four.micro_batches);  // two gathers and a reduction per bucket and micro-batch
  const double scaled = 0.05 * 1.0294 / 0.5642;
  BOOST_TEST(four.imbalance_s == scaled * passes(four), boost::test_tools::tolerance(1e-3));
  BOOST_TEST(four.imbalance_in_collectives_s == four.imbalance_s, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(four.phases.comm_exposed >= four.imbalance_s);
  // One bucket for the whole model: a few collectives instead of many, the same fraction.
  w.bucket_bytes = int64_t(1) << 30;
  const StepPrediction one_bucket = predict_step(h, w);
  BOOST_TEST(collective_calls(one_bucket) < calls);
  BOOST_TEST(one_bucket.imbalance_s == scaled * passes(one_bucket), boost::test_tools::tolerance(1e-3));
}

// Packed samples of different context lengths: each step the ranks' compute differs by their
// samples' tokens. A rank's n samples one standard deviation longer cost Δ more, so its compute
// spreads by Δ/√n and every rank waits for the slowest: the expected maximum of R normals
// (0.5642 at 2) of that, in the collective that closes the backward; with the ranks' timing
// spread (rank_imbalance) in quadrature. None at one rank, padded, or without the data's spread.
BOOST_AUTO_TEST_CASE(the_samples_spread_of_context_paces_packed_ranks) {
  Hardware h = two_core_node();
  Workload w = tiny_workload();
  w.ranks = 2;
  w.packing = true;
  w.tokens_per_mb = 1024;
  w.sample.context_tokens = 20;
  const StepPrediction even = predict_step(h, w);
  BOOST_TEST(even.data_spread_s == 0.0);
  BOOST_TEST(even.imbalance_s == 0.0);
  Workload longer = w;
  longer.sample.context_tokens = 28;
  const double delta = predict_step(h, longer).compute_s - even.compute_s;
  BOOST_TEST(delta > 0);
  w.sample.context_tokens_std = 8;
  const StepPrediction spread = predict_step(h, w);
  BOOST_TEST(spread.data_spread_s == delta / std::sqrt(double(spread.samples_per_rank)), boost::test_tools::tolerance(1e-9));
  BOOST_TEST(spread.imbalance_s == 0.5642 * spread.data_spread_s, boost::test_tools::tolerance(1e-3));
  BOOST_TEST(spread.imbalance_in_collectives_s == spread.imbalance_s, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(spread.phases.comm_exposed == spread.comm_exposed_s + spread.imbalance_s, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(phase_sum(spread.phases) == spread.step_s, boost::test_tools::tolerance(1e-9));
  h.rank_imbalance = 0.05;
  const StepPrediction both = predict_step(h, w);
  const double timing = 0.05 * (both.fwd_s + both.bwd_s + both.recompute_s);
  BOOST_TEST(both.imbalance_s == std::hypot(timing, 0.5642 * both.data_spread_s), boost::test_tools::tolerance(1e-3));
  BOOST_TEST(both.imbalance_in_collectives_s > spread.imbalance_s);
  BOOST_TEST(both.imbalance_in_collectives_s < both.imbalance_s);
  // Four ranks on the two cores: each core's two ranks spread by 1/√2 of one's, the wait for the
  // slower core, and the ranks' drift in quadrature (it moves the cores too), all of it in the
  // collectives.
  w.ranks = 4;
  h.rank_imbalance_ranks = 4;
  const StepPrediction shared = predict_step(h, w);
  const double drift = 0.05 * (shared.fwd_s + shared.bwd_s + shared.recompute_s);
  BOOST_TEST(shared.imbalance_s == std::hypot(drift, 0.5642 * shared.data_spread_s / std::sqrt(2.0)),
             boost::test_tools::tolerance(1e-3));
  BOOST_TEST(shared.imbalance_in_collectives_s == shared.imbalance_s, boost::test_tools::tolerance(1e-12));
  h.rank_imbalance_ranks = 0;
  w.ranks = 1;
  BOOST_TEST(predict_step(h, w).imbalance_s == 0.0);
  w.ranks = 2;
  w.packing = false;
  BOOST_TEST(predict_step(h, w).data_spread_s == 0.0);
}

BOOST_AUTO_TEST_CASE(the_loader_takes_a_cpu_ranks_core_and_hides_under_a_gpu_step) {
  Workload w = tiny_workload();
  w.ranks = 4;
  const Hardware cpu = two_core_node();
  const StepPrediction without = predict_step(cpu, w);
  w.loader_s = 1e-4;
  const StepPrediction with = predict_step(cpu, w);
  // Two ranks a core: each rank's loader runs at half a core, inside the step's data_wait.
  BOOST_TEST(with.loader_s == 2e-4, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(with.data_wait_s == with.loader_s + without.data_wait_s, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(with.step_s - without.step_s == 2e-4, boost::test_tools::tolerance(1e-6));
  BOOST_TEST(with.phases.data_wait == with.data_wait_s);
  BOOST_TEST(phase_sum(with.phases) == with.step_s, boost::test_tools::tolerance(1e-9));
  // A GPU node's loader runs on its spare host cores: only what outlasts the step shows.
  const Hardware gpu = gpu_node();
  w.loader_s = 0;
  const StepPrediction gpu_without = predict_step(gpu, w);
  w.loader_s = 0.5 * gpu_without.step_s;
  BOOST_TEST(predict_step(gpu, w).step_s == gpu_without.step_s, boost::test_tools::tolerance(1e-12));
  w.loader_s = 3 * gpu_without.step_s;
  const StepPrediction slow_loader = predict_step(gpu, w);
  BOOST_TEST(slow_loader.step_s == w.loader_s, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(slow_loader.data_wait_s == w.loader_s - gpu_without.step_s, boost::test_tools::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(memory_verdict_follows_the_device_capacity) {
  Hardware h = gpu_node();
  const StepPrediction roomy = predict_step(h, tiny_workload());
  BOOST_TEST(roomy.fits);
  h.memory_bytes = roomy.memory_bytes * 0.99;
  BOOST_TEST(!predict_step(h, tiny_workload()).fits);
}

BOOST_AUTO_TEST_CASE(configurations_rank_fitting_and_faster_first) {
  Hardware h = gpu_node();
  Workload w = tiny_workload();
  h.memory_bytes = predict_step(h, w).memory_bytes;  // room for some configurations, not all
  const std::vector<StepPrediction> ranked = rank_configurations(h, w);
  BOOST_TEST(ranked.size() > 9u);
  bool seen_unfit = false;
  for (size_t i = 0; i < ranked.size(); ++i) {
    if (!ranked[i].fits) seen_unfit = true;
    BOOST_TEST(!(seen_unfit && ranked[i].fits));
    if (i > 0 && ranked[i].fits == ranked[i - 1].fits) BOOST_TEST(ranked[i].step_s >= ranked[i - 1].step_s);
  }
  BOOST_TEST(ranked.front().fits);
  BOOST_TEST(seen_unfit);
}

// A packed deck's configurations hold its longest sample in a micro-batch (the loader refuses a
// data.tokens_per_mb below it), and the text names the --set arguments of the best one against
// the deck's own row, or says the deck's is the best.
BOOST_AUTO_TEST_CASE(configurations_hold_the_longest_sample_and_the_best_is_spelled_as_settings) {
  const Hardware h = load_hardware("cpu_dev");
  Workload w = tiny_gr00t_workload();
  w.tokens_per_mb = 2048;  // 11 typical samples
  const StepPrediction deck = predict_step(h, w);
  BOOST_TEST(deck.samples_per_mb > 8);
  const int64_t query = make_plan(w.model, w.ranks, 1, w.sample).tokens_per_sample;
  const int64_t sample_tokens = deck.tokens_per_mb / deck.samples_per_mb;
  const auto smallest_mb = [](const std::vector<StepPrediction>& ranked) {
    int mb = 1 << 30;
    for (const StepPrediction& r : ranked) mb = std::min(mb, r.samples_per_mb);
    return mb;
  };
  BOOST_TEST(smallest_mb(rank_configurations(h, w)) == 1);  // the longest sample unknown
  w.longest_context = 3 * sample_tokens;  // four samples' tokens hold it, two do not
  const std::vector<StepPrediction> ranked = rank_configurations(h, w);
  BOOST_TEST(smallest_mb(ranked) == 4);
  for (const StepPrediction& r : ranked) BOOST_TEST(r.tokens_per_mb >= query + w.longest_context);
  BOOST_TEST(std::any_of(ranked.begin(), ranked.end(),
                         [&](const StepPrediction& r) { return r.samples_per_mb == deck.samples_per_mb; }));

  const std::string text = prediction_text(h, deck, ranked, 10);
  const StepPrediction& best = ranked.front();
  BOOST_TEST(best.samples_per_mb != deck.samples_per_mb);
  BOOST_TEST(text.find(str("to run the best:")) != std::string::npos, text);
  BOOST_TEST(text.find(str("--set data.tokens_per_mb=", best.tokens_per_mb)) != std::string::npos, text);
  BOOST_TEST((text.find("--set train.shard=") != std::string::npos) == (best.w.shard != deck.w.shard), text);
  std::vector<StepPrediction> deck_first = ranked;
  const auto own = std::find_if(deck_first.begin(), deck_first.end(), [&](const StepPrediction& r) {
    return r.w.shard == deck.w.shard && r.w.model.recompute == deck.w.model.recompute &&
           r.samples_per_mb == deck.samples_per_mb && r.buckets == deck.buckets;
  });
  BOOST_TEST_REQUIRE((own != deck_first.end()));
  std::rotate(deck_first.begin(), own, own + 1);
  BOOST_TEST(prediction_text(h, deck, deck_first, 10).find("the deck's configuration is the best predicted") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(every_hardware_file_loads_and_a_figure_without_source_is_refused) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator("inputs/hw")) {
    const Hardware h = load_hardware(entry.path().string());
    BOOST_TEST(h.gemm_bf16 > 0);
    ++files;
  }
  BOOST_TEST(files >= 3);
  BOOST_TEST(load_hardware("h100_sxm").nics_per_node == 8);
  const std::string bad = "outputs/test_plan_bad_hw.json";
  std::filesystem::create_directories("outputs");
  std::ofstream(bad) << R"({"devices_per_node": {"value": 8}})";
  BOOST_CHECK_THROW(load_hardware(bad), Error);
  std::filesystem::remove(bad);
}

// hwprobe --imbalance writes first_turn_seconds, first_turn_spread_seconds and turn_seconds,
// which the planner reads; an older probe's scheduler_slice_seconds, and its first turn without
// the later ones (at 4 ranks a core it held a later turn too), are refused with the command to
// measure again.
BOOST_AUTO_TEST_CASE(the_turns_are_read_and_an_older_probes_refused) {
  std::filesystem::create_directories("outputs");
  nlohmann::json j = nlohmann::json::parse(std::ifstream("inputs/hw/cpu_dev.json"));
  const std::string path = "outputs/test_plan_first_turn_hw.json";
  const auto refused_with = [&](const std::string& figure) {
    std::ofstream(path) << j.dump();
    std::string message;
    try {
      load_hardware(path);
    } catch (const Error& e) {
      message = e.what();
    }
    BOOST_TEST(message.find(figure) != std::string::npos, message);
    BOOST_TEST(message.find("hwprobe --imbalance") != std::string::npos, message);
  };
  j["first_turn_seconds"] = {{"value", 3.4e-3}, {"source", "test"}};
  refused_with("first_turn_seconds without turn_seconds");
  j["turn_seconds"] = {{"value", 4e-3}, {"source", "test"}};
  j["first_turn_spread_seconds"] = {{"value", 1.9e-3}, {"source", "test"}};
  std::ofstream(path) << j.dump();
  const Hardware h = load_hardware(path);
  BOOST_TEST(h.first_turn_s == 3.4e-3);
  BOOST_TEST(h.turn_s == 4e-3);
  BOOST_TEST(h.first_turn_spread_s == 1.9e-3);
  j["scheduler_slice_seconds"] = {{"value", 4e-3}, {"source", "test"}};
  refused_with("scheduler_slice_seconds");
  j.erase("scheduler_slice_seconds");
  for (const char* figure : {"first_turn_seconds", "turn_seconds", "first_turn_spread_seconds"}) {
    nlohmann::json bad = j;
    bad[figure]["value"] = -1;
    std::ofstream(path) << bad.dump();
    BOOST_CHECK_THROW(load_hardware(path), Error);
  }
  std::filesystem::remove(path);
}

// The fixed costs: the counted op calls, allocations and host reductions at the hardware's
// figures, as their own term of the step; on a GPU every op call a launch, a graph node when
// run.cuda_graphs is on.
BOOST_AUTO_TEST_CASE(fixed_costs_add_counted_calls_at_the_measured_figures) {
  Hardware h = gpu_node();
  Workload w = tiny_workload();
  const StepPrediction none = predict_step(h, w);
  // Without fixed_costs figures only the host reductions cost: 32-byte all-reduces on the links.
  BOOST_TEST(none.fixed.total_s == none.fixed.syncs_s);
  BOOST_TEST(none.fixed.syncs_s == 4 * collective_time(h, Collective::all_reduce, 32, w.ranks).seconds,
             boost::test_tools::tolerance(1e-12));
  h.fixed.op_call_s = 2e-6, h.fixed.allocation_s = 1e-7, h.fixed.sync_s = 3e-6;
  const StepPrediction cpu = predict_step(h, w);
  const std::unique_ptr<Model> model = make_model(w.model, nullptr);
  const ShardLayout layout(model->params(), w.shard, 0, w.ranks, int64_t(w.bucket_bytes));
  const ElementwiseWork micro_batch =
      fit_elementwise_work(w.model, w.sample, {}, false).micro_batch(int(cpu.samples_per_mb));
  const StepCalls calls =
      step_calls(micro_batch, int64_t(layout.decay_segments().size()), int64_t(layout.trainable_runs().size()));
  BOOST_TEST(calls.op_calls_per_micro_batch() > 8 * 70);  // tiny_wan's 8 blocks, 70-odd calls each
  BOOST_TEST(cpu.fixed.op_calls == calls.op_calls_per_micro_batch() * cpu.micro_batches + 1 +
                                       int64_t(layout.decay_segments().size()));
  BOOST_TEST(cpu.fixed.allocations == kAllocationsPerOpCall * calls.op_calls_per_micro_batch() * cpu.micro_batches);
  {  // A frozen tensor between trained ones: the gradient norm sums two runs, AdamW skips it.
    Workload with_frozen = w;
    with_frozen.frozen.assign(model->params().all().size(), false);
    with_frozen.frozen[1] = true;
    const ShardLayout cut(model->params(), w.shard, 0, w.ranks, int64_t(w.bucket_bytes), with_frozen.frozen);
    BOOST_TEST(cut.trainable_runs().size() == 2u);
    BOOST_TEST(predict_step(h, with_frozen).fixed.op_calls ==
               calls.op_calls_per_micro_batch() * cpu.micro_batches + 2 + int64_t(cut.decay_segments().size()));
  }
  // 4 host reductions at 8 ranks on one node: sync_s, as measured with the node's 8 devices.
  BOOST_TEST(cpu.fixed.syncs_s == 4 * 3e-6, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(cpu.fixed.total_s == cpu.fixed.op_calls * 2e-6 + cpu.fixed.allocations * 1e-7 + cpu.fixed.syncs_s,
             boost::test_tools::tolerance(1e-12));
  BOOST_TEST(cpu.step_s == none.step_s - none.fixed.total_s + cpu.fixed.total_s, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(cpu.fixed.launches == 0);
  h.fixed.kernel_launch_s = 5e-6, h.fixed.graph_kernel_launch_s = 1e-6;
  const StepPrediction streamed = predict_step(h, w);
  BOOST_TEST(streamed.fixed.launches == cpu.fixed.op_calls);
  BOOST_TEST(streamed.fixed.launches_s == cpu.fixed.op_calls * 5e-6, boost::test_tools::tolerance(1e-12));
  // The GPU's host runs ahead of the stream: only host work beyond the compute adds to the step.
  const double host = streamed.fixed.op_calls_s + streamed.fixed.allocations_s + streamed.fixed.launches_s;
  BOOST_TEST(streamed.fixed.total_s == std::max(0.0, host - streamed.compute_s) + streamed.fixed.syncs_s,
             boost::test_tools::tolerance(1e-12));
  h.gemm_fp32 /= 1e6;  // a slow device hides all of it
  BOOST_TEST(predict_step(h, w).fixed.total_s == predict_step(h, w).fixed.syncs_s, boost::test_tools::tolerance(1e-12));
  h.gemm_fp32 *= 1e6;
  w.cuda_graphs = true;
  BOOST_TEST(predict_step(h, w).fixed.launches_s == cpu.fixed.op_calls * 1e-6, boost::test_tools::tolerance(1e-12));
  w.ranks = 1;
  BOOST_TEST(predict_step(h, w).fixed.syncs_s == 0);
  // Ranks sharing a CPU node's cores (16 on 8) share its host time, as their compute.
  h.ranks_share_node = true;
  w.ranks = 16;
  const StepPrediction shared = predict_step(h, w);
  BOOST_TEST(shared.fixed.op_calls_s == shared.fixed.op_calls * 2e-6 / 0.5, boost::test_tools::tolerance(1e-12));
}

// The flow noise the forward draws on the host, outside every op: a sample's draws (its micro-batch
// alone) times the rank's samples at fixed_costs.noise_draw_s, all in the forward's host time;
// ranks sharing a node's cores share its time, as their compute.
BOOST_AUTO_TEST_CASE(noise_draws_cost_the_forward_its_samples_draws_at_the_measured_figure) {
  Hardware h = gpu_node();
  Workload w = tiny_workload();
  const StepPrediction none = predict_step(h, w);
  BOOST_TEST(none.fixed.noise_draws_s == 0.0);  // a file without the figure: unmeasured
  h.fixed.noise_draw_s = 2e-8;
  const StepPrediction drawn = predict_step(h, w);
  const int64_t per_sample = flow_noise_draws(w.model, plan_micro_batch(w.model, 1, w.sample));
  BOOST_TEST(per_sample > 0);
  BOOST_TEST(drawn.fixed.noise_draws == none.fixed.noise_draws);
  BOOST_TEST(drawn.fixed.noise_draws == per_sample * drawn.samples_per_rank);
  const double noise_s = double(drawn.fixed.noise_draws) * 2e-8;
  BOOST_TEST(drawn.fixed.noise_draws_s == noise_s, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(drawn.fixed.total_s == none.fixed.total_s + noise_s, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(drawn.step_s == none.step_s + noise_s, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(drawn.phases.fwd == none.phases.fwd + noise_s, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(drawn.phases.bwd == none.phases.bwd, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(drawn.phases.other == none.phases.other, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(drawn.fwd_kinds.host == none.fwd_kinds.host + noise_s, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(phase_sum(drawn.phases) == drawn.step_s, boost::test_tools::tolerance(1e-9));
  Workload gr00t = w;  // horizon × action dim a sample
  gr00t.model = preset_config("tiny_gr00t");
  const StepPrediction g = predict_step(h, gr00t);
  BOOST_TEST(g.fixed.noise_draws == int64_t(gr00t.model.horizon) * gr00t.model.action_dim * g.samples_per_rank);
  h.ranks_share_node = true;  // 16 ranks on 8 cores
  w.ranks = 16;
  const StepPrediction shared = predict_step(h, w);
  BOOST_TEST(shared.fixed.noise_draws_s == double(shared.fixed.noise_draws) * 2e-8 / 0.5,
             boost::test_tools::tolerance(1e-12));
}

// A host reduction is a small all-reduce: ⌈log2⌉ rounds of recursive doubling (or a tree), not
// 2(R-1) ring hops. Inside a node each round costs sync_s over the rounds it was measured with;
// each round across nodes the fabric's latency.
BOOST_AUTO_TEST_CASE(host_reductions_grow_with_the_log_of_the_ranks) {
  Hardware h = gpu_node();
  h.fixed.sync_s = 3e-6;
  Workload w = tiny_workload();
  w.global_batch = 1024 * 8;
  w.ranks = 4;  // 2 rounds of the node's 3
  BOOST_TEST(predict_step(h, w).fixed.syncs_s == 4 * 3e-6 * 2 / 3, boost::test_tools::tolerance(1e-12));
  w.ranks = 1024;  // 128 nodes: the node's 3 rounds, then 7 across at 5 us
  const double at_1024 = 4 * (3e-6 + 7 * 5e-6);
  BOOST_TEST(predict_step(h, w).fixed.syncs_s == at_1024, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(at_1024 < 4 * 3e-6 * 1023 / 7 / 10);  // what 2(R-1) hops charged: 2.2 ms a step
  // Ranks sharing a CPU node's cores: one node, every round inside it (4 ranks probed with 2).
  h.ranks_share_node = true;
  h.devices_per_node = 2;
  w.ranks = 4;
  BOOST_TEST(predict_step(h, w).fixed.syncs_s == 4 * 3e-6 * 2, boost::test_tools::tolerance(1e-12));
}

// Dropout draws every element's keep word in the forward and again in the backward: each
// pass adds its elements (every site's, per sample) at the hardware's dropout_element_seconds,
// beside the sites' memory traffic; a model without dropout draws nothing.
BOOST_AUTO_TEST_CASE(dropout_draws_cost_each_pass_its_elements_at_the_measured_figure) {
  Hardware h = gpu_node();
  Workload w;
  w.model = preset_config("tiny_gr00t");  // upstream's dropout 0.2 in the DiT and vl blocks
  w.ranks = 2;
  w.global_batch = 16;
  const StepPrediction base = predict_step(h, w);
  const PlanReport p = make_plan(w.model, w.ranks, base.tokens_per_mb);
  double elements = 0;
  for (const Model::DropoutSite& site : make_model(w.model, nullptr)->dropout_sites())
    elements += double(site.context ? p.context_per_sample : p.tokens_per_sample) * site.width;
  BOOST_TEST(elements > 0);
  BOOST_TEST(p.dropout_elements == elements);
  h.dropout_element_s = 1e-9;
  const StepPrediction drawn = predict_step(h, w);
  const double per_pass = base.samples_per_rank * elements * 1e-9;
  BOOST_TEST(drawn.fwd_s - base.fwd_s == per_pass, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(drawn.bwd_s - base.bwd_s == per_pass, boost::test_tools::tolerance(1e-9));
  w.model.dropout = w.model.dropout_vl = 0;
  BOOST_TEST(make_plan(w.model, w.ranks, base.tokens_per_mb).dropout_elements == 0);
  BOOST_TEST(predict_step(h, w).fwd_s < drawn.fwd_s);
}

// The optimizer phase (train_step: the gradients' Σg², then AdamW over the owned shard's
// trained elements), by hand: a file without optimizer_element_seconds (the GPU files) costs
// its bytes at the memory rate (read g twice, p, m, v; write p, m, v: 32 per element); with
// it, the elements at that figure over the rank's share of a CPU node's cores. The bf16 copy
// is rounded in publish_params, after the phase: it is `other`.
BOOST_AUTO_TEST_CASE(optimizer_phase_costs_the_trained_elements_at_the_measured_figure) {
  Workload w = tiny_workload();  // ZeRO-3 on 8 ranks: each steps an eighth of the elements
  const Hardware gpu = gpu_node();
  const StepPrediction bytes = predict_step(gpu, w);
  const double trained = double(make_plan(w.model, w.ranks, bytes.tokens_per_mb).trainable_params);
  BOOST_TEST(trained > 0);
  BOOST_TEST(bytes.optimizer_s == trained / 8 * 32 / gpu.memory_bytes_per_s, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(bytes.phases.optim == bytes.optimizer_s + bytes.fixed.syncs_s / 4);  // the gradient norm's reduction
  for (const char* name : {"h100_sxm", "h200"}) BOOST_TEST(load_hardware(name).optimizer_element_s == 0.0);

  Hardware cpu = load_hardware("cpu_dev");  // 2 cores
  BOOST_TEST(cpu.optimizer_element_s > 0);
  cpu.optimizer_element_s = 2e-9;
  w.ranks = 2;  // a core each: half the elements each
  BOOST_TEST(predict_step(cpu, w).optimizer_s == trained / 2 * 2e-9, boost::test_tools::tolerance(1e-12));
  w.ranks = 4;  // two ranks a core: a quarter each, at half a core
  BOOST_TEST(predict_step(cpu, w).optimizer_s == trained / 4 * 2e-9 / 0.5, boost::test_tools::tolerance(1e-12));

  w.model.precision = Precision::bf16;
  const StepPrediction bf16 = predict_step(cpu, w);
  const double owned = double(make_plan(w.model, w.ranks, bf16.tokens_per_mb).n_params) / 4;
  BOOST_TEST(bf16.optimizer_s == trained / 4 * 2e-9 / 0.5, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(bf16.bf16_round_s == owned * 2 / (cpu.memory_bytes_per_s * 0.5), boost::test_tools::tolerance(1e-12));
  const PhasePrediction& ph = bf16.phases;
  BOOST_TEST(bf16.fixed.optimizer_host_s > 0);  // its op calls' host time
  BOOST_TEST(ph.optim == bf16.optimizer_s + bf16.fixed.optimizer_host_s + bf16.fixed.syncs_s / 4,
             boost::test_tools::tolerance(1e-12));
  BOOST_TEST(phase_sum(ph) == bf16.step_s,
             boost::test_tools::tolerance(1e-9));
}

// A GEMM call's set-up: gemm_call_rows more rows of every GEMM the dry step issues, at the model
// width's rate, once per micro-batch: the forward's GEMM kind gains it, the backward's twice
// the forward's (dx and dW); smaller micro-batches pay it more often. A file without the figure
// charges nothing, a negative one is refused.
BOOST_AUTO_TEST_CASE(gemm_calls_cost_their_set_up_rows_once_a_micro_batch) {
  Hardware h = two_core_node();
  Workload w = tiny_gr00t_workload();
  w.packing = false;
  w.micro_batch = 2;
  const StepPrediction none = predict_step(h, w);
  h.gemm_call_rows = 5;
  const StepPrediction calls = predict_step(h, w);
  const ElementwiseWork mb = fit_elementwise_work(w.model, w.sample, {}, false).micro_batch(2);
  BOOST_TEST(mb.fwd.gemm_row_flops > 0);
  const double rate = h.gemm_fp32 * gemm_efficiency(h, w.model.d_model);
  const double fwd = calls.micro_batches * 5 * mb.fwd.gemm_row_flops / rate;
  const double bwd = calls.micro_batches * 5 * mb.bwd.gemm_row_flops / rate;
  BOOST_TEST(bwd > 1.8 * fwd);
  BOOST_TEST(bwd < 2.0 * fwd);  // the first linears need no dx
  BOOST_TEST(calls.fwd_kinds.gemm == none.fwd_kinds.gemm + fwd, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(calls.bwd_kinds.gemm == none.bwd_kinds.gemm + bwd, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(calls.compute_s == none.compute_s + fwd + bwd, boost::test_tools::tolerance(1e-9));
  w.micro_batch = 8;  // a quarter of the calls
  const double fewer = predict_step(h, w).fwd_kinds.gemm - [&] {
    Hardware h0 = h;
    h0.gemm_call_rows = 0;
    return predict_step(h0, w).fwd_kinds.gemm;
  }();
  BOOST_TEST(fewer == fwd / 4, boost::test_tools::tolerance(1e-9));

  BOOST_TEST(load_hardware("cpu_dev").gemm_call_rows > 1);
  BOOST_TEST(load_hardware("h200").gemm_call_rows == 0.0);
  BOOST_CHECK_THROW(hardware_with("gemm_call_rows", figure(-1)), Error);
}

BOOST_AUTO_TEST_CASE(fixed_cost_figures_load_with_sources_and_launches_in_pairs) {
  const Hardware cpu = load_hardware("cpu_dev");
  BOOST_TEST(cpu.fixed.op_call_s > 0);
  BOOST_TEST(cpu.fixed.noise_draw_s > 0);
  BOOST_TEST(!cpu.fixed.gpu());
  for (const char* gpu : {"h100_sxm", "h200"}) {
    const Hardware h = load_hardware(gpu);
    BOOST_TEST(h.fixed.gpu());
    BOOST_TEST(h.fixed.graph_kernel_launch_s < h.fixed.kernel_launch_s);
  }
  std::filesystem::create_directories("outputs");
  std::ifstream in("inputs/hw/cpu_dev.json");
  nlohmann::json j = nlohmann::json::parse(in);
  const std::string path = "outputs/test_plan_fixed_hw.json";
  j["fixed_costs"]["kernel_launch_s"] = {{"value", 5e-6}, {"source", "test"}};
  std::ofstream(path) << j.dump();
  BOOST_CHECK_THROW(load_hardware(path), Error);  // a launch figure without the graph's
  j["fixed_costs"]["graph_kernel_launch_s"] = {{"value", 1e-6}};
  std::ofstream(path) << j.dump();
  BOOST_CHECK_THROW(load_hardware(path), Error);  // a figure without its source
  j["fixed_costs"]["graph_kernel_launch_s"]["source"] = "test";
  std::ofstream(path) << j.dump();
  BOOST_TEST(load_hardware(path).fixed.graph_kernel_launch_s == 1e-6);
  // The noise draws' figure where measured: a probe older than it reads 0, a negative one is refused.
  j["fixed_costs"].erase("noise_draw_s");
  std::ofstream(path) << j.dump();
  BOOST_TEST(load_hardware(path).fixed.noise_draw_s == 0.0);
  j["fixed_costs"]["noise_draw_s"] = {{"value", -1e-8}, {"source", "test"}};
  std::ofstream(path) << j.dump();
  BOOST_CHECK_THROW(load_hardware(path), Error);
  std::filesystem::remove(path);
}

// A CPU without a core to spare: with the progress thread's core seconds measured, a
// collective under the compute slows it by those seconds and only the uncovered rest is a
// wait; the step's parts (PhasePrediction) sum to the step, as the trainer's do.
BOOST_AUTO_TEST_CASE(collectives_on_a_shared_core_slow_the_compute_and_the_parts_sum_to_the_step) {
  Workload w = tiny_workload();
  Hardware h = gpu_node();
  h.intra_node.bytes_per_s = 1e9;
  h.comm_overlaps_compute = false;
  h.fixed.op_call_s = 1e-6, h.fixed.allocation_s = 1e-7, h.fixed.sync_s = 1e-5;
  const StepPrediction serial = predict_step(h, w);
  BOOST_TEST(serial.comm_core_fwd_s + serial.comm_core_bwd_s == 0.0);
  h.comm_core_seconds_per_byte = 1e-10;
  const StepPrediction shared = predict_step(h, w);
  BOOST_TEST(shared.comm_exposed_s < serial.comm_exposed_s);
  BOOST_TEST(shared.comm_core_fwd_s > 0);
  BOOST_TEST(shared.comm_core_bwd_s > 0);
  BOOST_TEST(shared.comm_total_s == serial.comm_total_s, boost::test_tools::tolerance(1e-12));
  // The core seconds never exceed what every collective's bytes sent would cost, plus the
  // issuing rank's share (1/R) of the uncovered seconds it runs on its core.
  double sent = 0;
  for (const CollectiveCost& c : shared.collectives)
    sent += c.per_step * double(w.ranks - 1) / w.ranks * c.bytes;
  BOOST_TEST(shared.comm_core_fwd_s + shared.comm_core_bwd_s <=
             (sent * 1e-10 + shared.comm_total_s / w.ranks) * (1 + 1e-9));
  for (const StepPrediction& s : {serial, shared}) {
    const PhasePrediction& ph = s.phases;
    BOOST_TEST(phase_sum(ph) == s.step_s,
               boost::test_tools::tolerance(1e-9));
    BOOST_TEST(ph.other == s.fixed.syncs_s * 3 / 4 + s.gradient_step_s + s.comm_head_s, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(ph.fwd > s.fwd_s);
  }
  w.overlap = false;  // every collective waited for at once: its core time is inside the wait
  const StepPrediction waited = predict_step(h, w);
  BOOST_TEST(waited.comm_exposed_s == waited.comm_total_s, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(waited.comm_core_fwd_s + waited.comm_core_bwd_s == 0.0);
}

// Ranks time-sharing a core end a pass apart: the early ones wait in its closing collective,
// their progress threads polling on the core the partners still compute on, a call's core
// seconds each (measured at their count). The last partner ends (k-1) calls later; half of it
// is the passes' and half the waits'.
BOOST_AUTO_TEST_CASE(ranks_time_sharing_a_core_slow_their_partners_with_the_closing_collectives_polls) {
  Workload w = tiny_workload();
  w.bucket_bytes = 1 << 30;  // one bucket: its reduce-scatter closes the backward, uncovered
  Hardware h = time_sharing_two_core_node();
  h.comm_core_seconds_per_byte = 1e-10, h.comm_core_seconds_per_call = 2e-4;
  h.time_sharing_core_seconds_per_byte = 3e-10, h.time_sharing_core_seconds_per_call = 0;
  const auto with_polls = [&](int ranks, double per_call) {
    w.ranks = ranks;
    w.global_batch = ranks * w.micro_batch;  // one micro-batch: the backward's reduction closes the step
    h.time_sharing_core_seconds_per_call = per_call;
    return predict_step(h, w);
  };
  const StepPrediction quiet = with_polls(4, 0), polled = with_polls(4, 5e-4);
  BOOST_TEST(quiet.partner_polls_s == 0.0);
  BOOST_TEST(polled.partner_polls_s == 5e-4, boost::test_tools::tolerance(1e-12));  // 2 ranks a core: 1 call
  // Half the polls in the passes and half in the waits; and the last rank to issue (1 of 4)
  // waits for its call's hand-off, the same call's seconds, out of its backward.
  BOOST_TEST(polled.phases.bwd - quiet.phases.bwd == 2.5e-4 - 5e-4 / 4, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(polled.phases.comm_exposed - quiet.phases.comm_exposed == 2.5e-4 + 5e-4 / 4,
             boost::test_tools::tolerance(1e-9));
  BOOST_TEST(polled.phases.fwd == quiet.phases.fwd, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(phase_sum(polled.phases) == polled.step_s, boost::test_tools::tolerance(1e-9));
  // 4 ranks a core: the last waits for 3 partners' calls.
  BOOST_TEST(with_polls(8, 5e-4).partner_polls_s == 1.5e-3, boost::test_tools::tolerance(1e-12));
  // Ranks on cores of their own poll on their own cores.
  BOOST_TEST(with_polls(2, 5e-4).partner_polls_s == 0.0);
}

// Ranks time-sharing cores take their collectives' core seconds at the figure measured at their
// count (time_sharing_link.core_seconds_per_byte), ranks on cores of their own the rank-per-core
// one; a machine of one core, which has no rank-per-core figure, overlaps the collectives of its
// time-sharing ranks with their compute only through the time-sharing figure, and its one rank
// copies as compute.
BOOST_AUTO_TEST_CASE(ranks_time_sharing_cores_take_the_core_seconds_measured_at_their_count) {
  Workload w = tiny_workload();
  Hardware h = time_sharing_two_core_node();
  h.comm_core_seconds_per_byte = 1e-10, h.comm_core_seconds_per_call = 2e-5;
  BOOST_TEST(comm_core_cost(h, 4).per_byte == 1e-10);  // not measured at 4: the rank-per-core figures
  BOOST_TEST(comm_core_cost(h, 4).per_call == 2e-5);
  h.time_sharing_core_seconds_per_byte = 3e-10, h.time_sharing_core_seconds_per_call = 5e-5;
  BOOST_TEST(comm_core_cost(h, 2).per_byte == 1e-10);
  BOOST_TEST(comm_core_cost(h, 2).per_call == 2e-5);
  BOOST_TEST(comm_core_cost(h, 4).per_byte == 3e-10);
  BOOST_TEST(comm_core_cost(h, 4).per_call == 5e-5);
  BOOST_TEST(comm_core_cost(h, 8).per_byte == 3e-10);
  h.comm_core_seconds_per_call = 0, h.time_sharing_core_seconds_per_call = 0;
  w.ranks = 2;
  const StepPrediction own_cores = predict_step(h, w);
  h.time_sharing_core_seconds_per_byte = 0;
  BOOST_TEST(predict_step(h, w).comm_core_bwd_s == own_cores.comm_core_bwd_s);  // 2 ranks: a core each
  w.ranks = 4;
  const StepPrediction rank_per_core_figure = predict_step(h, w);
  h.time_sharing_core_seconds_per_byte = 3e-10;
  const StepPrediction measured = predict_step(h, w);
  BOOST_TEST(measured.comm_core_bwd_s > rank_per_core_figure.comm_core_bwd_s);
  BOOST_TEST(measured.comm_total_s == rank_per_core_figure.comm_total_s, boost::test_tools::tolerance(1e-12));
  // One core: no rank-per-core figure, so without the time-sharing one every collective is a wait.
  h.devices_per_node = 1;
  h.comm_core_seconds_per_byte = 0;
  h.rank_imbalance_ranks = 2;
  w.ranks = 2;
  h.time_sharing_core_seconds_per_byte = 0;
  const StepPrediction waits = predict_step(h, w);
  BOOST_TEST(waits.comm_exposed_s == waits.comm_total_s, boost::test_tools::tolerance(1e-9));
  h.time_sharing_core_seconds_per_byte = 3e-10;
  const StepPrediction overlapped = predict_step(h, w);
  BOOST_TEST(overlapped.comm_exposed_s < waits.comm_exposed_s);
  BOOST_TEST(overlapped.comm_core_fwd_s + overlapped.comm_core_bwd_s > 0);
  BOOST_TEST(phase_sum(overlapped.phases) == overlapped.step_s, boost::test_tools::tolerance(1e-9));
  // Its one rank copies its own buffers: its collectives are its compute, no partner measured.
  w.ranks = 1;
  h.time_sharing_core_seconds_per_byte = 0;
  const StepPrediction alone = predict_step(h, w);
  BOOST_TEST(alone.comm_total_s > 0);
  BOOST_TEST(alone.comm_exposed_s == 0.0);
  BOOST_TEST(alone.comm_core_fwd_s + alone.comm_core_bwd_s + alone.comm_head_s > 0);
}

// The data-parallel layer's passes over the gradient buffers, by hand: 1000 parameters (4000
// bytes of gradients), 2 ranks (a 2000-byte owned shard), 2 buckets, 3 micro-batches.
BOOST_AUTO_TEST_CASE(gradient_buffers_cost_their_zeroing_and_adds_at_the_memory_rate) {
  // DDP zeroes the flat gradients once a step; ZeRO-2 those and the owned shard.
  const GradientTraffic ddp = gradient_traffic(ShardMode::none, 1000, 0, 2, 2, 3, 0);
  BOOST_TEST(ddp.step_bytes == 4000.0);
  BOOST_TEST(ddp.backward_bytes == 0.0);
  BOOST_TEST(gradient_traffic(ShardMode::grads, 1000, 0, 2, 2, 3, 0).step_bytes == 6000.0);
  // ZeRO-3: each micro-batch zeroes 4000 bytes of slots and adds its reduced shard (3 x 2000
  // bytes); of the 6 reductions the last 4 (kGradSlots) are added at the step's end, 12000
  // bytes, beside the owned shard's zeroing.
  const GradientTraffic z3 = gradient_traffic(ShardMode::full, 1000, 0, 2, 2, 3, 0);
  BOOST_TEST(z3.backward_bytes == 3 * (4000.0 + 6000.0) - 12000.0);
  BOOST_TEST(z3.step_bytes == 2000.0 + 12000.0);
  // Frozen parameters are zeroed with their bucket but never added: half frozen, half the adds.
  const GradientTraffic frozen = gradient_traffic(ShardMode::full, 1000, 500, 2, 2, 3, 0);
  BOOST_TEST(frozen.backward_bytes == 3 * (4000.0 + 3000.0) - 6000.0);
  BOOST_TEST(frozen.step_bytes == 2000.0 + 6000.0);
  // The owned gradients (2000 bytes) in the cache: the 4 adds at the step's end read each
  // bucket's owned part and write it once, and the 4 shards.
  const GradientTraffic cached = gradient_traffic(ShardMode::full, 1000, 0, 2, 2, 3, 4096);
  BOOST_TEST(cached.backward_bytes == z3.backward_bytes);
  BOOST_TEST(cached.step_bytes == 2000.0 + 4 * 1000.0 + 2 * 2 * 1000.0);
  // One rank, one bucket, one micro-batch: the one add waits for the step's end.
  const GradientTraffic one = gradient_traffic(ShardMode::full, 1000, 0, 1, 1, 1, 0);
  BOOST_TEST(one.backward_bytes == 4000.0);
  BOOST_TEST(one.step_bytes == 4000.0 + 12000.0);

  // In the step: at the memory rate, the backward's share in bwd and the rest in other.
  Workload w = tiny_workload();
  const Hardware h = gpu_node();
  const StepPrediction s = predict_step(h, w);
  const double n = double(make_plan(w.model, w.ranks, s.tokens_per_mb).n_params);
  const GradientTraffic t = gradient_traffic(w.shard, n, 0, w.ranks, s.buckets, s.micro_batches, 0);
  BOOST_TEST(t.backward_bytes > 0);
  BOOST_TEST(s.gradient_backward_s == t.backward_bytes / h.memory_bytes_per_s, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(s.gradient_step_s == t.step_bytes / h.memory_bytes_per_s, boost::test_tools::tolerance(1e-12));
  const PhasePrediction& ph = s.phases;
  BOOST_TEST(phase_sum(ph) == s.step_s,
             boost::test_tools::tolerance(1e-9));
}

// gemm_width_efficiency: the table interpolated in log2(width) and held at its ends; a
// narrower model's GEMMs at a lower rate.
BOOST_AUTO_TEST_CASE(gemm_rate_follows_the_width_table) {
  Hardware h = gpu_node();
  BOOST_TEST(gemm_efficiency(h, 64) == 1.0);
  h.gemm_width_efficiency = {{32, 0.25}, {64, 0.5}, {256, 1.0}};
  BOOST_TEST(gemm_efficiency(h, 16) == 0.25);
  BOOST_TEST(gemm_efficiency(h, 64) == 0.5);
  BOOST_TEST(gemm_efficiency(h, 128) == 0.75, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(gemm_efficiency(h, 1024) == 1.0);
  Workload w = tiny_workload();  // d_model 64
  const StepPrediction half = predict_step(h, w);
  h.gemm_width_efficiency.clear();
  const StepPrediction full = predict_step(h, w);
  const PlanReport p = make_plan(w.model, w.ranks, half.tokens_per_mb);
  BOOST_TEST(half.fwd_s - full.fwd_s ==
                 p.gemm_flops_fwd * half.samples_per_rank / h.gemm_fp32,  // per sample: 1/0.5 - 1 rate-seconds
             boost::test_tools::tolerance(1e-6));
  const Hardware cpu = load_hardware("cpu_dev");
  BOOST_TEST(cpu.gemm_width_efficiency.size() == 4u);
  BOOST_TEST(cpu.comm_core_seconds_per_byte > 0);
}

// gemm_narrow_efficiency: a linear narrower than the model and no wider than the table's widest
// key at the table's rate (interpolated in log2, held below its narrowest key), every other
// linear at the model width's; tiny_wan's 8-wide linears (the action encoder's 8 -> 64 and the
// decoder's 32 -> 8: 2·8·(64 + 32) FLOPs per action token) at half the rate cost their FLOPs
// once more.
BOOST_AUTO_TEST_CASE(narrow_linears_run_at_the_narrow_table_rate) {
  Hardware h = gpu_node();
  h.gemm_width_efficiency = {{64, 0.8}};
  BOOST_TEST(linear_efficiency(h, 8, 64) == 0.8);  // no narrow table
  h.gemm_narrow_efficiency = {{8, 0.1}, {32, 0.4}};
  BOOST_TEST(linear_efficiency(h, 4, 64) == 0.1);
  BOOST_TEST(linear_efficiency(h, 16, 64) == 0.25, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(linear_efficiency(h, 32, 64) == 0.4);
  BOOST_TEST(linear_efficiency(h, 48, 64) == 0.8);  // wider than the table
  BOOST_TEST(linear_efficiency(h, 64, 64) == 0.8);  // the trunk
  BOOST_TEST(linear_efficiency(h, 16, 16) == 0.8);  // a 16-wide model's trunk

  Workload w = tiny_workload();
  h = gpu_node();
  const StepPrediction trunk_rate = predict_step(h, w);
  h.gemm_narrow_efficiency = {{8, 0.5}};
  const StepPrediction narrow_rate = predict_step(h, w);
  const PlanReport p = make_plan(w.model, w.ranks, trunk_rate.tokens_per_mb);
  const PackedBatch one = plan_micro_batch(w.model, 1, {});
  const double actions = double(std::count(one.kind.begin(), one.kind.end(), kAction));
  BOOST_TEST(actions > 0);
  double eight_wide = 0, total = 0;
  for (const auto& [narrow, flops] : p.gemm_flops_fwd_by_narrow) {
    if (narrow == 8) eight_wide = flops;
    total += flops;
  }
  BOOST_TEST(eight_wide == 2 * actions * 8 * (64 + 32));
  BOOST_TEST(total == p.gemm_flops_fwd, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(narrow_rate.fwd_s - trunk_rate.fwd_s == eight_wide * narrow_rate.samples_per_rank / h.gemm_fp32,
             boost::test_tools::tolerance(1e-6));
  BOOST_TEST(narrow_rate.bwd_s - trunk_rate.bwd_s == 2 * eight_wide * narrow_rate.samples_per_rank / h.gemm_fp32,
             boost::test_tools::tolerance(1e-6));
  BOOST_TEST(load_hardware("cpu_dev").gemm_narrow_efficiency.size() == 3u);
}

// The checkpoint holds fp32 parameters and the trained ones' two AdamW moments.
BOOST_AUTO_TEST_CASE(checkpoint_bytes_count_no_moments_for_frozen_parameters) {
  Workload w = tiny_workload();
  const StepPrediction trained = predict_step(gpu_node(), w);
  const double n = double(make_plan(w.model, w.ranks, 1).n_params);
  BOOST_TEST(trained.checkpoint_bytes == 12 * n);
  const std::unique_ptr<Model> model = make_model(w.model, nullptr);
  w.frozen.assign(model->params().all().size(), false);
  w.frozen[0] = true;
  BOOST_TEST(predict_step(gpu_node(), w).checkpoint_bytes == 12 * n - 8 * double(model->params().all()[0].numel));
}

// The collectives move what DataParallel moves: ZeRO gathers every piece of a bucket and
// reduce-scatters its trained pieces, DDP all-reduces them, one call each (a bucket mixing
// frozen and trained tensors is cut where they change).
BOOST_AUTO_TEST_CASE(collectives_are_issued_per_piece_and_skip_frozen_gradients) {
  Workload w = tiny_workload();
  const std::unique_ptr<Model> model = make_model(w.model, nullptr);
  const std::vector<ParamInfo>& tensors = model->params().all();
  const StepPrediction trained = predict_step(gpu_node(), w);
  for (const CollectiveCost& c : trained.collectives) BOOST_TEST(c.buckets == trained.buckets);
  // Tensor 1 frozen inside its unit; the last unit (its own bucket) frozen whole.
  w.frozen.assign(tensors.size(), false);
  w.frozen[1] = true;
  double frozen_params = double(tensors[1].numel);
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].unit == tensors.back().unit) {
      w.frozen[i] = true;
      frozen_params += double(tensors[i].numel);
    }
  const ShardLayout layout(model->params(), w.shard, 0, w.ranks, int64_t(w.bucket_bytes), w.frozen);
  int trained_pieces = 0;
  for (int p = 0; p < layout.n_pieces(); ++p) trained_pieces += layout.piece(p).frozen ? 0 : 1;
  BOOST_TEST(layout.n_pieces() > layout.n_buckets());  // the mixed unit is cut
  const StepPrediction mixed = predict_step(gpu_node(), w);
  const double n = double(make_plan(w.model, w.ranks, 1).n_params);
  for (const CollectiveCost& c : mixed.collectives) {
    if (c.op == Collective::all_gather) {
      BOOST_TEST(c.buckets == layout.n_pieces());
      BOOST_TEST(c.bytes == 4 * n);
    } else {
      BOOST_TEST(c.buckets == trained_pieces);
      BOOST_TEST(c.bytes == 4 * (n - frozen_params));
    }
  }
  BOOST_TEST(collective_calls(mixed) > collective_calls(trained));
  // ZeRO-2's update changes the trained pieces only, and gathers those.
  w.shard = ShardMode::grads;
  for (const CollectiveCost& c : predict_step(gpu_node(), w).collectives) {
    BOOST_TEST(c.buckets == trained_pieces);
    BOOST_TEST(c.bytes == 4 * (n - frozen_params));
  }
  w.shard = ShardMode::none;
  const StepPrediction ddp = predict_step(gpu_node(), w);
  BOOST_REQUIRE(ddp.collectives.size() == 1u);
  BOOST_TEST(ddp.collectives[0].buckets == trained_pieces);
  BOOST_TEST(ddp.collectives[0].bytes == 4 * (n - frozen_params));
}

// train.tune_visual's additions on a tiny Eagle (1 SigLIP layer D 8, I 16, 2 heads, 4 tokens of 2×2
// patches; 1 Qwen3 layer E 8, I 16, 2 query heads and 1 kv head of 4; one view, 6 prompt tokens),
// counted by hand from what VisionTowerTraining and LanguageModelTraining keep and compute.
BOOST_AUTO_TEST_CASE(tune_visual_adds_the_vision_backward_and_the_kept_activations) {
  encoders::EagleDims d;
  d.vision_hidden = 8, d.vision_intermediate = 16, d.vision_heads = 2, d.vision_layers = 1, d.patch = 2, d.image_size = 4;
  d.llm_hidden = 8, d.llm_intermediate = 16, d.llm_heads = 2, d.llm_kv_heads = 1, d.head_dim = 4, d.select_layer = 1;
  const BackboneCost c = eagle_backbone_cost(gpu_node(), d, 1, 6);
  // Per image token: patch row 12, x and o 16, h_out 8 + mean/rstd 2, mlp1 token 8; the layer
  // 8·8 + 2·16 + 2 heads' lse + 4 norm statistics = 102: 148 floats, 4 tokens.
  // Per prompt token: the layer 4·8 + 5·8 + 2·4 + 3·16 + 2·2 + 1 + 2 = 135, the final norm 2·8 + 1: 152, 6 tokens.
  BOOST_TEST(c.tuned_activation_bytes == 4.0 * (4 * 148 + 6 * 152));
  // Vision GEMMs 768 (patch) + 4096 (layer) + 512 (mlp1) three times, attention 512 three and a
  // half times; the LLM's GEMMs 6912 twice (no weight gradients), attention 672 three and a half.
  BOOST_TEST(c.tuned_flops == 3 * 5376.0 + 3.5 * 512 + 2 * 6912.0 + 3.5 * 672);
  BOOST_TEST(c.flops() == 5376.0 + 512 + 6912 + 672);
}

// train.tune_visual keeps the frozen language model in fp32 on every rank (TunedBackbone,
// load_eagle_language_model): on a tiny Eagle (vocabulary 32, E 8, 1 kept Qwen3 layer of 2 query
// heads and 1 kv head of 4, I 16) by hand, and in the memory verdict's state and total.
BOOST_AUTO_TEST_CASE(tune_visual_counts_the_frozen_llm_weights) {
  encoders::EagleDims d;
  d.vocab = 32, d.llm_hidden = 8, d.llm_intermediate = 16, d.llm_heads = 2, d.llm_kv_heads = 1, d.head_dim = 4;
  d.select_layer = 1;
  // Embedding 32·8 = 256, final norm 8; the layer: q 8·8, k and v 8·4 each, o 8·8, gate/up/down
  // 3·8·16, its two norms 2·8, q/k norms 2·4: 64 + 64 + 64 + 384 + 16 + 8 = 600.
  BOOST_TEST(tuned_frozen_weight_bytes(d) == 4.0 * (256 + 8 + 600));

  Workload w = tiny_workload();
  const StepPrediction head = predict_step(gpu_node(), w);
  w.frozen_weight_bytes = 3 << 20;
  const StepPrediction tuned = predict_step(gpu_node(), w);
  BOOST_TEST(tuned.state_bytes == head.state_bytes + double(3 << 20));
  BOOST_TEST(tuned.memory_bytes == head.memory_bytes + double(3 << 20), boost::test_tools::tolerance(1e-12));
}

// model.backbone = online: the frozen backbone's weights and one forward's buffers are in the
// memory verdict (backbone_memory), counted by hand on a tiny Eagle (SigLIP: 1 layer D 8, I 16,
// 4 tokens of 2×2 patches; Qwen3: vocabulary 32, E 8, 1 layer of 2 query heads and 1 kv head of
// 4, I 16) for one view and 6 prompt tokens, from what vision_tower_forward,
// language_model_forward and OnlineBackbone::compute_context make.
BOOST_AUTO_TEST_CASE(online_backbone_weights_and_forward_buffers_by_hand) {
  encoders::EagleDims d;
  d.vision_hidden = 8, d.vision_intermediate = 16, d.vision_heads = 2, d.vision_layers = 1, d.patch = 2, d.image_size = 4;
  d.vocab = 32, d.llm_hidden = 8, d.llm_intermediate = 16, d.llm_heads = 2, d.llm_kv_heads = 1, d.head_dim = 4;
  d.select_layer = 1;
  // Vision: patch GEMM 12·8 = 96, patch bias, post-norm w and b 3·8 = 24, positions 4·8 = 32, the
  // layer (q/k/v/o 4·64, MLP 2·8·16, 9 vectors of 8, MLP bias 16) 600, mlp1 8·8 + 8 = 72: 824.
  // LLM (test_plan tune_visual_counts_the_frozen_llm_weights): 256 + 8 + 600 = 864.
  BOOST_TEST(backbone_weight_bytes(d, 4) == 4.0 * (824 + 864));
  BOOST_TEST(backbone_weight_bytes(d, 2) == 2.0 * (824 + 864));
  // Storage dtype, per image token (4): patch row 12, x 8, h 8, qkv 24, attention 8, o 8, MLP
  // pre and act 16 each, token 8 = 108; per prompt token (6): embedding 8, h 8, q 8, k 4, v 4,
  // normed q 8 and k 4, attention 8, o 8, gate|up 32, act 16, vl 8 = 116.
  const double storage = 4 * 108 + 6 * 116;
  // 4 bytes: vision positions and image rows (4 each), ids, LLM positions and context rows (6
  // each); fp32 mean and rstd per image token (2·4), rstd per query head (2·6).
  const double four = 8 + 18 + 8 + 12;
  BOOST_TEST(backbone_forward_bytes(d, 1, 6, 4) == 4 * storage + 4 * four);
  BOOST_TEST(backbone_forward_bytes(d, 1, 6, 2) == 2 * storage + 4 * (four + 6 * 8));  // + the fp32 vl rows
  BOOST_TEST(backbone_forward_bytes(d, 2, 12, 4) == 2 * backbone_forward_bytes(d, 1, 6, 4));  // linear in samples

  ModelConfig mc;
  mc.online_backbone = true;
  const BackboneMemory online = backbone_memory(mc, d, 1, 6, 2);
  BOOST_TEST(online.weight_bytes == 2.0 * (824 + 864));
  BOOST_TEST(online.activation_bytes_per_sample == 2 * storage + 4 * (four + 48));
  mc.tune_visual = true;  // the vision tower trained: its parameters are the model's, the LLM fp32
  const BackboneMemory tuned = backbone_memory(mc, d, 1, 6, 2);
  BOOST_TEST(tuned.weight_bytes == tuned_frozen_weight_bytes(d));
  BOOST_TEST(tuned.activation_bytes_per_sample == tuned_activation_bytes(d, 1, 6));
  mc.tune_visual = mc.online_backbone = false;  // features read from files
  BOOST_TEST(backbone_memory(mc, d, 1, 6, 2).weight_bytes == 0.0);
  BOOST_TEST(backbone_memory(mc, d, 1, 6, 2).activation_bytes_per_sample == 0.0);
}

// train.tune_visual's kept activations (Workload::context_activation_bytes_per_sample) are in
// the memory verdict: per sample of the micro-batch, in the activations and the total; enough of
// them turns a fitting step into one that does not fit.
BOOST_AUTO_TEST_CASE(tuned_context_activations_are_in_the_memory_verdict) {
  Workload w = tiny_workload();
  const StepPrediction head = predict_step(gpu_node(), w);
  BOOST_TEST_REQUIRE(head.fits);
  w.context_activation_bytes_per_sample = 1 << 20;
  const StepPrediction tuned = predict_step(gpu_node(), w);
  const double kept = double(1 << 20) * head.samples_per_mb;
  BOOST_TEST(tuned.activation_bytes == head.activation_bytes + kept);
  BOOST_TEST(tuned.memory_bytes == head.memory_bytes + kept, boost::test_tools::tolerance(1e-12));
  w.context_activation_bytes_per_sample = (head.capacity_bytes - head.memory_bytes) / head.samples_per_mb * 1.01;
  BOOST_TEST(!predict_step(gpu_node(), w).fits);
}

// The activations the linears fuse cost their elements at the hardware's seconds per element,
// forward and backward, in the GEMM kind: tiny_wan's GELU-tanh on every block's FFN hidden rows
// and on the text projection's (its SiLU and ReLU elsewhere); an activation the file does not
// name costs its bytes only. The file's table is read by activation; an unknown name or a
// negative figure is refused.
BOOST_AUTO_TEST_CASE(fused_activations_cost_their_elements_at_the_measured_figures) {
  Hardware h = gpu_node();
  Workload w = tiny_workload();
  const StepPrediction base = predict_step(h, w);
  const PlanReport p = make_plan(w.model, w.ranks, base.tokens_per_mb);
  const ModelConfig& c = w.model;
  const double gelu = double(c.n_layers) * double(p.tokens_per_sample) * c.d_ff + double(p.context_per_sample) * c.d_model;
  BOOST_TEST(p.activated_per_sample.at(Activation::gelu_tanh) == gelu);
  BOOST_TEST(p.activated_per_sample.count(Activation::gelu_erf) == 0u);  // no CLIP context in tiny_wan
  h.activation_element_s[Activation::gelu_tanh] = {2e-9, 3e-9};
  const StepPrediction with = predict_step(h, w);
  const double elements = base.samples_per_rank * gelu;
  BOOST_TEST(with.fwd_s - base.fwd_s == elements * 2e-9, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(with.bwd_s - base.bwd_s == elements * 3e-9, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(with.fwd_kinds.gemm - base.fwd_kinds.gemm == elements * 2e-9, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(with.fwd_kinds.elementwise == base.fwd_kinds.elementwise);
  h.activation_element_s = {{Activation::gelu_erf, {1e-6, 1e-6}}};
  BOOST_TEST(predict_step(h, w).fwd_s == base.fwd_s);

  const auto activation = [](const std::string& name, double forward) {
    return hardware_with("activation_element_seconds",
                         {{name, {{"forward", figure(forward)}, {"backward", figure(3e-9)}}}});
  };
  const Hardware read = activation("silu", 1.5e-9);
  BOOST_TEST(read.activation_element_s.at(Activation::silu).forward_s == 1.5e-9);
  BOOST_TEST(read.activation_element_s.at(Activation::silu).backward_s == 3e-9);
  BOOST_TEST(read.activation_element_s.size() == 1u);
  BOOST_CHECK_THROW(activation("swish", 1.5e-9), Error);
  BOOST_CHECK_THROW(activation("silu", -1e-9), Error);
}

// The passes by kind (what run.profile_ops sums a run's ops into) add up to the passes: the
// forward's kinds to its compute, the backward's to its compute and the recompute, each with its
// share of the op calls' and allocations' host time on a CPU.
BOOST_AUTO_TEST_CASE(the_passes_by_kind_add_up_to_the_passes) {
  Hardware h = two_core_node();
  h.dropout_element_s = 1e-9;
  h.fixed.op_call_s = 1e-6, h.fixed.allocation_s = 1e-7;
  h.activation_element_s[Activation::gelu_tanh] = {2e-9, 3e-9};
  Workload w;
  w.model = preset_config("tiny_gr00t");  // dropout in the blocks
  w.model.recompute = Recompute::full;
  w.ranks = 2;
  w.global_batch = 16;
  const StepPrediction s = predict_step(h, w);
  const auto own = [](const ComputeKinds& k) { return k.total() - k.host; };
  BOOST_TEST(s.fwd_kinds.dropout > 0);
  BOOST_TEST(s.bwd_kinds.gemm > 2 * s.fwd_kinds.gemm);  // the recomputed forward's GEMMs too
  BOOST_TEST(own(s.fwd_kinds) == s.fwd_s, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(own(s.bwd_kinds) == s.bwd_s + s.recompute_s + s.gradient_backward_s, boost::test_tools::tolerance(1e-12));
  // The host time of the passes' calls in the passes, the optimizer's in the optimizer: the
  // backward's half as much again as the forward's (its own ops and the recomputed forward's).
  const double optimizer_calls = double(s.fixed.op_calls) - double(s.fixed.allocations) / kAllocationsPerOpCall;
  BOOST_TEST(optimizer_calls >= 2);
  BOOST_TEST(s.fixed.optimizer_host_s == optimizer_calls * 1e-6, boost::test_tools::tolerance(1e-12));  // a core a rank
  BOOST_TEST(s.fwd_kinds.host + s.bwd_kinds.host + s.fixed.optimizer_host_s ==
                 s.fixed.op_calls_s + s.fixed.allocations_s,
             boost::test_tools::tolerance(1e-12));
  BOOST_TEST(s.bwd_kinds.host > 1.5 * s.fwd_kinds.host);
  BOOST_TEST(s.phases.optim >= s.optimizer_s + s.fixed.optimizer_host_s);
  // The elementwise kind: the bytes its ops are given in a pass at the memory's rate (the
  // backward's, gradients zeroed and the recomputed forward's, more than the forward's); twice
  // the bandwidth, the same bytes in half the time.
  BOOST_TEST(s.elementwise_bytes_fwd > 0);
  BOOST_TEST(s.elementwise_bytes_bwd > s.elementwise_bytes_fwd);
  h.memory_bytes_per_s *= 2;
  const StepPrediction faster = predict_step(h, w);
  BOOST_TEST(faster.elementwise_bytes_fwd == s.elementwise_bytes_fwd);
  BOOST_TEST(faster.fwd_kinds.elementwise == s.fwd_kinds.elementwise / 2, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(faster.bwd_kinds.elementwise == s.bwd_kinds.elementwise / 2, boost::test_tools::tolerance(1e-12));
}

// The elementwise ops: each pass's bytes those of the model's dry step, the arithmetic ones
// (rope, the sinusoids, the norms) their elements and rows at the file's figures; the file's
// figures read, an unknown op, a negative figure or a row figure without an element figure
// refused.
BOOST_AUTO_TEST_CASE(arithmetic_elementwise_ops_cost_their_elements_at_the_measured_figures) {
  Hardware h = gpu_node();
  Workload w = tiny_workload();  // tiny_wan: rope in the blocks
  w.shard = ShardMode::none;      // no gradient slot zeroed in the backward: the model's ops alone
  const StepPrediction base = predict_step(h, w);
  const ElementwiseWork mb = model_elementwise_work(h, w)->micro_batch(base.samples_per_mb);
  const double micro_batches = double(base.samples_per_rank) / base.samples_per_mb;
  BOOST_TEST(base.elementwise_bytes_fwd == mb.fwd.bytes * micro_batches, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(base.elementwise_bytes_bwd == mb.bwd.bytes * micro_batches, boost::test_tools::tolerance(1e-12));
  const double rope = mb.fwd.arithmetic.at("rope_forward").elements / base.samples_per_mb;
  BOOST_TEST(rope > 0);
  BOOST_TEST(mb.bwd.arithmetic.at("rope_backward").elements == mb.fwd.arithmetic.at("rope_forward").elements);
  BOOST_TEST(mb.fwd.arithmetic.count("sinus_embedding") == 1u);
  h.elementwise_element_s["rope_forward"] = 1e-8;
  const StepPrediction slow = predict_step(h, w);
  h.elementwise_element_s["rope_forward"] = 3e-8;
  const StepPrediction slower = predict_step(h, w);
  BOOST_TEST(slower.fwd_kinds.elementwise - slow.fwd_kinds.elementwise == base.samples_per_rank * rope * 2e-8,
             boost::test_tools::tolerance(1e-9));
  BOOST_TEST(slower.bwd_kinds.elementwise == slow.bwd_kinds.elementwise);

  // Element figures alone: the file's row figures, for its norms, would want theirs beside them.
  const auto elementwise = [](const std::string& name, double seconds) {
    return hardware_with_sections({{"elementwise_element_seconds", {{name, figure(seconds)}}},
                                   {"elementwise_row_seconds", nlohmann::json::object()}});
  };
  const Hardware read = elementwise("sinus_embedding", 4e-9);
  BOOST_TEST(read.elementwise_element_s.at("sinus_embedding") == 4e-9);
  BOOST_TEST(read.elementwise_element_s.size() == 1u);
  BOOST_CHECK_THROW(elementwise("gated_residual_forward", 4e-9), Error);
  BOOST_CHECK_THROW(elementwise("rope_backward", -1e-9), Error);

  // The norms: their elements and rows (tiny_wan's on rows of d_model), each at its figure, and
  // never below their bytes at the memory's rate (a roofline): an element figure of 0 costs the
  // bytes, as no figure does.
  const ArithmeticWork& norm = mb.bwd.arithmetic.at("norm_modulate_backward");
  BOOST_TEST(norm.rows > 0);
  BOOST_TEST(norm.elements == norm.rows * double(w.model.d_model));
  BOOST_TEST(mb.fwd.arithmetic.at("layernorm_forward").rows > 0);
  BOOST_TEST(mb.bwd.arithmetic.at("rmsnorm_backward").rows > 0);
  h.elementwise_element_s["norm_modulate_backward"] = 0;
  BOOST_TEST(predict_step(h, w).bwd_kinds.elementwise == slow.bwd_kinds.elementwise,
             boost::test_tools::tolerance(1e-12));
  h.elementwise_element_s["norm_modulate_backward"] = 1e-6;  // far above its bytes' time
  const StepPrediction per_element = predict_step(h, w);
  h.elementwise_row_s["norm_modulate_backward"] = 2e-6;
  const StepPrediction per_row = predict_step(h, w);
  const double norm_rows_a_step = norm.rows * micro_batches;
  BOOST_TEST(per_row.bwd_kinds.elementwise - per_element.bwd_kinds.elementwise == norm_rows_a_step * 2e-6,
             boost::test_tools::tolerance(1e-9));
  BOOST_TEST(per_row.fwd_kinds.elementwise == per_element.fwd_kinds.elementwise);
  const Hardware rows = hardware_with_sections(
      {{"elementwise_row_seconds", {{"layernorm_backward", figure(2e-8)}}},
       {"elementwise_element_seconds", {{"layernorm_backward", figure(1e-9)}}}});
  BOOST_TEST(rows.elementwise_row_s.at("layernorm_backward") == 2e-8);
  BOOST_TEST(rows.elementwise_element_s.at("layernorm_backward") == 1e-9);
  const auto row_only = [](const std::string& name, double seconds) {
    return hardware_with_sections({{"elementwise_row_seconds", {{name, figure(seconds)}}},
                                   {"elementwise_element_seconds", {{"rope_forward", figure(1e-9)}}}});
  };
  BOOST_CHECK_THROW(row_only("layernorm_backward", 2e-8), Error);  // a row figure without its element figure
  BOOST_CHECK_THROW(row_only("rope_forward", -1e-8), Error);
}
