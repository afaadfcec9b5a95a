#include "sim/expert.hpp"

#include <algorithm>
#include <cmath>

namespace emb {

namespace {

using Vec3 = std::array<double, 3>;

// The move that brings `from` to `to` in one control step, clipped to the unit action.
void move_towards(const Env& env, const Vec3& from, const Vec3& to, int dims, float* action) {
  for (int i = 0; i < dims; ++i)
    action[i] = float(std::clamp((to[size_t(i)] - from[size_t(i)]) / env.task().max_move, -1.0, 1.0));
}

}  // namespace

void Expert::act(const Env& env, float* action) {
  std::fill(action, action + env.task().action_dim, 0.f);
  if (env.task().name == "reach") return reach(env, action);
  if (env.task().name == "push") return push(env, action);
  return pick_place(env, action);
}

void Expert::reach(const Env& env, float* action) const { move_towards(env, env.tip(), env.goal(), 2, action); }

void Expert::push(const Env& env, float* action) {
  constexpr double kContact = 0.034;  // finger radius + block half-size + 2 mm
  const Vec3 f = env.tip(), b = env.block(), g = env.goal();
  double dx = g[0] - b[0], dy = g[1] - b[1], dist = std::hypot(dx, dy);
  if (dist < 1e-6) return;
  const double d[2] = {dx / dist, dy / dist}, n[2] = {-d[1], d[0]};
  const double along = (f[0] - b[0]) * d[0] + (f[1] - b[1]) * d[1];
  const double lateral = (f[0] - b[0]) * n[0] + (f[1] - b[1]) * n[1];
  const bool pushing = along < -0.02 && std::abs(lateral) < (phase_ == 1 ? 0.03 : 0.015);
  phase_ = pushing ? 1 : 0;
  Vec3 aim{};
  if (pushing) {  // a point just inside the block on the push line: the finger pushes it on
    double ahead = std::min(0.012, dist) - kContact;
    aim = {b[0] + ahead * d[0], b[1] + ahead * d[1], f[2]};
  } else if (along < -0.05) {  // behind the block: line up on the push line
    aim = {b[0] - 0.07 * d[0], b[1] - 0.07 * d[1], f[2]};
  } else {  // beside or in front of it: step out sideways, then go round behind it
    const double side = lateral >= 0 ? 1.0 : -1.0;
    const double back = std::abs(lateral) < 0.065 ? along : -0.08;
    aim = {b[0] + back * d[0] + side * 0.075 * n[0], b[1] + back * d[1] + side * 0.075 * n[1], f[2]};
  }
  move_towards(env, f, aim, 2, action);
}

void Expert::pick_place(const Env& env, float* action) {
  constexpr double kHover = 0.12, kGrasp = 0.03;  // tip heights
  const Vec3 t = env.tip(), b = env.block(), g = env.goal();
  const double xy_err = std::hypot(b[0] - t[0], b[1] - t[1]);
  if (phase_ >= 2 && b[2] < 0.03 && xy_err > 0.03) phase_ = 0, count_ = 0;  // dropped it: start over
  float grip = -1.f;
  switch (phase_) {
    case 0:  // above the block, gripper open
      move_towards(env, t, {b[0], b[1], kHover}, 3, action);
      if (xy_err < 0.012) phase_ = 1;
      break;
    case 1:  // down around it
      move_towards(env, t, {b[0], b[1], kGrasp}, 3, action);
      if (t[2] < kGrasp + 0.015 && xy_err < 0.015) phase_ = 2, count_ = 0;
      if (xy_err > 0.03) phase_ = 0;
      break;
    case 2:  // close in place
      grip = 1.f;
      if (++count_ >= 6) phase_ = 3;
      break;
    default: {  // carry: lift first, then bring the block to the goal
      grip = 1.f;
      Vec3 to = b[2] < 0.08 ? Vec3{b[0], b[1], b[2] + 0.1} : g;
      move_towards(env, b, to, 3, action);
    }
  }
  action[3] = grip;
}

}  // namespace emb
