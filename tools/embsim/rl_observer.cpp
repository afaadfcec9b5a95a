#include "rl_observer.hpp"

namespace emb {

namespace {

class EncoderObserver final : public VlObserver {
 public:
  EncoderObserver(const ObservationOptions& o, const mjModel* model) : encoder_(o, model) {}
  void observe(const Env& env, const std::string& instruction, std::vector<uint16_t>& vl) override {
    encoder_.render(env, frames_);
    encoder_.features(frames_, instruction, vl);
  }

 private:
  ObservationEncoder encoder_;
  std::vector<std::vector<uint8_t>> frames_;
};

}  // namespace

VlObserverFactory rl_vl_observer(const ObservationOptions& o) {
  return [o](const mjModel* model) { return std::make_unique<EncoderObserver>(o, model); };
}

}  // namespace emb
