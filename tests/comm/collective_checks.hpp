// Collective checks shared by the backend suites. Inputs are small integers so every
// partial sum is exact in fp32 and in bf16 (all below 256): expected results are exact
// whatever order a backend reduces in. `Memory` says where buffers live: host vectors for
// MPI, device copies for NCCL (place() returns the pointer to hand to the Comm, fetch()
// brings the result back after wait()).
#pragma once
#include <boost/test/unit_test.hpp>

#include <type_traits>
#include <vector>

#include "comm/comm.hpp"

namespace emb {

template <class T> T from_float(double v);
template <> inline float from_float<float>(double v) { return float(v); }
template <> inline bf16 from_float<bf16>(double v) { return to_bf16(float(v)); }
template <> inline double from_float<double>(double v) { return v; }
inline float as_float(float v) { return v; }
inline float as_float(bf16 v) { return to_float(v); }
inline double as_float(double v) { return v; }
template <class T> DType dtype_of() { return sizeof(T) == 8 ? DType::f64 : sizeof(T) == 4 ? DType::f32 : DType::bf16; }

inline float contribution(int64_t i, int rank) { return float(i % 13 + rank + 1); }
// The reduced value as a backend computes it: avg divides in the type summed in (f64 for
// f64, fp32 for fp32 and bf16).
template <class T>
double reduced(int64_t i, int size, ReduceOp op) {
  using Sum = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const Sum sum = Sum(size * (i % 13) + size * (size + 1) / 2);
  return op == ReduceOp::avg ? sum / Sum(size) : sum;
}
inline float gathered(int64_t i) { return float(i % 251); }
inline float broadcast_value(int64_t i) { return float(i % 200 + 1); }

// Counts the elements of `x` that differ from expected(offset + i) rounded to T.
template <class T, class F>
int64_t mismatches(const std::vector<T>& x, int64_t offset, F expected) {
  int64_t bad = 0;
  for (size_t i = 0; i < x.size(); ++i)
    if (as_float(x[i]) != as_float(from_float<T>(expected(offset + int64_t(i))))) ++bad;
  return bad;
}

struct HostMemory {
  template <class T> T* place(std::vector<T>& v) { return v.data(); }
  template <class T> void fetch(std::vector<T>&, const T*) {}
};

template <class T, class Memory>
void check_all_reduce(Comm& comm, int64_t n, ReduceOp op) {
  Memory mem;
  std::vector<T> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = from_float<T>(contribution(i, comm.rank()));
  T* data = mem.place(x);
  comm.all_reduce(data, n, dtype_of<T>(), op).wait();
  mem.fetch(x, data);
  BOOST_TEST(mismatches(x, 0, [&](int64_t i) { return reduced<T>(i, comm.size(), op); }) == 0);
}

template <class T, class Memory>
void check_reduce_scatter(Comm& comm, int64_t n, ReduceOp op) {
  Memory mem;
  const ShardRange mine = shard_range(n, comm.rank(), comm.size());
  std::vector<T> full(n), shard(mine.count, from_float<T>(-1));
  for (int64_t i = 0; i < n; ++i) full[i] = from_float<T>(contribution(i, comm.rank()));
  T* shard_data = mem.place(shard);
  comm.reduce_scatter(mem.place(full), shard_data, n, dtype_of<T>(), op).wait();
  mem.fetch(shard, shard_data);
  BOOST_TEST(mismatches(shard, mine.offset, [&](int64_t i) { return reduced<T>(i, comm.size(), op); }) == 0);
}

template <class T, class Memory>
void check_all_gather(Comm& comm, int64_t n, bool in_place) {
  Memory mem;
  const ShardRange mine = shard_range(n, comm.rank(), comm.size());
  std::vector<T> full(n, from_float<T>(-1)), shard(mine.count);
  for (int64_t i = 0; i < mine.count; ++i) {
    shard[i] = from_float<T>(gathered(mine.offset + i));
    full[mine.offset + i] = shard[i];
  }
  T* full_data = mem.place(full);
  const T* send = in_place ? full_data + mine.offset : mem.place(shard);
  comm.all_gather(send, full_data, n, dtype_of<T>()).wait();
  mem.fetch(full, full_data);
  BOOST_TEST(mismatches(full, 0, gathered) == 0);
}

template <class T, class Memory>
void check_broadcast(Comm& comm, int64_t n) {
  Memory mem;
  const int root = comm.size() - 1;  // non-zero whenever there is more than one rank
  std::vector<T> x(n, from_float<T>(-1));
  if (comm.rank() == root)
    for (int64_t i = 0; i < n; ++i) x[i] = from_float<T>(broadcast_value(i));
  T* data = mem.place(x);
  comm.broadcast(data, n, dtype_of<T>(), root).wait();
  mem.fetch(x, data);
  BOOST_TEST(mismatches(x, 0, broadcast_value) == 0);
}

// Every collective, every dtype (f64 too: the Σg² of clipping), sum and avg, over `sizes`.
// At 2–4 ranks the sizes 7 and 1000003 shard unevenly: NCCL's grouped per-rank path.
template <class Memory, class Sizes>
void check_every_collective(Comm& comm, const Sizes& sizes) {
  for (int64_t n : sizes) {
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::avg}) {
      BOOST_TEST_CONTEXT("n=" << n << " avg=" << (op == ReduceOp::avg)) {
        check_all_reduce<float, Memory>(comm, n, op);
        check_all_reduce<bf16, Memory>(comm, n, op);
        check_all_reduce<double, Memory>(comm, n, op);
        check_reduce_scatter<float, Memory>(comm, n, op);
        check_reduce_scatter<bf16, Memory>(comm, n, op);
        check_reduce_scatter<double, Memory>(comm, n, op);
      }
    }
    for (bool in_place : {false, true}) {
      BOOST_TEST_CONTEXT("n=" << n << " in_place=" << in_place) {
        check_all_gather<float, Memory>(comm, n, in_place);
        check_all_gather<bf16, Memory>(comm, n, in_place);
        check_all_gather<double, Memory>(comm, n, in_place);
      }
    }
    BOOST_TEST_CONTEXT("n=" << n) {
      check_broadcast<float, Memory>(comm, n);
      check_broadcast<bf16, Memory>(comm, n);
      check_broadcast<double, Memory>(comm, n);
    }
  }
}

}  // namespace emb
