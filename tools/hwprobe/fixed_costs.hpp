// hwprobe's measurements of the costs no FLOP or byte accounts for (src/plan/hardware.hpp
// FixedCosts): what one Ops call costs the host beyond its work, what the step's host
// allocations cost, and on a GPU what a kernel launch costs with and without a CUDA graph.
// Each returns seconds of one rank, measured alone; hwprobe takes the median over runs and ranks.
#pragma once
#include "kernels/ops.hpp"

namespace emb::probe {

// Host seconds per Ops call of a tiny op (add on [1, 8]): dispatch, shape checks, set-up. On the
// CPU it opens no OpenMP region, as no op below its kernels' thresholds or at one OpenMP thread
// does (kernels/cpu/parallel_for.hpp); while every op call opened one this was 0.35-1.8 µs, all
// but ~30-80 ns of it the region (plan_validation.md round 16).
double op_call_seconds(Ops& ops);

// Seconds per host heap allocation in the step's pattern: vectors of the sizes a micro-batch's
// host code makes (index arrays, staging lists, closures, check messages: mostly 32 B to 1 KiB),
// each written once, freed in the order a scope frees them.
double allocation_seconds();

// Host seconds per N(0, 1) draw of the flow-matching noise (CounterRng::normals in runs of 64, a
// sample's actions or a video token's patch: model/flow_matching.cpp), which the step's forward
// draws on the host, outside every op.
double noise_draw_seconds();

// A GPU's host seconds per kernel launched on the stream, and per kernel node of a CUDA graph
// replayed (the same tiny kernels captured once, then replayed).
struct LaunchCosts {
  double kernel_launch_s = 0, graph_kernel_launch_s = 0;
};
LaunchCosts launch_costs(Ops& ops);

}  // namespace emb::probe
