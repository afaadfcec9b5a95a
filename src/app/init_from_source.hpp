// train.init_from at start-up: the released checkpoint opened on every rank (headers only)
// and checked against the model the deck resolves to, before any output exists, so that a
// truncated file, a header that lies, a missing shard or a tensor that does not fit is one
// line on rank 0 and exit code 2 on every rank, with no run directory and no checkpoint
// directory written (main.cpp's agreed set-up).
#pragma once
#include <memory>

#include "config/run_config.hpp"
#include "train/init_from.hpp"
#include "train/freezing.hpp"

namespace emb {

// Null when train.init_from is unset. Throws emb::Error (exit code 2) naming the file and tensor.
std::unique_ptr<InitFrom> open_init_from(const RunConfig& cfg);

}  // namespace emb
