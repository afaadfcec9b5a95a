// Pairs a model's tensors with a released checkpoint's, both ways: every tensor we train has
// its upstream tensor in the checkpoint with the shape the map's layout gives, and every
// checkpoint tensor under the family's trained prefix is one of ours (a tensor we would
// silently drop would make an export differ from what was loaded). The rest of the checkpoint
// (the frozen encoders) is passed through by an export and ignored by training.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "weights/upstream_map.hpp"
#include "weights/weight_source.hpp"

namespace emb {

struct OurTensor {
  std::string name;             // MODEL.md name
  std::vector<int64_t> shape;   // our layout
};

struct MatchedTensor {
  std::string ours;
  UpstreamTensor upstream;  // shape as in the checkpoint
  WeightDType stored = WeightDType::F32;
};

struct UpstreamMatch {
  std::vector<MatchedTensor> tensors;  // one per tensor of `ours`, in its order
};

// Pairs `ours` with the checkpoint. Throws emb::Error (exit code 2) in one line naming the
// checkpoint and the tensor at fault, with both shapes where they differ: a tensor missing
// from the checkpoint, an extra tensor under the trained prefix, a shape mismatch, a dtype
// that is not F32, BF16 or F16. `what` names our side in messages.
UpstreamMatch match_upstream(const WeightSource& source, const UpstreamNameMap& map, const std::vector<OurTensor>& ours,
                             const std::string& what);

}  // namespace emb
