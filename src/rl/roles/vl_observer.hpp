// What a simulator sends of an environment besides its state: the vl token rows (float16) of
// one step. The caller provides them (embsim renders the task's cameras and encodes them as
// training data are, tools/embsim/observation.hpp); a simulator makes one for its task's model.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/env.hpp"

namespace emb {

class VlObserver {
 public:
  virtual ~VlObserver() = default;
  // Appends the vl token rows of env's current step, given the episode's instruction.
  virtual void observe(const Env& env, const std::string& instruction, std::vector<uint16_t>& vl) = 0;
};

using VlObserverFactory = std::function<std::unique_ptr<VlObserver>(const mjModel* model)>;

}  // namespace emb
