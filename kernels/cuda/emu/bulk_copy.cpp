#include "kernels/cuda/emu/bulk_copy.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cuda/emu/block_scheduler.hpp"
#include "kernels/cuda/emu/runtime.hpp"

namespace emb::emu {

namespace {

// The 8 bytes of an mbarrier.
struct Mbarrier {
  int32_t tx;        // transaction bytes expected and not landed (may dip below 0 within a phase)
  uint16_t pending;  // arrivals still missing in the current phase
  uint16_t count_phase;  // arrival count per phase (15 bits) | current phase parity << 15
  unsigned count() const { return count_phase & 0x7fffu; }
  unsigned phase() const { return count_phase >> 15; }
};
static_assert(sizeof(Mbarrier) == 8, "an mbarrier is 8 bytes");

Mbarrier& barrier_at(void* p, const char* op) {
  if (reinterpret_cast<uintptr_t>(p) % 8) device_fault(std::string(op) + ": mbarrier address not 8-byte aligned");
  if (is_device_memory(p)) device_fault(std::string(op) + ": mbarrier in global memory (it must be shared)");
  Mbarrier& b = *static_cast<Mbarrier*>(p);
  if (b.count() == 0 || b.pending > b.count())
    device_fault(std::string(op) + ": mbarrier not initialised (mbarrier_init)");
  return b;
}

void complete_if_done(Mbarrier& b) {
  if (b.pending != 0 || b.tx != 0) return;
  b.count_phase ^= 0x8000u;
  b.pending = uint16_t(b.count());
  note_progress();
}

// A copy landing after its phase completed was not counted by that phase's expect_tx (too few
// bytes announced): on a GPU the phase completes before the copy, whose reader sees old bytes.
void land(const BulkCopy& c) {
  std::memcpy(c.dst, c.bytes.data(), c.bytes.size());
  Mbarrier& b = barrier_at(c.barrier, "bulk copy");
  if (b.phase() != c.phase)
    device_fault("bulk_tensor_load: a copy of " + std::to_string(c.bytes.size()) +
                 " bytes landed after the mbarrier phase it was issued in had completed (mbarrier_arrive_expect_tx "
                 "announced too few bytes)");
  b.tx -= int32_t(c.bytes.size());
  complete_if_done(b);
}

constexpr uint64_t kMagic = 0x454d42544d41ull;  // "EMBTMA"

struct TensorMap {
  uint64_t magic;
  const char* global;
  uint32_t rank, element_bytes;
  uint64_t dims[5], strides[5];  // strides in bytes, strides[0] = element_bytes
  uint32_t box[5];
};
static_assert(sizeof(TensorMap) <= sizeof(CUtensorMap), "the emulated tensor map fits CUtensorMap");

bool in_dynamic_shared(const void* p, size_t bytes) {
  const BlockState& s = *t_block;
  const char* c = static_cast<const char*>(p);
  return c >= s.dynamic_shared && c + bytes <= s.dynamic_shared + s.dynamic_shared_bytes;
}

}  // namespace

void mbarrier_init(void* barrier, unsigned count) {
  if (count == 0 || count > 0x7fffu) device_fault("mbarrier_init: count " + std::to_string(count));
  if (reinterpret_cast<uintptr_t>(barrier) % 8) device_fault("mbarrier_init: address not 8-byte aligned");
  *static_cast<Mbarrier*>(barrier) = Mbarrier{0, uint16_t(count), uint16_t(count)};
}

void mbarrier_arrive(void* barrier) {
  Mbarrier& b = barrier_at(barrier, "mbarrier_arrive");
  --b.pending;
  note_progress();
  complete_if_done(b);
}

void mbarrier_arrive_expect_tx(void* barrier, unsigned bytes) {
  barrier_at(barrier, "mbarrier_arrive_expect_tx").tx += int32_t(bytes);
  mbarrier_arrive(barrier);
}

bool mbarrier_try_wait_parity(void* barrier, unsigned parity) {
  std::vector<BulkCopy>& copies = t_block->bulk_copies;
  const auto mine = std::stable_partition(copies.begin(), copies.end(),
                                          [&](const BulkCopy& c) { return c.barrier != barrier; });
  const std::vector<BulkCopy> landing(std::make_move_iterator(mine), std::make_move_iterator(copies.end()));
  copies.erase(mine, copies.end());
  for (const BulkCopy& c : landing) land(c);
  return barrier_at(barrier, "mbarrier_try_wait_parity").phase() != (parity & 1u);
}

void bulk_tensor_load(void* dst, const CUtensorMap* map, const int32_t* coords, int rank, void* barrier) {
  TensorMap m;
  std::memcpy(&m, map, sizeof m);
  if (m.magic != kMagic) device_fault("bulk_tensor_load: the tensor map was not made by encode_tensor_map");
  if (int(m.rank) != rank)
    device_fault("bulk_tensor_load: " + std::to_string(rank) + " coordinates for a rank-" + std::to_string(m.rank) +
                 " tensor map");
  size_t bytes = m.element_bytes;
  for (int d = 0; d < rank; ++d) bytes *= m.box[d];
  if (reinterpret_cast<uintptr_t>(dst) % 128 || !in_dynamic_shared(dst, bytes))
    device_fault("bulk_tensor_load: destination of " + std::to_string(bytes) +
                 " bytes not 128-byte aligned inside the block's dynamic shared memory");
  BulkCopy c{static_cast<char*>(dst), std::vector<char>(bytes, 0), barrier,
             barrier_at(barrier, "bulk_tensor_load").phase()};
  const size_t run = size_t(m.box[0]) * m.element_bytes;
  const size_t rows = bytes / run;
  for (size_t r = 0; r < rows; ++r) {
    int64_t offset = 0;  // of the run's first element; the run itself is clipped along dim 0
    bool inside = true;
    size_t rest = r;
    for (int d = 1; d < rank; ++d) {
      const int64_t x = int64_t(coords[d]) + int64_t(rest % m.box[d]);
      rest /= m.box[d];
      inside = inside && x >= 0 && x < int64_t(m.dims[d]);
      offset += x * int64_t(m.strides[d]);
    }
    if (!inside) continue;
    for (uint32_t e = 0; e < m.box[0]; ++e) {
      const int64_t x = int64_t(coords[0]) + e;
      if (x < 0 || x >= int64_t(m.dims[0])) continue;
      const char* src = m.global + offset + x * int64_t(m.element_bytes);
      if (!is_device_memory(src) || !is_device_memory(src + m.element_bytes - 1))
        device_fault("bulk_tensor_load: element outside global memory (tensor map dims or strides wrong)");
      std::memcpy(c.bytes.data() + r * run + e * m.element_bytes, src, m.element_bytes);
    }
  }
  if (current_schedule().order == Order::forward)
    t_block->bulk_copies.push_back(std::move(c));
  else
    land(c);
}

void encode_tensor_map(CUtensorMap* map, const void* global, int rank, const uint64_t* dims,
                       const uint64_t* strides_bytes, const uint32_t* box, int element_bytes) {
  auto refuse = [](const std::string& why) { throw std::invalid_argument("encode_tensor_map: " + why); };
  if (rank < 1 || rank > 5) refuse("rank " + std::to_string(rank) + " (1 to 5)");
  if (reinterpret_cast<uintptr_t>(global) % 16) refuse("global address not 16-byte aligned");
  TensorMap m{kMagic, static_cast<const char*>(global), uint32_t(rank), uint32_t(element_bytes), {}, {}, {}};
  m.strides[0] = uint64_t(element_bytes);
  for (int d = 0; d < rank; ++d) {
    if (dims[d] == 0) refuse("dim " + std::to_string(d) + " is empty");
    if (box[d] == 0 || box[d] > 256) refuse("box size " + std::to_string(box[d]) + " (1 to 256)");
    m.dims[d] = dims[d];
    m.box[d] = box[d];
    if (d > 0) {
      if (strides_bytes[d - 1] % 16) refuse("stride of dim " + std::to_string(d) + " not a multiple of 16 bytes");
      m.strides[d] = strides_bytes[d - 1];
    }
  }
  if (box[0] * uint32_t(element_bytes) % 16) refuse("inner box not a multiple of 16 bytes");
  std::memset(map, 0, sizeof *map);
  std::memcpy(map, &m, sizeof m);
}

}  // namespace emb::emu
