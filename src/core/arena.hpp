// A bump allocator over one large, page-aligned block: allocate all activations and
// scratch once, reuse them every step (first-touching pages costs ~10 µs each on the
// development VM, so the steady state must allocate nothing; MACHINE.md).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>

namespace emb {

// Where an arena's block comes from when it is not host pages: a backend's memory (a GPU's).
struct ArenaMemory {
  std::function<void*(size_t)> allocate;
  std::function<void(void*)> release;
};

class Arena {
 public:
  explicit Arena(size_t bytes = 0);
  // Takes its block from `memory` from now on (only while it holds none).
  void use_memory(ArenaMemory memory);
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // Grows to at least `bytes` (drops all allocations; only between steps).
  void reserve(size_t bytes);
  // 64-byte aligned, uninitialised; throws if the arena is full.
  void* alloc_bytes(size_t bytes);
  template <class T>
  T* alloc(size_t n) {
    return static_cast<T*>(alloc_bytes(n * sizeof(T)));
  }
  void reset() { used_ = 0; }
  size_t used() const { return used_; }
  size_t capacity() const { return capacity_; }
  size_t high_water() const { return high_water_; }

 private:
  void release();

  uint8_t* base_ = nullptr;
  size_t capacity_ = 0, used_ = 0, high_water_ = 0;
  ArenaMemory memory_;  // empty: host pages (mmap)
};

// Peak resident memory of this process in bytes (from getrusage).
size_t peak_rss_bytes();

}  // namespace emb
