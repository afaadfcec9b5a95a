// The released checkpoint a run starts from (train.init_from, README "Fine-tuning released
// weights"): GR00T-N1.5's folder (model.safetensors + config.json), DreamZero's shards and
// index, or one .safetensors file with its config.json beside it. Opening reads headers only
// and checks that the checkpoint holds exactly the model's tensors under upstream's names
// (weights/upstream_match.hpp); the data are read later, by each rank for the elements its
// shards own (read_owned), so ZeRO-3 at 1024 ranks never has a rank read the whole
// checkpoint, and in upstream's layouts converted on the fly (weights/mapped_tensor.hpp has
// the cost of the transposed ones).
#pragma once
#include <mpi.h>

#include <string>
#include <vector>

#include "model/param_registry.hpp"
#include "parallel/shard_layout.hpp"
#include "weights/upstream_map.hpp"
#include "weights/upstream_match.hpp"
#include "weights/weight_source.hpp"

namespace emb {

class InitFrom {
 public:
  // Throws emb::Error (exit code 2) in one line naming the file and tensor at fault: a file
  // that is missing, truncated or corrupt, an index naming a missing shard, a tensor missing,
  // extra or of another shape than reg's (both shapes named). `what` names the model.
  InitFrom(const std::string& path, const UpstreamNameMap& map, const ParamRegistry& reg, const std::string& what);

  const std::string& path() const { return source_.path(); }
  const WeightSource& source() const { return source_; }
  const UpstreamNameMap& map() const { return map_; }
  // Per registry tensor, in the registry's order.
  const std::vector<MatchedTensor>& tensors() const { return matched_.tensors; }

  // Collective over comm. This rank's owned parameters of `layout` (layout.owned_total()
  // floats; the flat buffer without sharding, where each rank reads 1/N of every bucket and
  // the pieces are all-gathered).
  void read_owned(MPI_Comm comm, const ParamRegistry& reg, const ShardLayout& layout, float* owned) const;
  // Elements [begin, end) of the flat parameter buffer, into out[0, end - begin).
  void read_flat(const ParamRegistry& reg, int64_t begin, int64_t end, float* out) const;

 private:
  WeightSource source_;
  UpstreamNameMap map_;
  UpstreamMatch matched_;
};

}  // namespace emb
