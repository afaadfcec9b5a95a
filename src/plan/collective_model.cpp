#include "plan/collective_model.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace emb {
namespace {

// One ring pass (all-gather or reduce-scatter) of n bytes over p ranks.
double ring_pass(double n, int p, const LinkSpec& link) {
  return (p - 1) * link.latency_s + double(p - 1) / p * n / link.bytes_per_s;
}

double pass_time(Collective c, double n, int p, const LinkSpec& link) {
  return (c == Collective::all_reduce ? 2 : 1) * ring_pass(n, p, link);
}

// The links' part: α–β passes of the algorithms, the fastest chosen.
CollectiveTime transfer_time(const Hardware& hw, Collective c, double n, int p) {
  // One rank: the out-of-place collectives (comm_mpi.cpp's, NCCL's) still copy the buffer
  // through memory; the in-place all-reduce does nothing.
  if (p == 1) return c == Collective::all_reduce ? CollectiveTime{0, "none"} : CollectiveTime{n / hw.memory_bytes_per_s, "copy"};
  if (ranks_time_share_cores(hw, p)) {
    // More ranks than cores: a collective advances only while its peers hold a core, so each
    // hop waits for a time slice. Measured at that count (time_sharing_link, at M ranks): its
    // pass as measured, the hops' waits scaled by p/M. Otherwise the rank-per-core link with each
    // hop's latency over the ranks' share of a core and the cores' bandwidth, not shared
    // further: the ranks in a collective wait in it and leave the cores to its copies (an
    // estimate: 24 MiB gathered by 4 ranks on the first VM's 2 cores at 2.5 GB/s a ring pass,
    // 2.9-3.2 by 2 ranks, round 23; on this one 2.3-2.4 against 3.1-4.8, session 18).
    Hardware shared = hw;
    shared.intra_node = time_sharing_link_measured(hw)
                            ? LinkSpec{hw.time_sharing_link.bytes_per_s,
                                       hw.time_sharing_link.latency_s * p / hw.rank_imbalance_ranks}
                            : LinkSpec{hw.intra_node.bytes_per_s, hw.intra_node.latency_s / device_share(hw, p)};
    shared.devices_per_node = p;
    return transfer_time(shared, c, n, p);
  }
  const int g = hw.ranks_share_node ? p : std::min(p, hw.devices_per_node);
  const int m = (p + g - 1) / g;
  if (m == 1) {
    CollectiveTime best{pass_time(c, n, p, hw.intra_node), "ring"};
    if (c == Collective::all_reduce) {
      const double tree = 2 * std::ceil(std::log2(p)) * hw.intra_node.latency_s + 2 * n / hw.intra_node.bytes_per_s;
      if (tree < best.seconds) best = {tree, "tree"};
    }
    return best;
  }
  if (hw.nics_per_node <= 0 || hw.inter_node.bytes_per_s <= 0)
    throw Error(str(hw.path, ": ", p, " ranks need ", m, " nodes, and this hardware file has no inter_node fabric"),
                kExitInput);
  // The fabric's bandwidth per device when every device of a node sends at once.
  const double nic_per_device = hw.inter_node.bytes_per_s * std::min(1.0, double(hw.nics_per_node) / g);
  const LinkSpec flat{std::min(hw.intra_node.bytes_per_s, nic_per_device), hw.inter_node.latency_s};
  const LinkSpec rail{nic_per_device, hw.inter_node.latency_s};
  CollectiveTime best{pass_time(c, n, p, flat), "ring"};
  if (c == Collective::all_reduce) {
    const double tree = 2 * std::ceil(std::log2(p)) * flat.latency_s + 2 * n / flat.bytes_per_s;
    if (tree < best.seconds) best = {tree, "tree"};
  }
  // In the node: the pass over n; across nodes: the same collective over the 1/g shard.
  const double in_node = c == Collective::all_reduce ? 2 * ring_pass(n, g, hw.intra_node) : ring_pass(n, g, hw.intra_node);
  const double shard = n / g;
  double across = pass_time(c, shard, m, rail);
  if (c == Collective::all_reduce)
    across = std::min(across, 2 * std::ceil(std::log2(m)) * rail.latency_s + 2 * shard / rail.bytes_per_s);
  if (in_node + across < best.seconds) best = {in_node + across, "hierarchical"};
  return best;
}

}  // namespace

const char* collective_name(Collective c) {
  switch (c) {
    case Collective::all_reduce: return "all_reduce";
    case Collective::all_gather: return "all_gather";
    case Collective::reduce_scatter: return "reduce_scatter";
  }
  return "?";
}

CollectiveTime collective_time(const Hardware& hw, Collective c, double n, int p) {
  EMB_ASSERT(p >= 1);
  if (n <= 0) return {0, "none"};
  CollectiveTime t = transfer_time(hw, c, n, p);
  // The sums of a reduction: (p−1)/p·n bytes per rank, whatever the algorithm, at the rate
  // measured for the buffer's size (MPI sums a small buffer far faster than a large one), on
  // the rank's share of a core: the time-sharing rate measured at M ranks scaled by M/p, or the
  // rank-per-core rate by the share.
  const double rate = ranks_time_share_cores(hw, p) && time_sharing_link_measured(hw)
                          ? time_sharing_reduce_rate(hw, n) * hw.rank_imbalance_ranks / p
                          : reduce_rate(hw, n) * device_share(hw, p);
  if (c != Collective::all_gather && rate > 0 && p > 1) t.seconds += double(p - 1) / p * n / rate;
  return t;
}

}  // namespace emb
