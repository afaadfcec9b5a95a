#include "features_driver.hpp"

#include "comm/agreement.hpp"
#include "comm/rank_gather.hpp"
#include "core/error.hpp"
#include "data/h5_file.hpp"
#include "data/packed_format.hpp"
#include "packed_reader.hpp"

namespace emb {

EpisodeShare read_episode_share(const std::string& input, const World& world) {
  const std::vector<int64_t> episode_offsets = H5File::open(input).read_all<int64_t>(packed::kEpisodeOffsets);
  const std::vector<int64_t> shares = balanced_episode_shares(episode_offsets, world.size);
  PackedShareRequest request;
  request.first_episode = shares[size_t(world.rank)], request.last_episode = shares[size_t(world.rank) + 1];
  request.features = false;
  EpisodeShare share;
  share.data = read_packed_share(input, request);
  share.first_step = episode_offsets[size_t(request.first_episode)];
  return share;
}

std::vector<size_t> view_order(const PackedData& p, const std::vector<std::string>& names, const std::string& input) {
  std::vector<size_t> order;
  if (names.empty()) {
    for (size_t v = 0; v < p.videos.size(); ++v) order.push_back(v);
  } else {
    for (const std::string& name : names) {
      size_t v = 0;
      while (v < p.videos.size() && p.videos[v].name != name) ++v;
      if (v == p.videos.size()) throw Error(str(input, ":", packed::kVideo, "/", name, ": missing (--views)"), kExitInput);
      order.push_back(v);
    }
  }
  if (order.empty()) throw Error(str(input, ":", packed::kVideo, ": no camera frames to compute features from"), kExitInput);
  const VideoView& first = p.videos[order[0]];
  for (size_t v : order)
    if (p.videos[v].height != first.height || p.videos[v].width != first.width)
      throw Error(str(input, ":", packed::kVideo, "/", p.videos[v].name, ": frames ", p.videos[v].height, "x",
                      p.videos[v].width, " differ from /video/", first.name, "'s ", first.height, "x", first.width,
                      " (a step's views are stacked or tiled: they must share one resolution)"),
                  kExitInput);
  return order;
}

std::string joined_names(const PackedData& p, const std::vector<size_t>& order) {
  std::string s;
  for (size_t v : order) s += (s.empty() ? "" : ",") + p.videos[v].name;
  return s;
}

PackedData compute_share_agreed(const World& world, const std::function<PackedData()>& compute) {
  PackedData share;
  std::string error;
  int code = kExitFailure;
  try {
    share = compute();
  } catch (const Error& e) {
    // Everything a features command refuses is input to fix (the file, its frames, the
    // checkpoint, the tokenizer, the options): exit 2, as the readers' own errors are plain; an
    // internal invariant (EMB_ASSERT) keeps its code.
    error = e.what();
    code = error.find(": internal error: ") == std::string::npos ? kExitInput : e.exit_code();
  } catch (const std::exception& e) {
    error = e.what();
  }
  throw_if_any_rank_failed(world.comm, error, code);
  return share;
}

std::vector<int64_t> sum_over_ranks(const std::vector<int64_t>& mine, const World& world) {
  const std::vector<int64_t> all = gather_to_all(mine, world.comm);
  std::vector<int64_t> sum(mine.size(), 0);
  for (size_t i = 0; i < all.size(); ++i) sum[i % mine.size()] += all[i];
  return sum;
}

}  // namespace emb
