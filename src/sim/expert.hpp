// Scripted experts (operational-space: each reads positions from the simulation and
// commands the hand's motion, as Meta-World's scripted policies do). They are what `embsim
// collect` records, and their success rate is the ceiling the learned policy is reported
// against.
//   reach       move the tip straight to the goal.
//   push        get behind the block on the side away from the goal (stepping out sideways and
//               round it when beside or in front of it), then push along the block→goal line.
//   pick_place  hover over the block, descend with the gripper open, close, then carry the
//               block to the goal (and start over if it slips out).
#pragma once
#include "sim/env.hpp"

namespace emb {

class Expert {
 public:
  void reset() { phase_ = 0, count_ = 0; }
  // task.action_dim values in [-1, 1] for the current state of env.
  void act(const Env& env, float* action);

 private:
  void reach(const Env& env, float* action) const;
  void push(const Env& env, float* action);
  void pick_place(const Env& env, float* action);
  int phase_ = 0, count_ = 0;
};

}  // namespace emb
