// The interface the trainer uses for either family (MODEL.md), on any backend: every
// computation on tensor data goes through the Ops the model is made with (kernels/ops.hpp),
// and parameters, gradients and activations live in that backend's memory.
//
// Loss normalisation: every loss term is divided by a GLOBAL denominator the caller passes
// (loss_counts summed over the micro-batches and ranks of the step), so summing
// forward_backward over micro-batches gives the global-batch loss and gradient exactly,
// however the batch was split. For one micro-batch, denominators = loss_counts(batch)
// reproduces MODEL.md's loss. Gradients accumulate (+=): zero them once per step.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/arena.hpp"
#include "kernels/ops.hpp"
#include "kernels/ops_buffer.hpp"
#include "batch/packed_batch.hpp"
#include "model/activation_plan.hpp"
#include "model/activation_rows.hpp"
#include "model/context_source.hpp"
#include "model/device_batch.hpp"
#include "model/flow_matching.hpp"
#include "model/graph_segments.hpp"
#include "config/model_config.hpp"
#include "model/param_registry.hpp"
#include "model/time_encoder.hpp"
#include "model/time_rows.hpp"
#include "model/token_layout.hpp"
#include "model/trunk.hpp"
#include "model/unit_hooks.hpp"

namespace emb {

// The storage type of the trunk's blocks' activations and parameters in training (accumulate
// with hooks): bf16 with model.precision = bf16 on a backend with mixed storage
// (Ops::mixed_storage, CUDA), model.fp8 = on included (the FP8 linears quantise bf16 data and
// accumulate fp32 dW and db), else fp32. The residual stream, statistics, gradients, encoders
// and heads stay fp32; the CPU computes bf16 mode in fp32 on the bf16-rounded weights. One rule
// for the run (Model::training_blocks_dtype) and for --plan, which has no backend (src/plan).
DType training_blocks_dtype(const ModelConfig& cfg, bool mixed_storage);

class Model {
 public:
  // ops may be null for a model that only describes itself (parameters, --plan).
  Model(const ModelConfig& cfg, Ops* ops);
  virtual ~Model() = default;
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const ModelConfig& config() const { return cfg_; }
  const ParamRegistry& params() const { return reg_; }
  void init_params(float* params, uint64_t seed) const { reg_.init(params, seed, cfg_.init_std); }
  // Per tensor of params() (empty: none): the tensors training leaves as they are
  // (train/freezing.hpp). Their gradients are never computed: the backward skips their
  // weight-gradient GEMMs and leaves their gradient memory untouched.
  void freeze(std::vector<bool> frozen) { frozen_ = std::move(frozen); }
  const std::vector<bool>& frozen() const { return frozen_; }

  // model.tune_visual: the encoder of the context rows, trained through ModelConfig::trained_context
  // (context_source.hpp); not owned. Without one the context is the batch's.
  void set_context_source(ContextSource* source) { context_source_ = source; }

  // The linears on the FP8 path (model.fp8; fp8_eligible in dit_block.hpp); 0 when it is off.
  int fp8_linear_count() const;

  // training_blocks_dtype (below) on this model's backend. Calls without hooks (the flat fp32
  // parameters: policy evaluation, direct calls) compute the blocks in fp32.
  DType training_blocks_dtype() const;

  // The blocks' dropout sites with p > 0 (MODEL.md "Dropout"), in block and application order:
  // what the parity dump writes the keep-masks of.
  struct DropoutSite {
    std::string name;  // "vl.{l}.attn_out", "dit.{l}.ff_hidden", ... (l within its stack)
    uint32_t id = 0;   // DropoutConfig::site
    float p = 0;
    bool context = false;  // over a sample's context tokens (vl blocks), else its query tokens
    int width = 0;
  };
  std::vector<DropoutSite> dropout_sites() const;

  // gr00t: {Σ action_mask}; wan: {noisy video elements, action elements}.
  virtual std::vector<double> loss_counts(const PackedBatch& batch) const = 0;

  // One micro-batch's forward (and backward when grads or hooks are given); its loss (its share
  // of the global loss) stays in backend memory until take_loss(), so a step of several
  // micro-batches reads its loss from a GPU once. With a backward the blocks' dropout is on
  // (training), keyed by (seed, step, sample id) (MODEL.md "Dropout").
  void accumulate(const float* params, float* grads, const PackedBatch& batch, int64_t step, uint64_t seed,
                  const std::vector<double>& denominators, UnitHooks* hooks = nullptr);
  // The sum of the losses of the micro-batches accumulated since the last call, in their order
  // (one device-to-host read).
  double take_loss();
  // accumulate() then take_loss(): the loss of `batch` alone.
  double forward_backward(const float* params, float* grads, const PackedBatch& batch, int64_t step, uint64_t seed,
                          const std::vector<double>& denominators, UnitHooks* hooks = nullptr);

  // Forward only, gr00t (policy.cpp): the flow velocity v_θ(x, τ) [B, Hz, A] of every sample of
  // `batch` at its noisy action chunk x = batch.actions and flow time tau[s] (0 = noise,
  // 1 = data), on the same path as training's forward without dropout (the policy of closed-loop
  // evaluation, upstream's eval mode).
  void flow_velocity(const float* params, const PackedBatch& batch, const std::vector<float>& tau,
                     std::vector<float>& velocity);
  // Forward and backward of Σ action_mask·(v_θ(x, τ) − (a − ε))² / denominator with the draws
  // given: a = batch.actions, ε = noise [B, Hz, A], so x = (1 − τ)ε + τ·a. batch.action_mask
  // carries a real weight per element (any sign): RL's policy gradient as a weighted regression
  // (rl/flow_sde.hpp), without dropout (the gradient of the policy flow_velocity runs).
  // Gradients accumulate; the loss is read by take_loss().
  void accumulate_flow_regression(const float* params, float* grads, const PackedBatch& batch,
                                  const std::vector<float>& tau, const std::vector<float>& noise, double denominator);

  // Activation bytes of the micro-batch `batch` (its rows: activation_rows) with the blocks'
  // activations in `blocks` (training_blocks_dtype of the run's backend), computed without
  // allocating: a model made without a backend (--plan) measures what a run on any backend holds.
  ActivationBytes activation_bytes(const PackedBatch& batch, DType blocks);
  // The same for a micro-batch of those rows (--plan's, which it does not build: plan_batches.hpp).
  ActivationBytes activation_bytes(const ActivationRows& rows, DType blocks);
  // The bytes of the activation arena, which grows to the largest micro-batch's layout.
  size_t activation_arena_bytes() const { return arena_.capacity(); }

  // Seconds the micro-batches' uploads (DeviceBatch) took since the last call, the step's h2d
  // phase: the host's staging (and its waits for a free input slot) plus the device time the
  // compute stream waited for the copies. Reads the device's clock: call it after the step's
  // synchronisation (take_loss).
  double take_upload_seconds() {
    const double s = upload_seconds_ + dev_.take_copy_wait_seconds();
    upload_seconds_ = 0;
    return s;
  }

  // Runs each micro-batch as CUDA graphs, one per span between unit hooks (graph_segments.hpp;
  // run.cuda_graphs): off by default.
  void use_graphs(bool on) { graphs_ = on; }
  // Micro-batches accumulated so far.
  int64_t micro_batches() const { return micro_batches_; }

  // The draws and token layout of the last forward_backward (what --dump writes).
  const FlowDraws& last_draws() const { return draws_; }
  const TokenLayout& last_layout() const { return layout_; }

 protected:
  // The linear layer `l` as views of this step's parameters / gradients.
  static View W(const ParamAccess& P, const LinearRef& l) { return P.pv(l.weight); }
  static View b(const ParamAccess& P, const LinearRef& l) { return P.pv(l.bias); }
  static View dW(const ParamAccess& P, const LinearRef& l) { return P.gv(l.weight); }
  static View db(const ParamAccess& P, const LinearRef& l) { return P.gv(l.bias); }

  // A micro-batch's loss from the two sums its head's mse_loss calls wrote (MODEL.md):
  //   sums[0] / den0 + (second ? lambda · sums[1] / den1 : 0)
  struct LossTerms {
    double den0 = 1, lambda = 0, den1 = 1;
    bool second = false;
  };

  // What each family supplies. plan_activations lays out every activation of a micro-batch's
  // rows, time_enc_'s and trunk_'s included (measuring when plan has no arena). run() calls
  // the steps in unit order:
  //   encode           unit 0, after time_enc: writes the trunk's x and c
  //   head             the last unit: the loss sums from the trunk's output x into `sums` (two
  //                    doubles in backend memory) and how they make the loss; with backward
  //                    the loss gradient that head_backward starts from
  //   head_backward    adds to the trunk's dx
  //   encode_backward  from the trunk's dx and dc to the encoders' parameters
  // The backward steps may also add to time_enc_'s dtemb and dstemb.
  virtual void plan_activations(ActivationPlan& plan, const ActivationRows& rows) = 0;
  virtual void encode(const ParamAccess& P, const PackedBatch& batch) = 0;
  virtual LossTerms head(const ParamAccess& P, const PackedBatch& batch, const std::vector<double>& denominators,
                         bool backward, double* sums) = 0;
  virtual void head_backward(const ParamAccess& P) = 0;
  virtual void encode_backward(const ParamAccess& P, const PackedBatch& batch) = 0;
  // The last head's per-action-token output in the backend's memory (gr00t: v, rows in
  // layout_.action order).
  virtual const float* action_output() const { return nullptr; }

  ModelConfig cfg_;
  Ops* ops_;
  ParamRegistry reg_;
  std::vector<bool> frozen_;  // freeze(): per tensor of reg_, empty = none
  TokenLayout layout_;
  FlowDraws draws_;
  TimeRows time_rows_;
  DeviceBatch dev_;  // this micro-batch in the backend's memory
  TimeEncoder time_enc_;  // in the encoders' unit: the family registers its parameters among its encoders'
  Trunk trunk_;
  // The unit of the family's encoders: 0, or the first after the trained context's units.
  int encoders_unit_ = 0;
  ContextSource* context_source_ = nullptr;
  ContextParams trained_context_;  // where ModelConfig::trained_context is registered (first_tensor -1 without)
  View context_gradient_;          // encode_backward's gradient of the context rows, for context_source_

 private:
  // Uploads batch and lays out the activations of its shape, the blocks' in `blocks`.
  void prepare(const PackedBatch& batch, DType blocks);
  // The dtype each unit's parameters are read in (ParamAccess) under the current layout.
  std::vector<DType> unit_param_dtypes() const;
  std::vector<int64_t> graph_key(const PackedBatch& batch) const;
  // gr00t: the draws of a forward at explicit flow times tau [B] and noise [B, Hz, A]; then prepare().
  void set_explicit_draws(const PackedBatch& batch, const std::vector<float>& tau, const std::vector<float>& noise);
  // step: the training step (a context source's augmentation draws; 0 outside training).
  void run(ParamAccess& P, bool backward, const PackedBatch& batch, int64_t step,
           const std::vector<double>& denominators);

  Arena arena_;
  // The loss sums of the micro-batches not yet taken: two doubles each (slot i at 2i), read by
  // take_loss, or early when every slot is used (the host then keeps their partial sum).
  static constexpr int kLossSlots = 32;
  OpsBuffer<double> loss_sums_;
  std::vector<LossTerms> pending_losses_;
  double taken_early_ = 0;
  std::optional<ActivationRows> planned_rows_;  // of the layout in arena_
  DType planned_blocks_ = DType::f32;
  double upload_seconds_ = 0;
  bool graphs_ = false;
  GraphSegments segments_;
  int64_t micro_batches_ = 0;
};

// ops: the backend the model computes on; null for a model that only describes itself.
std::unique_ptr<Model> make_model(const ModelConfig& cfg, Ops* ops);

}  // namespace emb
