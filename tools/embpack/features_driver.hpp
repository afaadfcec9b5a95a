// What the `embpack features` commands share (--backbone: GR00T's Eagle vl features; --dreamzero:
// DreamZero's VAE latents, umT5 text and CLIP image features): each rank reads a share of the
// input's episodes (contiguous, nearly equal steps), computes its features alone, and the ranks
// agree on the outcome before anyone writes, so bad input is one line on every rank (exit 2) and
// no output.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "comm/world.hpp"
#include "packed_data.hpp"

namespace emb {

// This rank's share of `input` (episodes renumbered from 0, /features not read) and the global
// row of its first step (the key of per-step draws, the same on any rank count).
struct EpisodeShare {
  PackedData data;
  int64_t first_step = 0;
};
EpisodeShare read_episode_share(const std::string& input, const World& world);

// The /video views in the order `names` gives (each must be in the file), else the file's; they
// must share one resolution (both commands stack or tile a step's views). Throws emb::Error
// naming `input` and the view.
std::vector<size_t> view_order(const PackedData& p, const std::vector<std::string>& names, const std::string& input);
// "front,wrist": the names of `order`.
std::string joined_names(const PackedData& p, const std::vector<size_t>& order);

// Runs `compute` on this rank and agrees with the others: an emb::Error it throws is input to
// fix (exit 2) unless it is an internal invariant (EMB_ASSERT), which keeps its code; any error on
// any rank is thrown on every rank. Returns the share `compute` made.
PackedData compute_share_agreed(const World& world, const std::function<PackedData()>& compute);

// Over all ranks: the sum of `mine` (steps, rows...) element by element.
std::vector<int64_t> sum_over_ranks(const std::vector<int64_t>& mine, const World& world);

}  // namespace emb
