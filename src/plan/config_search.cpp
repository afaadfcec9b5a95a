#include "plan/config_search.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "plan/model_cost.hpp"
#include "plan/plan_batches.hpp"

namespace emb {

std::vector<StepPrediction> rank_configurations(const Hardware& hw, const Workload& deck) {
  const PlanBatchScope batches;  // the configurations' samples are the deck's: built once
  const StepPrediction as_deck = predict_step(hw, deck);
  // The model's elementwise work once per recompute mode: nothing else the search varies changes
  // the ops the model issues.
  std::map<Recompute, std::shared_ptr<const ElementwiseFit>> elementwise;
  for (Recompute recompute : {Recompute::none, Recompute::selective, Recompute::full}) {
    Workload w = deck;
    w.model.recompute = recompute;
    elementwise[recompute] = recompute == deck.model.recompute && deck.elementwise ? deck.elementwise
                                                                                   : model_elementwise_work(hw, w);
  }
  // A packed deck runs a configuration's micro-batch as data.tokens_per_mb = its samples' tokens,
  // which must hold the data's longest sample (the loader refuses less): smaller ones are not offered.
  const int64_t query_tokens = make_plan(deck.model, deck.ranks, 1, deck.sample).tokens_per_sample;
  const int64_t sample_tokens = as_deck.tokens_per_mb / as_deck.samples_per_mb;
  const int64_t least_tokens = deck.packing && deck.longest_context > 0 ? query_tokens + deck.longest_context : 0;
  std::set<int64_t> micro_batches{as_deck.samples_per_mb};
  for (int64_t mb = 1; mb <= as_deck.samples_per_rank; mb *= 2)
    if (mb * sample_tokens >= least_tokens) micro_batches.insert(mb);
  const std::set<double> buckets{deck.bucket_bytes, 25.0 * (1 << 20), 100.0 * (1 << 20), 400.0 * (1 << 20)};
  std::vector<StepPrediction> all;
  for (ShardMode shard : {ShardMode::none, ShardMode::grads, ShardMode::full})
    for (Recompute recompute : {Recompute::none, Recompute::selective, Recompute::full})
      for (int64_t mb : micro_batches)
        for (double bucket : buckets) {
          Workload w = deck;
          w.shard = shard;
          w.model.recompute = recompute;
          w.elementwise = elementwise.at(recompute);
          w.packing = false;  // micro-batches of mb samples, as packing gives on equal samples
          w.micro_batch = mb;
          w.bucket_bytes = bucket;
          StepPrediction s = predict_step(hw, w);
          // Bucket sizes that give the same buckets (units are never split) are one configuration.
          const bool seen = std::any_of(all.begin(), all.end(), [&](const StepPrediction& o) {
            return o.w.shard == s.w.shard && o.w.model.recompute == recompute && o.samples_per_mb == s.samples_per_mb &&
                   o.buckets == s.buckets;
          });
          if (!seen) all.push_back(s);
        }
  std::stable_sort(all.begin(), all.end(), [](const StepPrediction& a, const StepPrediction& b) {
    if (a.fits != b.fits) return a.fits;
    return a.step_s < b.step_s;
  });
  return all;
}

}  // namespace emb
