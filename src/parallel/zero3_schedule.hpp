// The buffer counts of ZeRO-3's overlap schedule (DESIGN.md "Parallelism"): DataParallel
// (src/parallel/data_parallel.cpp) runs with them and the planner (step_model.cpp) models them.
#pragma once

namespace emb {

// Gathers run this many buckets ahead of the one computing, so one slow rank or one short
// bucket (e.g. the embeddings) does not expose the next gather.
constexpr int kPrefetchDepth = 2;
// Gathered-bucket slots: computing, prefetched ahead, one spare. With at most this many
// buckets every bucket is gathered once after the update and kept through every micro-batch of
// the step; with more, each pass re-gathers them.
constexpr int kGatherSlots = kPrefetchDepth + 2;
// The bucket in backward plus reduce-scatters still in flight. With only one in flight, each
// bucket's backward waited for the reduce-scatter of the bucket two before it, which a rank
// arriving late at that collective (ranks sharing cores) exposed: 0.2-0.9 s of 1-2.5 s exposed
// over 20 steps in regression/bench_zero3_overlap.sh. The same depth as the gathers absorbs it.
constexpr int kGradSlots = kPrefetchDepth + 2;

}  // namespace emb
