// The --plan report: what one training step of a model costs, from the shapes alone, without
// allocating parameters or activations (dreamzero14b's whole --plan, its config search
// included, takes 9 s on a 2-core VM: plan_batches.hpp).
//   parameters: exact, from the registry;
//   FLOPs per sample: GEMMs 2·m·n·k; attention 4·pairs·D forward (QKᵀ and PV) and
//     10·pairs·D backward (flash backward recomputes QKᵀ: five matmuls), with the allowed
//     (query, key) pairs of a typical sample's token layout under its masks; backward GEMMs
//     are twice the forward ones;
//   memory per rank: activations of one micro-batch (the model's own arena layout, the blocks'
//     activations in the storage type the run gives them: training_blocks_dtype), and
//     parameters + gradients + AdamW moments of the trained ones for shard = none / grads / full,
//     as the run's layout allocates them on its largest rank (plan/state_memory.hpp);
//   dropout per sample: the elements of every site (each draws its keep word in the forward and
//     again in the backward: the masks are drawn, never stored), and their memory traffic: each
//     site reads and writes its tensor in the forward (in place), and its backward zeroes, reads
//     and accumulates.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "batch/packed_batch.hpp"
#include "core/dtype.hpp"
#include "kernels/op_types.hpp"
#include "config/model_config.hpp"
#include "config/train_config.hpp"
#include "plan/plan_batches.hpp"
#include "plan/state_memory.hpp"

namespace emb {

// FLOPs of one forward/backward over a packed micro-batch (any layout; padding counts, as the
// kernels run it).
struct StepFlops {
  int64_t self_pairs = 0, cross_pairs = 0, context_pairs = 0;  // allowed attention pairs
  int64_t image_pairs = 0;  // query tokens × their sample's CLIP rows (wan with the CLIP context)
  double gemm_fwd = 0, attn_fwd = 0, fwd = 0, bwd = 0;
  double attn_pair_heads = 0;  // allowed pairs × heads over every attention layer (per-pair work: softmax)
  // gemm_fwd by the linears' narrower dimension min(in, out), ascending: (dimension, FLOPs); a
  // linear 8 features wide runs below a trunk linear's rate (Hardware::gemm_narrow_efficiency).
  std::vector<std::pair<double, double>> gemm_by_narrow;
  std::map<Activation, double> activated;  // elements through each activation the linears fuse
};
StepFlops batch_flops(const ModelConfig& cfg, const PackedBatch& batch);
// attn_fwd and attn_pair_heads of `f` from its pair counts (allowed pairs, or the pairs a tiled
// kernel computes: src/plan/computed_attention.hpp).
void attention_work(const ModelConfig& cfg, StepFlops& f);

struct PlanReport {
  std::string preset;
  int ranks = 1;
  int64_t n_params = 0, n_units = 0, max_unit_params = 0;
  int64_t tokens_per_sample = 0, context_per_sample = 0;
  int64_t clip_per_sample = 0;  // CLIP image-context rows (wan with model.clip_tokens)
  int samples_per_mb = 0;
  int64_t tokens_per_mb = 0, context_per_mb = 0;
  int64_t self_pairs_per_sample = 0, cross_pairs_per_sample = 0, image_pairs_per_sample = 0;
  double gemm_flops_fwd = 0, attn_flops_fwd = 0;  // per sample
  std::vector<std::pair<double, double>> gemm_flops_fwd_by_narrow;  // per sample, as StepFlops::gemm_by_narrow
  double attn_pair_heads = 0;                     // per sample, as StepFlops
  std::map<Activation, double> activated_per_sample;  // as StepFlops::activated
  double dropout_elements = 0;                          // per sample, every site's
  double dropout_bytes_fwd = 0, dropout_bytes_bwd = 0;  // per sample
  double flops_fwd = 0, flops_bwd = 0;            // per sample
  double activation_bytes = 0;                    // one micro-batch on one rank
  DType blocks_dtype = DType::f32;                // the blocks' activations' storage type
  double block_activation_bytes = 0;              // of activation_bytes, the blocks' data in blocks_dtype
  double block_conversion_bytes = 0;              // and their copies of fp32 tensors (bf16 blocks only)
  int64_t trainable_params = 0;                   // n_params less those train.tune_* freezes
  std::array<double, 3> state_bytes{};            // largest rank's, indexed by ShardMode (none, grads, full)

  double state(ShardMode shard) const { return state_bytes[size_t(shard)]; }
};

// token_budget: data.tokens_per_mb (a micro-batch holds as many such samples as fit, at least one).
// blocks: the storage type of the blocks' activations on the run's backend
// (training_blocks_dtype: bf16 on CUDA under model.precision = bf16). sharding: the run's buckets
// and frozen tensors, which the state per rank follows (default: one bucket per unit, all trained).
PlanReport make_plan(const ModelConfig& cfg, int ranks, int64_t token_budget, const PlanSample& shape = {},
                     DType blocks = DType::f32, const PlanSharding& sharding = {});
std::string plan_text(const PlanReport& plan);

}  // namespace emb
