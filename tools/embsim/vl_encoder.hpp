// What turns one step's rendered camera views and instruction into the vl rows (float16, as
// packed files store them) a gr00t policy reads. Which encoder a checkpoint needs is the one its
// training features came from (checkpoint_vl.hpp): the stand-in encoder of simulated fixtures
// (tools/embpack/context_features.hpp, as `embsim collect` and `embpack video` write them), or
// GR00T-N1.5's Eagle backbone (eagle_vl_encoder.hpp), frozen or with a checkpoint's tuned vision
// tower.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "context_features.hpp"

namespace emb {

class VlEncoder {
 public:
  virtual ~VlEncoder() = default;
  // Appends the vl rows of one step: frames[v] ([H, W, 3] uint8) in view order.
  virtual void encode(const std::vector<std::vector<uint8_t>>& frames, int H, int W, const std::string& instruction,
                      std::vector<uint16_t>& out) = 0;
};

// The stand-in encoder: every view's grid² image tokens, then the instruction's byte tokens
// (seed 0: the encoder of embpack video/libero and embsim collect).
class StandInVlEncoder final : public VlEncoder {
 public:
  StandInVlEncoder(int d_vl, int grid) : features_(d_vl, 0), grid_(grid) {}
  void encode(const std::vector<std::vector<uint8_t>>& frames, int H, int W, const std::string& instruction,
              std::vector<uint16_t>& out) override;

 private:
  ContextFeatures features_;
  int grid_;
};

}  // namespace emb
