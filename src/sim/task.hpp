// The manipulation tasks of the closed loop (CLOSED_LOOP.md "Simulation"): what each one is,
// independent of any running simulation. Observation layouts (state, fp32; "rel" rows are
// 5 × the vector between two points, the differences the experts act on, in units of 20 cm):
//   reach       [12]  j1 j2 j3 | ee x y z | goal x y z | rel goal − ee
//   push        [22]  j1 j2 j3 | finger tip x y z | block x y z, quat w x y z | goal x y z |
//                     rel block − tip | rel goal − block
//   pick_place  [24]  j1 j2 j3 lift | gripper closure (0 open, 1 closed) | fingertip centre
//                     x y z | block x y z, quat w x y z | goal x y z | rel block − tip |
//                     rel goal − block
// Actions are in [-1, 1]: (dx, dy) for reach and push, (dx, dy, dz, grip) for pick_place;
// a move of 1 shifts the hand's mocap target by `max_move` metres (Meta-World's control),
// grip −1 opens the gripper and +1 closes it.
// Success (checked after every step; the episode ends at the first success):
//   reach       ‖ee − goal‖ ≤ 0.05 m                     (Meta-World reach-v2)
//   push        ‖block_xy − goal_xy‖ ≤ 0.05 m            (Meta-World push-v2)
//   pick_place  ‖block − goal‖ ≤ 0.07 m and the block is ≥ 0.04 m above its resting height
//               (Meta-World pick-place-v2's threshold; robosuite Lift's lift criterion)
#pragma once
#include <string>
#include <vector>

namespace emb {

struct TaskSpec {
  std::string name;
  std::string mjcf_file;   // file name inside the MJCF directory
  int embodiment = 0;      // the packed files' embodiment id (one per arm variant)
  int state_dim = 0, action_dim = 0;
  int max_steps = 0;       // control steps per episode
  double max_move = 0;     // metres of mocap motion per unit action per control step
  double success_radius = 0;
  std::vector<std::string> instructions;  // [0] is the canonical one, the rest paraphrases
};

// Every task, in embodiment order.
const std::vector<TaskSpec>& all_tasks();
// Throws emb::Error (exit 2) naming the known tasks when `name` is not one.
const TaskSpec& task_spec(const std::string& name);

// The MJCF directory compiled in (src/sim/mjcf of the source tree) unless EMBSIM_MJCF_DIR is set.
std::string default_mjcf_dir();

}  // namespace emb
