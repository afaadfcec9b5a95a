// Moving one tensor between our layout and upstream's (upstream_map.hpp): a ZeRO rank reads
// only the element range of our tensor that it owns, straight from the checkpoint's mapping;
// an export writes a whole tensor in upstream's order.
//
// Cost of a range read: a layout that keeps the element order (same, squeeze) is one
// contiguous read of exactly the range. A transposed one (linear: ours [in, out] from
// upstream [out, in]; patch likewise) is not contiguous upstream: our rows i0..i1 are the
// columns i0..i1 of every upstream row, so the read takes, from each of the `out` upstream
// rows, the run of columns covering the range — (i1 − i0 + 1)·out elements, about the range
// itself plus one partial row — but the pages touched are those holding any of these runs:
// when one run is shorter than a page (4 KiB: 1024 F32 or 2048 BF16 elements, i.e. at many
// ranks), every page of the tensor holding an upstream row is touched, so a transposed
// tensor is read from storage about min(1, ranks · 4 KiB / row bytes) times over the job
// instead of once. Ranks of one node read adjacent shards through one page cache, which
// shares those pages; the file system sees each transposed tensor roughly once per node.
#pragma once
#include <cstdint>
#include <vector>

#include "weights/upstream_map.hpp"
#include "weights/weight_source.hpp"

namespace emb {

// Elements [begin, end) of our row-major tensor (`numel` elements) whose upstream tensor is
// `t` (t.shape is what the source holds), converted to float32 into out[0, end - begin).
void read_in_our_order(const WeightSource& source, const UpstreamTensor& t, int64_t begin, int64_t end, float* out);

// The whole tensor `ours` (our order) in upstream's order, into `upstream` (as many elements).
void to_upstream_order(const UpstreamTensor& t, const float* ours, float* upstream);

}  // namespace emb
