// One environment of a task (task.hpp): its own mjData over a model shared by every
// environment of the task on this rank. reset() draws the initial state from the counter RNG
// keyed by (seed, split, task, episode): the same key gives the same episode bit for bit on
// any rank, and collection and evaluation episodes never share a key (EpisodeSplit).
#pragma once
#include <mujoco/mujoco.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/task.hpp"

namespace emb {

// Which family of initial states an episode comes from: demonstrations are collected on
// `collect` episodes and policies evaluated on `eval` ones, so no evaluation episode was seen
// in training whatever seeds the command lines choose.
enum class EpisodeSplit : uint64_t { collect = 0, eval = 1 };

// mj_loadXML of <mjcf_dir>/<task's file>; throws emb::Error naming the file when it is
// missing or does not compile.
std::shared_ptr<const mjModel> load_task_model(const TaskSpec& task, const std::string& mjcf_dir);

class Env {
 public:
  Env(const TaskSpec& task, std::shared_ptr<const mjModel> model);
  ~Env();
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;

  const TaskSpec& task() const { return task_; }
  const mjModel* model() const { return model_.get(); }
  const mjData* data() const { return data_; }

  void reset(uint64_t seed, EpisodeSplit split, int64_t episode);
  // Applies one action (task.action_dim values, clipped to [-1, 1]) for one control step.
  void step(const float* action);
  // task.state_dim values (layout in task.hpp).
  void observe(float* state) const;
  bool success() const;
  bool done() const { return success() || steps_ >= task_.max_steps; }
  // Whether the physics diverged since reset: a non-finite position or velocity, or MuJoCo
  // found one (mjWARN_BADQPOS/QVEL/QACC) and reset the data itself, so the state no longer
  // follows from the actions.
  bool diverged() const;
  int steps() const { return steps_; }

  // Positions the scripted experts and the success test read (world frame).
  std::array<double, 3> tip() const;    // reach: ee; push: finger tip; pick_place: between the fingers
  std::array<double, 3> hand_target() const;  // the mocap the hand follows
  std::array<double, 3> block() const;
  std::array<double, 3> goal() const;
  double gripper_closure() const;  // pick_place: finger slide, 0 open .. 0.04 closed

 private:
  void set_joint(const char* name, double value);
  std::array<double, 3> body_pos(int body) const;
  std::array<double, 3> control_point() const;  // where the mocap constraint holds the arm

  const TaskSpec& task_;
  std::shared_ptr<const mjModel> model_;
  mjData* data_ = nullptr;
  int steps_ = 0, substeps_ = 0;
  int ee_site_ = -1, link3_ = -1, hand_ = -1, block_body_ = -1, block_joint_ = -1, goal_body_ = -1;
  int hand_mocap_ = -1, goal_mocap_ = -1;
  double block_rest_z_ = 0.02;
};

}  // namespace emb
