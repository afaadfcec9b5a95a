#include "observation.hpp"

#include "core/error.hpp"

namespace emb {

ObservationEncoder::ObservationEncoder(const ObservationOptions& o, const mjModel* model, VlEncoder* vl)
    : o_(o), renderer_(model), vl_(vl) {}

void ObservationEncoder::render(const Env& env, std::vector<std::vector<uint8_t>>& frames) {
  frames.resize(o_.views.size());
  for (size_t v = 0; v < o_.views.size(); ++v) renderer_.render(env.data(), o_.views[v], frames[v]);
}

void ObservationEncoder::features(const std::vector<std::vector<uint8_t>>& frames, const std::string& instruction,
                                  std::vector<uint16_t>& out) const {
  EMB_ASSERT(vl_ != nullptr);
  vl_->encode(frames, height(), width(), instruction, out);
}

}  // namespace emb
