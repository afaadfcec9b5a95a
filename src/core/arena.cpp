#include "core/arena.hpp"

#include <sys/mman.h>
#include <sys/resource.h>

#include "core/error.hpp"

namespace emb {

Arena::Arena(size_t bytes) { reserve(bytes); }

Arena::~Arena() { release(); }

void Arena::use_memory(ArenaMemory memory) {
  EMB_ASSERT(base_ == nullptr);
  memory_ = std::move(memory);
}

void Arena::release() {
  if (!base_) return;
  if (memory_.release)
    memory_.release(base_);
  else
    munmap(base_, capacity_);
  base_ = nullptr;
  capacity_ = 0;
}

void Arena::reserve(size_t bytes) {
  if (bytes <= capacity_) {
    used_ = 0;
    return;
  }
  release();
  const size_t capacity = (bytes + 4095) & ~size_t(4095);
  if (memory_.allocate) {
    base_ = static_cast<uint8_t*>(memory_.allocate(capacity));
  } else {
    void* p = mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EMB_CHECK(p != MAP_FAILED, "arena: cannot map ", capacity, " bytes");
    madvise(p, capacity, MADV_HUGEPAGE);  // big arenas read several times faster on huge pages
    base_ = static_cast<uint8_t*>(p);
  }
  capacity_ = capacity;
  used_ = 0;
}

void* Arena::alloc_bytes(size_t bytes) {
  size_t start = (used_ + 63) & ~size_t(63);
  EMB_CHECK(start + bytes <= capacity_, "arena: out of memory (", start + bytes, " > ", capacity_, " bytes)");
  used_ = start + bytes;
  if (used_ > high_water_) high_water_ = used_;
  return base_ + start;
}

size_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return size_t(usage.ru_maxrss) * 1024;
}

}  // namespace emb
