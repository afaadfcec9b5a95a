#include "policy.hpp"

#include "core/rng.hpp"

namespace emb {

namespace {

class ExpertPolicy final : public Policy {
 public:
  std::string name() const override { return "expert"; }
  void act(const std::vector<PolicyInput>& inputs, std::vector<std::vector<float>>& chunks) override {
    chunks.resize(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Env& env = *inputs[i].env;
      Expert& e = experts_[inputs[i].episode];
      if (env.steps() == 0) e.reset();
      chunks[i].assign(size_t(env.task().action_dim), 0.f);
      e.act(env, chunks[i].data());
    }
  }

 private:
  std::map<int64_t, Expert> experts_;  // one per episode: the experts keep a phase
};

class ZeroPolicy final : public Policy {
 public:
  std::string name() const override { return "zero"; }
  void act(const std::vector<PolicyInput>& inputs, std::vector<std::vector<float>>& chunks) override {
    chunks.resize(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) chunks[i].assign(size_t(inputs[i].env->task().action_dim), 0.f);
  }
};

class RandomPolicy final : public Policy {
 public:
  explicit RandomPolicy(uint64_t seed) : seed_(seed) {}
  std::string name() const override { return "random"; }
  void act(const std::vector<PolicyInput>& inputs, std::vector<std::vector<float>>& chunks) override {
    chunks.resize(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Env& env = *inputs[i].env;
      const int A = env.task().action_dim;
      CounterRng rng(seed_, RngStream::synth, kRandomPolicyStream, uint64_t(inputs[i].episode));
      chunks[i].resize(size_t(A));
      for (int k = 0; k < A; ++k) chunks[i][size_t(k)] = float(2.0 * rng.uniform(uint64_t(env.steps() * A + k)) - 1.0);
    }
  }

 private:
  static constexpr uint64_t kRandomPolicyStream = 0x52414E44ull;
  uint64_t seed_;
};

}  // namespace

std::unique_ptr<Policy> make_baseline_policy(const std::string& name, uint64_t seed) {
  if (name == "expert") return std::make_unique<ExpertPolicy>();
  if (name == "zero") return std::make_unique<ZeroPolicy>();
  if (name == "random") return std::make_unique<RandomPolicy>(seed);
  return nullptr;
}

}  // namespace emb
