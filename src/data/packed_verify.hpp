// Checks a packed file against every invariant of the format (packed_format.hpp): the
// format attribute, dtypes and shapes of every array, offsets that start at 0, never
// decrease and end at the row count, ids in range, finite values everywhere (data and
// statistics), per-family required arrays. `embpack verify` and the tests use it; the
// loader runs verify_structure on open, and training's start-up check verify_small_values
// (once, on rank 0).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "data/h5_file.hpp"

namespace emb {

struct PackedSummary {
  std::string family, source, created_by;
  double fps = 0;
  int64_t episodes = 0, steps = 0, tasks = 0, embodiments = 0;
  int64_t state_dim = 0, action_dim = 0;
  std::vector<std::string> latent_views, video_views, features;
};

// Shapes, dtypes, attributes, offsets, task and embodiment ids and per-embodiment widths
// (reads only the small index arrays).
PackedSummary verify_structure(const H5File& f);
// verify_structure plus the values of the small arrays: statistics, rewards and wan text
// features finite, done flags 0/1, task token ids in range. What training checks at start-up,
// so it refuses before step 1 what embpack verify refuses; the bulk rows (state, action, vl
// features, latents) it checks as it reads them.
PackedSummary verify_small_values(const H5File& f);
// verify_structure plus every value: finite data and stats, token ids in range.
PackedSummary verify_packed(const H5File& f);

// The bulk arrays of a packed file, whose values only a full verify reads: /steps/state and
// /steps/action (f32), then every array of /features and /latents (f16; not the *_offsets), in
// that order; rows and elements per row as stored.
struct BulkArray {
  std::string name;
  Elem elem = Elem::f32;
  int64_t rows = 0, row_elems = 0;
};
std::vector<BulkArray> bulk_arrays(const H5File& f);
// Checks rows [begin, end) of `a` finite, reading at most ~16 MB at a time (throws "FILE:DS:
// non-finite value at row R"), and returns the CRC-32 (zlib's) of their bytes chained on `crc`.
uint32_t check_bulk_rows(const H5File& f, const BulkArray& a, int64_t begin, int64_t end, uint32_t crc);

// Offsets of `rows` varlen rows over `total` elements: [rows+1], 0 first, non-decreasing
// (strictly increasing when `nonempty`), `total` last.
void check_offsets(const H5File& f, const std::string& ds, const std::vector<int64_t>& offsets, int64_t rows,
                   int64_t total, bool nonempty);

}  // namespace emb
