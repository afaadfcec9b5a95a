#include "vl_encoder.hpp"

namespace emb {

void StandInVlEncoder::encode(const std::vector<std::vector<uint8_t>>& frames, int H, int W,
                              const std::string& instruction, std::vector<uint16_t>& out) {
  for (const std::vector<uint8_t>& f : frames) features_.add_image(f.data(), H, W, grid_, out);
  features_.add_instruction(instruction, out);
}

}  // namespace emb
