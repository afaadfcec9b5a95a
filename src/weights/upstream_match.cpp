#include "weights/upstream_match.hpp"

#include <set>

#include "core/error.hpp"

namespace emb {

UpstreamMatch match_upstream(const WeightSource& source, const UpstreamNameMap& map, const std::vector<OurTensor>& ours,
                             const std::string& what) {
  auto fail = [&](const std::string& message) { throw Error(str(source.path(), ": ", message), kExitInput); };
  UpstreamMatch result;
  std::vector<MatchedTensor>& matched = result.tensors;
  std::set<std::string> expected;
  for (const OurTensor& t : ours) {
    MatchedTensor m;
    m.ours = t.name;
    try {
      m.upstream = map.upstream_of(t.name, t.shape);
    } catch (const Error& e) {
      fail(str(e.what(), " (", what, ")"));
    }
    const TensorInfo* stored = source.find(m.upstream.name);
    if (!stored)
      fail(str("tensor ", quoted_name(m.upstream.name), " is missing: ", what, " needs it as ", quoted_name(t.name), " ",
               shape_string(t.shape), " (upstream shape ", shape_string(m.upstream.shape), ")"));
    if (stored->shape != m.upstream.shape)
      fail(str("tensor ", quoted_name(m.upstream.name), " is ", shape_string(stored->shape), " in the checkpoint, ",
               what, " needs ", shape_string(m.upstream.shape), " (its ", quoted_name(t.name), " ",
               shape_string(t.shape), ")"));
    if (!converts_to_float(stored->dtype))
      fail(str("tensor ", quoted_name(m.upstream.name), ": dtype ", weight_dtype_name(stored->dtype),
               " (a trained tensor must be F32, BF16 or F16)"));
    m.stored = stored->dtype;
    expected.insert(m.upstream.name);
    matched.push_back(std::move(m));
  }
  for (const TensorInfo& t : source.tensors())
    if (map.is_trained(t.name) && !expected.count(t.name))
      fail(str("tensor ", quoted_name(t.name), " ", shape_string(t.shape), " is not a parameter of ", what,
               " (every tensor under ", quoted_name(map.trained_prefix()), " must be one; check the model's "
               "dimensions against the checkpoint's config.json)"));
  return result;
}

}  // namespace emb
