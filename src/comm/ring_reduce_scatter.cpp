#include "comm/ring_reduce_scatter.hpp"

#include <cstring>

#include "comm/mpi_error.hpp"
#include "comm/request_wait.hpp"
#include "comm/shard_range.hpp"

namespace emb {

namespace {
constexpr int kRingTag = 7301;
}

RingReduceScatter::RingReduceScatter(MPI_Comm comm, CommProgress progress) : comm_(comm), progress_(progress) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

void RingReduceScatter::exchange(const void* send, int send_count, void* recv, int recv_count, MPI_Datatype type,
                               const char* what) {
  MPI_Request requests[2];
  mpi_check(MPI_Irecv(recv, recv_count, type, ring_rank(1), kRingTag, comm_, &requests[0]), what);
  mpi_check(MPI_Isend(send, send_count, type, ring_rank(-1), kRingTag, comm_, &requests[1]), what);
  wait_requests(requests, 2, progress_, what);
}

// Step s: this rank sends its running sum of piece rank-s-1 on and receives the sum of piece
// rank-s-2 from rank-1, to which it adds its own elements; after P-1 steps that is its own piece.
template <class T>
void RingReduceScatter::reduce_scatter(const T* full, T* shard, int64_t n, MPI_Datatype type) {
  const ShardRange own = shard_range(n, rank_, size_);
  const size_t piece_bytes = size_t(shard_range(n, 0, size_).count) * sizeof(T);  // rank 0's is the largest
  if (partial_.size() < piece_bytes) partial_.resize(piece_bytes);
  if (incoming_.size() < piece_bytes) incoming_.resize(piece_bytes);
  T* partial = reinterpret_cast<T*>(partial_.data());
  T* incoming = reinterpret_cast<T*>(incoming_.data());
  const ShardRange first = shard_range(n, ring_rank(1), size_);
  const T* outgoing = full + first.offset;
  int outgoing_count = int(first.count);
  for (int step = 0; step + 1 < size_; ++step) {
    const ShardRange in = shard_range(n, ring_rank(step + 2), size_);
    exchange(outgoing, outgoing_count, incoming, int(in.count), type, "ring reduce-scatter");
    T* sum = step + 2 == size_ ? shard : partial;
    const T* mine = full + in.offset;
    for (int64_t i = 0; i < in.count; ++i) sum[i] = incoming[i] + mine[i];
    outgoing = sum;
    outgoing_count = int(in.count);
  }
  if (size_ == 1) std::memcpy(shard, full + own.offset, size_t(own.count) * sizeof(T));
}

void RingReduceScatter::reduce_scatter_sum(const void* full, void* shard, int64_t n, bool f64) {
  if (f64)
    reduce_scatter(static_cast<const double*>(full), static_cast<double*>(shard), n, MPI_DOUBLE);
  else
    reduce_scatter(static_cast<const float*>(full), static_cast<float*>(shard), n, MPI_FLOAT);
}

}  // namespace emb
