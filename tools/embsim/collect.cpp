#include "collect.hpp"

#include <algorithm>
#include <map>

#include "comm/agreement.hpp"
#include "comm/host_collectives.hpp"
#include "comm/rank_gather.hpp"
#include "packed_writer.hpp"
#include "sim/expert.hpp"
#include "rl/byte_message.hpp"

namespace emb {

namespace {

struct Episode {
  int64_t index = 0;
  int32_t instruction = 0;
  bool success = false;
  int64_t steps = 0;
  std::vector<float> state, action;                // [T, max widths]
  std::vector<std::vector<uint8_t>> frames;        // per view [T, H, W, 3]
  std::vector<uint16_t> vl;                        // feature rows
  std::vector<int64_t> vl_rows;                    // [T] rows per step
};

void write_episode(ByteWriter& w, const Episode& e) {
  w.put(e.index), w.put(e.instruction), w.put(uint8_t(e.success)), w.put(e.steps);
  w.put_vector(e.state), w.put_vector(e.action), w.put(uint64_t(e.frames.size()));
  for (const auto& f : e.frames) w.put_vector(f);
  w.put_vector(e.vl), w.put_vector(e.vl_rows);
}

Episode read_episode(ByteReader& r) {
  Episode e;
  e.index = r.get<int64_t>("index"), e.instruction = r.get<int32_t>("instruction");
  e.success = r.get<uint8_t>("success") != 0;
  e.steps = r.get<int64_t>("steps");
  e.state = r.get_vector<float>("state"), e.action = r.get_vector<float>("action");
  e.frames.resize(size_t(r.get<uint64_t>("frames")));
  for (auto& f : e.frames) f = r.get_vector<uint8_t>("frame");
  e.vl = r.get_vector<uint16_t>("vl"), e.vl_rows = r.get_vector<int64_t>("vl_rows");
  return e;
}

Episode run_episode(Env& env, Expert& expert, ObservationEncoder& obs, const CollectOptions& o, int64_t index) {
  const TaskSpec& t = env.task();
  Episode e;
  e.index = index;
  e.instruction = int32_t(index % int64_t(t.instructions.size()));
  const std::string& text = t.instructions[size_t(e.instruction)];
  env.reset(o.seed, EpisodeSplit::collect, index);
  expert.reset();
  std::vector<float> state(size_t(t.state_dim)), action(size_t(t.action_dim));
  std::vector<std::vector<uint8_t>> frames;
  e.frames.resize(o.observation.views.size());
  while (!env.done()) {
    env.observe(state.data());
    obs.render(env, frames);
    size_t before = e.vl.size();
    obs.features(frames, text, e.vl);
    e.vl_rows.push_back(int64_t(e.vl.size() - before) / o.observation.d_vl);
    for (size_t v = 0; v < frames.size(); ++v) e.frames[v].insert(e.frames[v].end(), frames[v].begin(), frames[v].end());
    expert.act(env, action.data());
    e.state.insert(e.state.end(), state.begin(), state.end());
    e.state.resize(e.state.size() + size_t(max_state_dim() - t.state_dim), 0.f);
    e.action.insert(e.action.end(), action.begin(), action.end());
    e.action.resize(e.action.size() + size_t(max_action_dim() - t.action_dim), 0.f);
    env.step(action.data());
    ++e.steps;
  }
  e.success = env.success();
  return e;
}

PackedData assemble(const TaskSpec& t, const CollectOptions& o, const std::vector<Episode>& episodes, int h, int w) {
  PackedData p;
  p.family = "gr00t";
  p.fps = 25;  // 0.04 s control steps
  p.source = str("embsim:", t.name, ":seed=", o.seed);
  p.state_dim = max_state_dim(), p.action_dim = max_action_dim();
  for (const TaskSpec& other : all_tasks())
    p.embodiment_state_dim.push_back(other.state_dim), p.embodiment_action_dim.push_back(other.action_dim);
  p.task_text = t.instructions;
  VarlenFeatures& vl = p.features["vl"];
  vl.dim = o.observation.d_vl;
  for (const std::string& name : o.observation.views) {
    VideoView v;
    v.name = name, v.height = h, v.width = w;
    p.videos.push_back(v);
  }
  for (const Episode& e : episodes) {
    if (!e.success) continue;
    p.add_episode(e.steps, e.instruction, t.embodiment);
    p.state.insert(p.state.end(), e.state.begin(), e.state.end());
    p.action.insert(p.action.end(), e.action.begin(), e.action.end());
    for (int64_t s = 0; s < e.steps; ++s) {
      p.reward.push_back(s == e.steps - 1 ? 1.f : 0.f);
      p.done.push_back(s == e.steps - 1 ? 1 : 0);
    }
    for (size_t v = 0; v < p.videos.size(); ++v)
      p.videos[v].frames.insert(p.videos[v].frames.end(), e.frames[v].begin(), e.frames[v].end());
    vl.values.insert(vl.values.end(), e.vl.begin(), e.vl.end());
    for (int64_t rows : e.vl_rows) vl.offsets.push_back(vl.offsets.back() + rows);
  }
  EMB_CHECK(p.episodes() > 0, "collect ", t.name, ": the expert succeeded in none of ", episodes.size(), " episodes");
  return p;
}

}  // namespace

int max_state_dim() {
  int d = 0;
  for (const TaskSpec& t : all_tasks()) d = std::max(d, t.state_dim);
  return d;
}

int max_action_dim() {
  int d = 0;
  for (const TaskSpec& t : all_tasks()) d = std::max(d, t.action_dim);
  return d;
}

CollectSummary collect(MPI_Comm comm, const CollectOptions& o, const std::string& created_by) {
  const int rank = rank_in(comm), size = ranks_in(comm);
  const TaskSpec* task = nullptr;
  int height = 0, width = 0;
  ByteWriter mine;
  run_agreed(comm, [&] {
    task = &task_spec(o.task);
    EMB_CHECK(o.episodes >= 1, "collect: --episodes must be at least 1");
    auto model = load_task_model(*task, o.mjcf_dir);
    Env env(*task, model);
    Expert expert;
    StandInVlEncoder stand_in(o.observation.d_vl, o.observation.vl_grid);
    ObservationEncoder obs(o.observation, model.get(), &stand_in);
    height = obs.height(), width = obs.width();
    for (int64_t i = rank; i < o.episodes; i += size) write_episode(mine, run_episode(env, expert, obs, o, i));
  });
  std::vector<std::vector<uint8_t>> blobs = gather_bytes(comm, mine.take());
  CollectSummary summary;
  run_agreed(comm, [&] {
    if (rank != 0) return;
    std::vector<Episode> episodes;
    for (const auto& blob : blobs)
      for (ByteReader r(blob); !r.done();) episodes.push_back(read_episode(r));
    std::sort(episodes.begin(), episodes.end(), [](const Episode& a, const Episode& b) { return a.index < b.index; });
    for (const Episode& e : episodes)
      summary.episodes += 1, summary.successes += e.success, summary.steps += e.success ? e.steps : 0;
    write_packed(assemble(*task, o, episodes, height, width), o.output, created_by);
  });
  return summary;
}

}  // namespace emb
