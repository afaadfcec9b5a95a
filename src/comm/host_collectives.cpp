#include "comm/host_collectives.hpp"

#include <climits>

#include "comm/shard_range.hpp"
#include "core/error.hpp"

namespace emb {

int rank_in(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

int ranks_in(MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  return size;
}

void barrier(MPI_Comm comm) { MPI_Barrier(comm); }

void sum_over_ranks(MPI_Comm comm, double* values, int n) {
  MPI_Allreduce(MPI_IN_PLACE, values, n, MPI_DOUBLE, MPI_SUM, comm);
}

void sum_over_ranks(MPI_Comm comm, float* values, int64_t n) {
  MPI_Allreduce(MPI_IN_PLACE, values, int(n), MPI_FLOAT, MPI_SUM, comm);
}

void sum_over_ranks(MPI_Comm comm, int64_t* values, int n) {
  MPI_Allreduce(MPI_IN_PLACE, values, n, MPI_INT64_T, MPI_SUM, comm);
}

void max_over_ranks(MPI_Comm comm, int64_t* values, int n) {
  MPI_Allreduce(MPI_IN_PLACE, values, n, MPI_INT64_T, MPI_MAX, comm);
}

int64_t max_over_ranks(MPI_Comm comm, int64_t value) {
  max_over_ranks(comm, &value, 1);
  return value;
}

int64_t min_over_ranks(MPI_Comm comm, int64_t value) {
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT64_T, MPI_MIN, comm);
  return value;
}

double max_over_ranks(MPI_Comm comm, double value) {
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_MAX, comm);
  return value;
}

bool any_rank(MPI_Comm comm, bool flag) { return max_over_ranks(comm, int64_t(flag ? 1 : 0)) != 0; }

int64_t exclusive_sum(MPI_Comm comm, int64_t value) {
  int64_t below = 0;
  MPI_Exscan(&value, &below, 1, MPI_INT64_T, MPI_SUM, comm);
  return rank_in(comm) == 0 ? 0 : below;  // MPI leaves rank 0's result undefined
}

namespace {

void reduce_to_root(MPI_Comm comm, const double* values, double* out, int n, MPI_Op op) {
  const bool root = rank_in(comm) == 0;
  MPI_Reduce(root && values == out ? MPI_IN_PLACE : values, out, n, MPI_DOUBLE, op, 0, comm);
}

}  // namespace

void min_to_root(MPI_Comm comm, const double* values, double* out, int n) {
  reduce_to_root(comm, values, out, n, MPI_MIN);
}
void max_to_root(MPI_Comm comm, const double* values, double* out, int n) {
  reduce_to_root(comm, values, out, n, MPI_MAX);
}
std::vector<std::string> gather_to_root(MPI_Comm comm, const std::string& text) {
  const bool root = rank_in(comm) == 0;
  const int size = ranks_in(comm), length = int(text.size());
  std::vector<int> lengths(root ? size_t(size) : 0), offsets(lengths.size(), 0);
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm);
  for (size_t r = 1; r < lengths.size(); ++r) offsets[r] = offsets[r - 1] + lengths[r - 1];
  std::string all(root ? size_t(offsets.back() + lengths.back()) : 0, '\0');
  MPI_Gatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, comm);
  std::vector<std::string> texts;
  for (size_t r = 0; r < lengths.size(); ++r) texts.push_back(all.substr(size_t(offsets[r]), size_t(lengths[r])));
  return texts;
}

void sum_to_root(MPI_Comm comm, const double* values, double* out, int n) {
  reduce_to_root(comm, values, out, n, MPI_SUM);
}

void broadcast(MPI_Comm comm, int64_t* values, int n) { MPI_Bcast(values, n, MPI_INT64_T, 0, comm); }
void broadcast(MPI_Comm comm, uint32_t* values, int n) { MPI_Bcast(values, n, MPI_UINT32_T, 0, comm); }
void broadcast(MPI_Comm comm, double* values, int n) { MPI_Bcast(values, n, MPI_DOUBLE, 0, comm); }

std::vector<int> all_gather(MPI_Comm comm, int value) {
  std::vector<int> all(size_t(ranks_in(comm)));
  MPI_Allgather(&value, 1, MPI_INT, all.data(), 1, MPI_INT, comm);
  return all;
}

namespace {

template <class T>
std::vector<T> all_gather_as(MPI_Comm comm, const std::vector<T>& values, MPI_Datatype type) {
  std::vector<T> all(values.size() * size_t(ranks_in(comm)));
  MPI_Allgather(values.data(), int(values.size()), type, all.data(), int(values.size()), type, comm);
  return all;
}

}  // namespace

std::vector<int64_t> all_gather(MPI_Comm comm, const std::vector<int64_t>& values) {
  return all_gather_as(comm, values, MPI_INT64_T);
}
std::vector<double> all_gather(MPI_Comm comm, const std::vector<double>& values) {
  return all_gather_as(comm, values, MPI_DOUBLE);
}

void all_gather_shards(MPI_Comm comm, float* data, int64_t n) {
  const int size = ranks_in(comm);
  const size_t n_ranks = static_cast<size_t>(size);
  std::vector<int> counts(n_ranks), offsets(n_ranks);
  for (int r = 0; r < size; ++r) {
    const ShardRange s = shard_range(n, r, size);
    EMB_CHECK(s.offset + s.count <= INT_MAX, "all_gather_shards: ", n, " elements exceed MPI's int counts");
    counts[size_t(r)] = int(s.count), offsets[size_t(r)] = int(s.offset);
  }
  MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data, counts.data(), offsets.data(), MPI_FLOAT, comm);
}

void exchange_rows(MPI_Comm comm, const char* out, const std::vector<int>& send_count, const std::vector<int>& send_at,
                   char* in, const std::vector<int>& recv_count, const std::vector<int>& recv_at, size_t row_bytes) {
  MPI_Datatype row;
  MPI_Type_contiguous(int(row_bytes), MPI_BYTE, &row);
  MPI_Type_commit(&row);
  MPI_Alltoallv(out, send_count.data(), send_at.data(), row, in, recv_count.data(), recv_at.data(), row, comm);
  MPI_Type_free(&row);
}

MPI_Comm duplicate(MPI_Comm comm) {
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Comm_dup(comm, &dup);
  return dup;
}

MPI_Comm split_by_node(MPI_Comm comm) {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank_in(comm), MPI_INFO_NULL, &node);
  return node;
}

MPI_Comm split(MPI_Comm comm, int color, int key) {
  MPI_Comm part = MPI_COMM_NULL;
  MPI_Comm_split(comm, color, key, &part);
  return part;
}

void free_communicator(MPI_Comm& comm) {
  if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
}

void NonBlockingBarrier::enter(MPI_Comm comm) {
  MPI_Ibarrier(comm, &request_);
  entered_ = true;
}

bool NonBlockingBarrier::done() {
  int done = 0;
  MPI_Test(&request_, &done, MPI_STATUS_IGNORE);
  return done != 0;
}

bool mpi_thread_multiple() {
  int provided = 0;
  MPI_Query_thread(&provided);
  return provided == MPI_THREAD_MULTIPLE;
}

}  // namespace emb
