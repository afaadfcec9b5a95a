#include "train/init_from.hpp"

#include <algorithm>

#include "comm/host_collectives.hpp"
#include "comm/shard_range.hpp"
#include "core/error.hpp"
#include "weights/mapped_tensor.hpp"

namespace emb {
namespace {

// The checkpoint's own errors (a truncated file, a lying header, a missing shard) are input
// the user must fix: exit code 2, as a mismatch with the model is.
WeightSource open_source(const std::string& path) {
  try {
    return WeightSource(path);
  } catch (const Error& e) {
    throw Error(e.what(), kExitInput);
  }
}

std::vector<OurTensor> our_tensors(const ParamRegistry& reg) {
  std::vector<OurTensor> ours;
  for (const ParamInfo& p : reg.all()) ours.push_back({p.name, p.shape});
  return ours;
}

}  // namespace

InitFrom::InitFrom(const std::string& path, const UpstreamNameMap& map, const ParamRegistry& reg,
                   const std::string& what)
    : source_(open_source(path)),
      map_(map),
      matched_(match_upstream(source_, map_, our_tensors(reg), what)) {}

void InitFrom::read_flat(const ParamRegistry& reg, int64_t begin, int64_t end, float* out) const {
  EMB_ASSERT(0 <= begin && begin <= end && end <= reg.total());
  // Tensors lie in offset order: start at the first one ending after `begin`.
  const std::vector<ParamInfo>& all = reg.all();
  auto first = std::upper_bound(all.begin(), all.end(), begin,
                                [](int64_t flat, const ParamInfo& p) { return flat < p.offset + p.numel; });
  for (auto it = first; it != all.end() && it->offset < end; ++it) {
    const int64_t lo = std::max(begin, it->offset) - it->offset, hi = std::min(end, it->offset + it->numel) - it->offset;
    read_in_our_order(source_, matched_.tensors[size_t(it - all.begin())].upstream, lo, hi, out + (it->offset + lo - begin));
  }
}

void InitFrom::read_owned(MPI_Comm comm, const ParamRegistry& reg, const ShardLayout& layout, float* owned) const {
  const int rank = rank_in(comm), size = ranks_in(comm);
  for (int p = 0; p < layout.n_pieces(); ++p) {
    const Piece& k = layout.piece(p);
    if (layout.mode() != ShardMode::none || size == 1) {
      const int64_t begin = k.offset + k.begin;
      read_flat(reg, begin, begin + k.owned_count, owned + k.owned_offset);
      continue;
    }
    // Replicated: a 1/N part each, then every rank gets the others' parts over the network.
    const ShardRange part = shard_range(k.count, rank, size);
    read_flat(reg, k.offset + part.offset, k.offset + part.offset + part.count, owned + k.owned_offset + part.offset);
    all_gather_shards(comm, owned + k.owned_offset, k.count);
  }
}

}  // namespace emb
