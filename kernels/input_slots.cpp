#include "kernels/input_slots.hpp"

#include "kernels/ops.hpp"

namespace emb {

OpsInputSlots::~OpsInputSlots() {
  for (Buffers& b : slots_)
    if (b.backend) ops_.deallocate(b.backend);
}

InputSlots::Slot OpsInputSlots::stage(size_t bytes) {
  current_ = (current_ + 1) % kSlots;
  Buffers& b = slots_[current_];
  if (bytes > b.capacity) {  // grows by half again, so a slowly growing batch reallocates rarely
    if (b.backend) ops_.deallocate(b.backend);
    b.capacity = bytes + bytes / 2;
    b.backend = ops_.allocate(b.capacity);
    b.host.resize(b.capacity);
  }
  return {b.host.data(), b.backend};
}

void OpsInputSlots::upload(size_t bytes) {
  Buffers& b = slots_[current_];
  ops_.upload(b.backend, b.host.data(), bytes);
}

}  // namespace emb
