#include "train/train_step.hpp"

#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "comm/agreement.hpp"
#include "core/error.hpp"
#include "core/log.hpp"

namespace emb {
namespace {

// The MODEL.md name of the first parameter (in flat order) whose summed gradient is not finite
// on any rank, or "" when every gradient is finite. A collective; only on the way to stopping.
std::string first_nonfinite_gradient(DataParallel& dp, const ParamRegistry& reg, Comm& comm) {
  const ShardLayout& layout = dp.layout();
  std::vector<float> owned(size_t(layout.owned_total()));
  dp.download_owned_grads(owned.data());
  const int64_t none = std::numeric_limits<int64_t>::max();
  int64_t first = none;  // flat index; pieces run in flat order
  for (int p = 0; p < layout.n_pieces() && first == none; ++p) {
    const Piece& k = layout.piece(p);
    for (int64_t j = 0; j < k.owned_count && first == none; ++j)
      if (!std::isfinite(owned[size_t(k.owned_offset + j)])) first = k.offset + k.begin + j;
  }
  first = comm.min_over_ranks(first);
  for (const ParamInfo& p : reg.all())
    if (first >= p.offset && first < p.offset + p.numel) return p.name;
  return "";
}

}  // namespace

StepResult train_step(StepContext& ctx, const std::vector<PackedBatch>& all_micro_batches, int64_t step, double lr) {
  const ModelConfig& mc = ctx.model.config();
  // The loader pads every rank to the same micro-batch count with empty batches; those
  // become empty passes below.
  std::vector<const PackedBatch*> micro_batches;
  for (const PackedBatch& mb : all_micro_batches)
    if (mb.n_samples > 0) micro_batches.push_back(&mb);
  // The loss is normalised by the real elements of the whole global batch, so the update
  // does not depend on how samples were split over micro-batches and ranks.
  std::vector<double> denominators(mc.family == Family::gr00t ? 1 : 2, 0.0);
  double sums[4] = {0, 0, 0, 0};  // loss, samples, tokens, computed tokens
  for (const PackedBatch* mb : micro_batches) {
    std::vector<double> counts = ctx.model.loss_counts(*mb);
    for (size_t i = 0; i < counts.size(); ++i) denominators[i] += counts[i];
    sums[1] += mb->n_samples;
    sums[2] += double(mb->n_real_tokens);
    sums[3] += double(mb->n_tokens + mb->n_context);
  }
  ctx.comm.sum_over_ranks(denominators.data(), int(denominators.size()));
  const int n_local = int(micro_batches.size());
  const int n_max = int(ctx.comm.max_over_ranks(n_local));

  DataParallel& dp = ctx.dp;
  dp.begin_step();
  const int rank = ctx.comm.rank();
  if (step == ctx.inject_nan_step && rank == 0) dp.inject_nan();
  for (int i = 0; i < n_local; ++i) {
    dp.begin_micro_batch(i == n_local - 1);
    if (ctx.slow_micro_batch_s > 0)  // inside fwd: the regression compare must see a slower forward
      std::this_thread::sleep_for(std::chrono::duration<double>(ctx.slow_micro_batch_s));
    ctx.model.accumulate(nullptr, nullptr, *micro_batches[size_t(i)], step, ctx.seed, denominators, &dp);
    dp.end_micro_batch();
  }
  // ZeRO-3 gathers and reduces per micro-batch: ranks with fewer micro-batches still take
  // part in every collective of the others.
  if (dp.layout().mode() == ShardMode::full)
    for (int i = n_local; i < n_max; ++i) dp.run_empty_pass(i == n_max - 1);
  dp.finish_gradients();
  sums[0] = ctx.model.take_loss();  // the step's one read of the loss from the backend
  // The uploads ran inside the micro-batches' forward; timed there, counted as h2d (after the
  // read: no wait of its own).
  ctx.timers.move(Phase::fwd, Phase::h2d, ctx.model.take_upload_seconds());
  ctx.comm.sum_over_ranks(sums, 4);

  StepResult r;
  r.loss = sums[0], r.samples = sums[1], r.tokens = sums[2], r.computed_tokens = sums[3];
  {
    ScopedPhase optim(ctx.timers, Phase::optim);
    r.grad_norm = ctx.optimizer.global_grad_norm(dp.owned_grads(), ctx.comm.host_comm());
    const bool finite = std::isfinite(r.grad_norm) && std::isfinite(r.loss);
    // Loss and norm are global: every rank decides alike, and rank 0 says it once.
    if (!finite && !ctx.skip_nonfinite) {
      const std::string tensor = first_nonfinite_gradient(dp, ctx.model.params(), ctx.comm);
      throw AgreedError(str("step ", step, ": non-finite ", std::isfinite(r.loss) ? "gradient norm" : "loss",
                            " (loss ", r.loss, ", grad norm ", r.grad_norm,
                            tensor.empty() ? "" : "; first non-finite gradient: " + tensor,
                            "); stopping (set train.nan_policy = skip to skip such steps)"));
    }
    if (finite) {
      ctx.optimizer.step(dp.owned_params(), dp.owned_grads(), step, lr, r.grad_norm);
      r.updated = true;
    } else if (rank == 0) {
      log_warn("step ", step, ": non-finite loss or gradient (loss ", r.loss, ", grad norm ", r.grad_norm,
               "); update skipped");
    }
  }
  ctx.timers.add(Phase::comm_total, dp.take_comm_seconds());
  if (r.updated) dp.publish_params();
  return r;
}

}  // namespace emb
