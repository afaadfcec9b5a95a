#include "observation.hpp"

namespace emb {

ObservationEncoder::ObservationEncoder(const ObservationOptions& o, const mjModel* model)
    : o_(o), renderer_(model), encoder_(o.d_vl, 0) {}  // seed 0: the encoder of embpack video/libero

void ObservationEncoder::render(const Env& env, std::vector<std::vector<uint8_t>>& frames) {
  frames.resize(o_.views.size());
  for (size_t v = 0; v < o_.views.size(); ++v) renderer_.render(env.data(), o_.views[v], frames[v]);
}

void ObservationEncoder::features(const std::vector<std::vector<uint8_t>>& frames, const std::string& instruction,
                                  std::vector<uint16_t>& out) const {
  for (const std::vector<uint8_t>& f : frames) encoder_.add_image(f.data(), height(), width(), o_.vl_grid, out);
  encoder_.add_instruction(instruction, out);
}

}  // namespace emb
