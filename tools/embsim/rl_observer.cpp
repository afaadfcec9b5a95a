#include "rl_observer.hpp"

#include "core/error.hpp"
#include "kernels/make_ops.hpp"

namespace emb {

namespace {

class EncoderObserver final : public VlObserver {
 public:
  EncoderObserver(const ObservationOptions& o, const CheckpointVl& source, const ModelConfig& mc, const mjModel* model)
      : ops_(source.kind == CheckpointVl::Kind::stand_in ? nullptr : make_ops(BackendConfig{}, 0)),
        vl_(make_vl_encoder(source, mc, o, ops_.get(), nullptr)),
        encoder_(o, model, vl_.get()) {}
  void observe(const Env& env, const std::string& instruction, std::vector<uint16_t>& vl) override {
    encoder_.render(env, frames_);
    encoder_.features(frames_, instruction, vl);
  }

 private:
  std::unique_ptr<Ops> ops_;  // the Eagle backbone's: the CPU (none for the stand-in encoder)
  std::unique_ptr<VlEncoder> vl_;
  ObservationEncoder encoder_;
  std::vector<std::vector<uint8_t>> frames_;
};

}  // namespace

VlObserverFactory rl_vl_observer(const ObservationOptions& o, const CheckpointVl& source, const ModelConfig& mc) {
  EMB_CHECK(source.kind != CheckpointVl::Kind::tuned_eagle, "embsim rl: a train.tune_visual checkpoint (",
            describe(source), "): RL trains the action head only and would drop the tuned vision tower; start RL "
            "from a checkpoint trained with train.tune_visual = off");
  return [o, source, mc](const mjModel* model) { return std::make_unique<EncoderObserver>(o, source, mc, model); };
}

}  // namespace emb
