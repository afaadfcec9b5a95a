// Reads episodes [first, last) of an `embpack/1` file back into a PackedData (offsets from 0
// within the share), with everything write_packed needs to lay the file out again: the
// converters that rewrite a packed file (`embpack features`) read their rank's share with it.
// Serial reads (each rank opens the file read-only itself); the whole file is verified first.
#pragma once
#include <cstdint>
#include <string>

#include "packed_data.hpp"

namespace emb {

struct PackedShareRequest {
  int64_t first_episode = 0, last_episode = -1;  // -1: to the end
  bool videos = true;                            // read /video/<view> rows
  bool features = true;                          // read /features/<name> rows
};

PackedData read_packed_share(const std::string& path, const PackedShareRequest& request);

// Episode ranges of `ranks` contiguous shares of nearly equal step counts (the episodes'
// offsets [E + 1]): share r is [bounds[r], bounds[r + 1]).
std::vector<int64_t> balanced_episode_shares(const std::vector<int64_t>& episode_offsets, int ranks);

}  // namespace emb
