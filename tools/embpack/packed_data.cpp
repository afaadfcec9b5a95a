#include "packed_data.hpp"

namespace emb {

void PackedData::add_episode(int64_t len, int32_t task, int32_t embodiment) {
  episode_offsets.push_back(episode_offsets.back() + len);
  episode_task.push_back(task);
  episode_embodiment.push_back(embodiment);
}

}  // namespace emb
