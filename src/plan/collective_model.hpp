// α–β times of the collectives data parallelism issues (DESIGN.md "Parallelism"), for one
// buffer of `bytes` (the full buffer: an all-gather's output, a reduce-scatter's input) over
// `ranks` ranks laid out `per_node` to a node. Algorithms, p ranks, g per node, m = p/g nodes:
//   ring          all-reduce 2(p−1)·α + 2·(p−1)/p·n/β; all-gather, reduce-scatter half of it.
//                 Across nodes every ring crosses the fabric: α = the NIC's latency, β = the
//                 smaller of the in-node link and the node's NIC bandwidth per device.
//   tree          all-reduce only (NCCL's double binary tree): 2·⌈log2 p⌉·α + 2·n/β, pipelined.
//   hierarchical  reduce-scatter (or all-gather) inside the node over NVLink, the 1/g shard
//                 across the m nodes over each device's own NIC (rail), then all-gather inside.
// One rank copies an out-of-place collective's buffer at memory bandwidth.
// The fastest algorithm is chosen per call, as NCCL's tuner does. Ranks oversubscribing a CPU
// node's cores run at the link and sums' rates measured at such a count (the hardware's
// time_sharing_link, at M ranks: α scaled by p/M, the sums' rate by M/p), or without it at the
// rank-per-core β, with α and the sums' rate over the ranks' share of a core.
#pragma once
#include <string>

#include "plan/hardware.hpp"

namespace emb {

enum class Collective { all_reduce, all_gather, reduce_scatter };
const char* collective_name(Collective c);

struct CollectiveTime {
  double seconds = 0;
  std::string algorithm;  // "ring", "tree", "hierarchical"; on one rank "copy" (out of place) or "none"
};

CollectiveTime collective_time(const Hardware& hw, Collective c, double bytes, int ranks);

}  // namespace emb
