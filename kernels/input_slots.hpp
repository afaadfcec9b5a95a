// The model's input on its way to the backend (README "On GPUs"): each packed micro-batch is
// staged into the next of kSlots slots, used in turn, and copied from the slot's host memory to
// its backend buffer. On a GPU the host memory is pinned and the copy runs on a copy stream,
// ordered with events: the compute stream waits for the copy before its next op, and a slot is
// refilled only after the compute ops issued before the following slot was staged are done,
// so the copy of one micro-batch runs while the previous one computes and the host never
// waits in the steady state. Ops::make_input_slots() gives the backend's.
#pragma once
#include <cstddef>
#include <vector>

namespace emb {

class Ops;

class InputSlots {
 public:
  static constexpr int kSlots = 2;
  struct Slot {
    void* host = nullptr;     // the staging memory the caller fills
    void* backend = nullptr;  // where the ops read the input once upload() was called
  };
  virtual ~InputSlots() = default;
  // The next slot, with room for `bytes` in both memories. Its backend buffer is valid until the
  // slot comes round again, kSlots calls later; the compute ops issued before this call are
  // the last that read the previous slot.
  virtual Slot stage(size_t bytes) = 0;
  // Copies the first `bytes` of the slot stage() returned to its backend buffer; every op
  // issued afterwards sees them.
  virtual void upload(size_t bytes) = 0;
  // Device seconds the compute stream waited for input copies since the last call (0 where
  // copies run on the compute stream's host); reads the device's clock, so call it once the
  // ops issued so far are done.
  virtual double take_copy_wait_seconds() = 0;
};

// A backend whose uploads need no staging beyond Ops::upload (the CPU's): host memory in
// std::vectors, backend buffers from Ops::allocate, copies by Ops::upload.
class OpsInputSlots final : public InputSlots {
 public:
  explicit OpsInputSlots(Ops& ops) : ops_(ops) {}
  ~OpsInputSlots() override;
  OpsInputSlots(const OpsInputSlots&) = delete;
  OpsInputSlots& operator=(const OpsInputSlots&) = delete;

  Slot stage(size_t bytes) override;
  void upload(size_t bytes) override;
  double take_copy_wait_seconds() override { return 0; }

 private:
  struct Buffers {
    std::vector<unsigned char> host;
    void* backend = nullptr;
    size_t capacity = 0;
  };
  Ops& ops_;
  Buffers slots_[kSlots];
  int current_ = kSlots - 1;
};

}  // namespace emb
