#include "plan/plan_batches.hpp"

#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "model/synthetic_batch.hpp"

namespace emb {
namespace {

// A layout's batch of some samples, and its activation rows.
struct MemoEntry {
  TokenConfig layout;
  PlanSample shape;
  int samples = 0;
  std::shared_ptr<const PackedBatch> batch;
  ActivationRows rows;
};

// The open scope's batches (a handful: 1 and 2 samples, and the few that span attention's
// tiles, per layout and sample shape), or null.
thread_local std::unique_ptr<std::deque<MemoEntry>> g_memo;

const MemoEntry& memo_entry(const ModelConfig& cfg, int samples, const PlanSample& shape) {
  const TokenConfig& layout = cfg;
  for (const MemoEntry& e : *g_memo)
    if (e.samples == samples && e.shape == shape && e.layout == layout) return e;
  auto batch = std::make_shared<const PackedBatch>(plan_micro_batch(cfg, samples, shape));
  const ActivationRows rows = activation_rows(cfg, *batch);
  g_memo->push_back({layout, shape, samples, std::move(batch), rows});
  return g_memo->back();
}

ActivationRows batch_rows(const ModelConfig& cfg, int samples, const PlanSample& shape) {
  if (g_memo) return memo_entry(cfg, samples, shape).rows;
  return activation_rows(cfg, plan_micro_batch(cfg, samples, shape));
}

}  // namespace

PackedBatch plan_micro_batch(const ModelConfig& c, int samples, const PlanSample& shape, bool with_content) {
  SampleShape typical = typical_sample_shape(c);
  if (shape.context_tokens > 0) typical.n_context = int(shape.context_tokens);
  std::vector<int64_t> ids(static_cast<size_t>(samples));
  for (int i = 0; i < samples; ++i) ids[size_t(i)] = i;
  PackedBatch b = make_batch(c, ids, std::vector<SampleShape>(size_t(samples), typical), true, 0, with_content);
  if (shape.padded_context > typical.n_context) {  // each sample's context, then its padding
    const size_t width = size_t(c.d_ctx), rows = size_t(typical.n_context), padding = size_t(shape.padded_context) - rows;
    const std::vector<float> packed_context = std::move(b.context);
    b.cseq.clear();
    b.context.clear();
    for (int32_t i = 0; i < samples; ++i) {
      b.cseq.insert(b.cseq.end(), rows, i);
      b.cseq.insert(b.cseq.end(), padding, -1);
      if (!with_content) continue;
      const auto sample = packed_context.begin() + std::ptrdiff_t(size_t(i) * rows * width);
      b.context.insert(b.context.end(), sample, sample + std::ptrdiff_t(rows * width));
      b.context.insert(b.context.end(), padding * width, 0.0f);
    }
    b.n_context = int64_t(b.cseq.size());
  }
  return b;
}

std::shared_ptr<const PackedBatch> plan_batch(const ModelConfig& cfg, int samples, const PlanSample& shape) {
  if (g_memo) return memo_entry(cfg, samples, shape).batch;
  return std::make_shared<const PackedBatch>(plan_micro_batch(cfg, samples, shape));
}

ActivationRows plan_activation_rows(const ModelConfig& cfg, int samples, const PlanSample& shape) {
  EMB_ASSERT(samples >= 1);
  const ActivationRows one = batch_rows(cfg, 1, shape);
  if (samples == 1) return one;
  const ActivationRows two = batch_rows(cfg, 2, shape);
  const int64_t n = samples - 1;
  const auto at = [n](int64_t a, int64_t b) { return a + n * (b - a); };
  ActivationRows r;
  r.tokens = at(one.tokens, two.tokens), r.context = at(one.context, two.context);
  r.samples = int(at(one.samples, two.samples));
  r.time_rows = at(one.time_rows, two.time_rows);
  r.video = at(one.video, two.video), r.noisy_video = at(one.noisy_video, two.noisy_video);
  r.actions = at(one.actions, two.actions), r.states = at(one.states, two.states);
  return r;
}

PlanBatchScope::PlanBatchScope() : outermost_(g_memo == nullptr) {
  if (outermost_) g_memo = std::make_unique<std::deque<MemoEntry>>();
}

PlanBatchScope::~PlanBatchScope() {
  if (outermost_) g_memo.reset();
}

}  // namespace emb
