#include "sim/env.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/error.hpp"
#include "core/rng.hpp"

namespace emb {

namespace {

constexpr double kControlDt = 0.04;   // seconds per control step
constexpr double kLinkHeight = 0.1;   // reach/push arm plane
constexpr double kPickLinkHeight = 0.2;
constexpr double kMinRadius = 0.15, kMaxRadius = 0.54;  // mocap workspace (arm reach 0.55 m)
constexpr double kMinHandZ = 0.095, kMaxHandZ = 0.3;    // pick_place hand height range
constexpr double kFingerClosed = 0.04;

// The (task, episode) substream of the initial-state draws.
uint64_t episode_stream(EpisodeSplit split, int task) { return 0x53494D00ull + uint64_t(split) * 16 + uint64_t(task); }

int require_id(const mjModel* m, mjtObj type, const char* name, const std::string& task) {
  int id = mj_name2id(m, type, name);
  if (id < 0) throw Error(str(task, ": MJCF has no ", mju_type2Str(type), " named '", name, "'"));
  return id;
}

void clamp_radius(double& x, double& y) {
  double r = std::hypot(x, y);
  double c = std::clamp(r, kMinRadius, kMaxRadius);
  if (r > 1e-9 && c != r) x *= c / r, y *= c / r;
}

}  // namespace

std::shared_ptr<const mjModel> load_task_model(const TaskSpec& task, const std::string& mjcf_dir) {
  std::string path = (std::filesystem::path(mjcf_dir) / task.mjcf_file).string();
  if (!std::filesystem::is_regular_file(path))
    throw Error(str(path, ": missing MJCF file of task '", task.name, "' (set EMBSIM_MJCF_DIR or --mjcf-dir)"), kExitInput);
  char error[1000] = "";
  mjModel* m = mj_loadXML(path.c_str(), nullptr, error, sizeof error);
  if (!m) {
    std::string reason = error;  // MuJoCo's parser reports on several lines: the error says it on one
    std::replace(reason.begin(), reason.end(), '\n', ' ');
    while (!reason.empty() && reason.back() == ' ') reason.pop_back();
    throw Error(str(path, ": MJCF does not compile: ", reason), kExitInput);
  }
  return std::shared_ptr<const mjModel>(m, [](const mjModel* p) { mj_deleteModel(const_cast<mjModel*>(p)); });
}

Env::Env(const TaskSpec& task, std::shared_ptr<const mjModel> model) : task_(task), model_(std::move(model)) {
  const mjModel* m = model_.get();
  data_ = mj_makeData(m);
  substeps_ = int(std::lround(kControlDt / m->opt.timestep));
  ee_site_ = require_id(m, mjOBJ_SITE, "ee", task.name);
  link3_ = require_id(m, mjOBJ_BODY, "link3", task.name);
  hand_mocap_ = m->body_mocapid[require_id(m, mjOBJ_BODY, "hand_mocap", task.name)];
  goal_body_ = require_id(m, mjOBJ_BODY, "goal", task.name);
  goal_mocap_ = m->body_mocapid[goal_body_];
  if (task.name != "reach") {
    block_body_ = require_id(m, mjOBJ_BODY, "block", task.name);
    block_joint_ = require_id(m, mjOBJ_JOINT, "block", task.name);
  }
  if (task.name == "pick_place") hand_ = require_id(m, mjOBJ_BODY, "hand", task.name);
}

Env::~Env() { mj_deleteData(data_); }

void Env::set_joint(const char* name, double value) {
  data_->qpos[model_->jnt_qposadr[mj_name2id(model_.get(), mjOBJ_JOINT, name)]] = value;
}

std::array<double, 3> Env::body_pos(int body) const {
  return {data_->xpos[3 * body], data_->xpos[3 * body + 1], data_->xpos[3 * body + 2]};
}

std::array<double, 3> Env::control_point() const {
  if (hand_ >= 0) return body_pos(hand_);
  const double* R = data_->xmat + 9 * link3_;  // link3's tip, the connect anchor (0.1, 0, 0)
  std::array<double, 3> p = body_pos(link3_);
  for (int i = 0; i < 3; ++i) p[size_t(i)] += R[3 * i] * 0.1;
  return p;
}

std::array<double, 3> Env::tip() const {
  return {data_->site_xpos[3 * ee_site_], data_->site_xpos[3 * ee_site_ + 1], data_->site_xpos[3 * ee_site_ + 2]};
}
std::array<double, 3> Env::hand_target() const {
  const double* p = data_->mocap_pos + 3 * hand_mocap_;
  return {p[0], p[1], p[2]};
}
std::array<double, 3> Env::block() const { return body_pos(block_body_); }
std::array<double, 3> Env::goal() const { return body_pos(goal_body_); }
double Env::gripper_closure() const {
  return data_->qpos[model_->jnt_qposadr[mj_name2id(model_.get(), mjOBJ_JOINT, "finger_left")]];
}

void Env::reset(uint64_t seed, EpisodeSplit split, int64_t episode) {
  const mjModel* m = model_.get();
  mj_resetData(m, data_);
  CounterRng rng(seed, RngStream::synth, episode_stream(split, task_.embodiment), uint64_t(episode));
  uint64_t draw = 0;
  auto uniform = [&](double lo, double hi) { return lo + (hi - lo) * rng.uniform(draw++); };
  auto polar = [&](double r, double theta, double z) { return std::array<double, 3>{r * std::cos(theta), r * std::sin(theta), z}; };
  auto dist_xy = [](const std::array<double, 3>& a, const std::array<double, 3>& b) { return std::hypot(a[0] - b[0], a[1] - b[1]); };
  auto place = [&](int mocap, const std::array<double, 3>& p) { std::copy(p.begin(), p.end(), data_->mocap_pos + 3 * mocap); };

  std::array<double, 3> block{}, goal{};
  if (task_.name == "reach") {
    goal = polar(uniform(0.2, 0.5), uniform(-1.3, 1.3), kLinkHeight);
  } else if (task_.name == "push") {
    block = polar(uniform(0.28, 0.4), uniform(-0.8, 0.8), 0.02);
    for (int attempt = 0;; ++attempt) {  // a goal 0.15 m away, and a pre-push point, both in reach
      double phi = uniform(0, 2 * M_PI);
      goal = {block[0] + 0.15 * std::cos(phi), block[1] + 0.15 * std::sin(phi), 0.001};
      double pre_r = std::hypot(block[0] - 0.09 * std::cos(phi), block[1] - 0.09 * std::sin(phi));
      double goal_r = std::hypot(goal[0], goal[1]);
      if ((goal_r > 0.2 && goal_r < 0.46 && pre_r > 0.18 && pre_r < 0.5) || attempt == 63) break;
    }
  } else {
    block = polar(uniform(0.28, 0.42), uniform(-0.8, 0.8), 0.02);
    do goal = polar(uniform(0.25, 0.45), uniform(-0.9, 0.9), uniform(0.12, 0.2));
    while (dist_xy(goal, block) < 0.1);
  }
  // The arm's start: random joints, redrawn while the tool is out of the workspace or on the block.
  for (int attempt = 0; attempt < 64; ++attempt) {
    double j1 = uniform(-1.0, 1.0), j2 = uniform(-1.6, 1.6), j3 = uniform(-1.2, 1.2);
    set_joint("j1", j1), set_joint("j2", j2);
    set_joint("j3", hand_ >= 0 ? -(j1 + j2) : j3);  // the pick hand starts with yaw 0, as its weld holds it
    mj_kinematics(m, data_);
    std::array<double, 3> c = control_point();
    double r = std::hypot(c[0], c[1]);
    if (r > kMinRadius + 0.05 && r < kMaxRadius - 0.02 && (block_body_ < 0 || dist_xy(c, block) > 0.1)) break;
  }
  if (block_joint_ >= 0) {
    double* q = data_->qpos + m->jnt_qposadr[block_joint_];
    q[0] = block[0], q[1] = block[1], q[2] = block[2], q[3] = 1, q[4] = q[5] = q[6] = 0;
  }
  place(goal_mocap_, goal);
  mj_forward(m, data_);
  place(hand_mocap_, control_point());
  if (hand_ >= 0) {
    double* quat = data_->mocap_quat + 4 * hand_mocap_;
    quat[0] = 1, quat[1] = quat[2] = quat[3] = 0;
  }
  mj_forward(m, data_);
  block_rest_z_ = block[2];
  steps_ = 0;
}

void Env::step(const float* action) {
  const mjModel* m = model_.get();
  double a[4] = {0, 0, 0, 0};
  for (int i = 0; i < task_.action_dim; ++i) a[i] = std::clamp(double(action[i]), -1.0, 1.0);
  double* p = data_->mocap_pos + 3 * hand_mocap_;
  p[0] += a[0] * task_.max_move, p[1] += a[1] * task_.max_move;
  clamp_radius(p[0], p[1]);
  if (hand_ >= 0) {
    p[2] = std::clamp(p[2] + a[2] * task_.max_move, kMinHandZ, kMaxHandZ);
    double target = 0.5 * (a[3] + 1.0) * kFingerClosed;
    for (int i = 0; i < m->nu; ++i) data_->ctrl[i] = target;
  }
  for (int s = 0; s < substeps_; ++s) mj_step(m, data_);
  ++steps_;
}

void Env::observe(float* state) const {
  const mjModel* m = model_.get();
  int k = 0;
  auto put = [&](double v) { state[k++] = float(v); };
  auto put3 = [&](const std::array<double, 3>& v) { put(v[0]), put(v[1]), put(v[2]); };
  for (const char* j : {"j1", "j2", "j3"}) put(data_->qpos[m->jnt_qposadr[mj_name2id(m, mjOBJ_JOINT, j)]]);
  if (hand_ >= 0) {
    put(data_->qpos[m->jnt_qposadr[mj_name2id(m, mjOBJ_JOINT, "lift")]]);
    put(gripper_closure() / kFingerClosed);
  }
  put3(tip());
  if (block_joint_ >= 0) {
    const double* q = data_->qpos + m->jnt_qposadr[block_joint_];
    for (int i = 0; i < 7; ++i) put(q[i]);
  }
  put3(goal());
  auto rel = [&](const std::array<double, 3>& to, const std::array<double, 3>& from) {
    put3({5 * (to[0] - from[0]), 5 * (to[1] - from[1]), 5 * (to[2] - from[2])});
  };
  if (block_joint_ >= 0) {
    rel(block(), tip()), rel(goal(), block());
  } else {
    rel(goal(), tip());
  }
  EMB_ASSERT(k == task_.state_dim);
}

bool Env::success() const {
  if (task_.name == "reach") {
    std::array<double, 3> t = tip(), g = goal();
    return std::hypot(t[0] - g[0], t[1] - g[1], t[2] - g[2]) <= task_.success_radius;
  }
  std::array<double, 3> b = block(), g = goal();
  if (task_.name == "push") return std::hypot(b[0] - g[0], b[1] - g[1]) <= task_.success_radius;
  return std::hypot(b[0] - g[0], b[1] - g[1], b[2] - g[2]) <= task_.success_radius && b[2] >= block_rest_z_ + 0.04;
}

}  // namespace emb
