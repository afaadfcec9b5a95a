#include "core/arena.hpp"

#include <sys/mman.h>
#include <sys/resource.h>

#include "core/error.hpp"

namespace emb {

Arena::Arena(size_t bytes) { reserve(bytes); }

Arena::~Arena() {
  if (base_) munmap(base_, capacity_);
}

void Arena::reserve(size_t bytes) {
  if (bytes <= capacity_) {
    used_ = 0;
    return;
  }
  if (base_) munmap(base_, capacity_);
  capacity_ = (bytes + 4095) & ~size_t(4095);
  void* p = mmap(nullptr, capacity_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  EMB_CHECK(p != MAP_FAILED, "arena: cannot map ", capacity_, " bytes");
  madvise(p, capacity_, MADV_HUGEPAGE);  // big arenas read several times faster on huge pages
  base_ = static_cast<uint8_t*>(p);
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
