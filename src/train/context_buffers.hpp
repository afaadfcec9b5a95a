// The context rows of each micro-batch slot of a step in the backend's memory (fp32), kept and
// grown, so that a step of model.backbone = online allocates nothing once the largest
// micro-batch was seen. Slot i's rows stay valid until the next call for slot i.
#pragma once
#include <memory>
#include <vector>

#include "encoders/common/backend_tensors.hpp"

namespace emb {

class ContextBuffers {
 public:
  ContextBuffers(Ops& ops, int64_t width) : ops_(ops), width_(width) {}
  // [rows, width] fp32 of slot `slot`.
  View rows(int slot, int64_t rows);

 private:
  struct Buffer {
    std::unique_ptr<encoders::BackendTensors> store;
    View rows;  // [capacity, width]
  };
  Ops& ops_;
  int64_t width_;
  std::vector<Buffer> buffers_;
};

}  // namespace emb
