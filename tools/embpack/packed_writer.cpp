#include "packed_writer.hpp"

#include <cstdlib>
#include <optional>

#include "column_stats.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "data/h5_file.hpp"
#include "data/packed_format.hpp"
#include "data/packed_verify.hpp"
#include "data/tokenizer.hpp"
#include "relative_action_stats.hpp"
#include "comm/agreement.hpp"
#include "comm/host_collectives.hpp"
#include "comm/rank_gather.hpp"
#include "comm/world.hpp"
#include "temp_output.hpp"

namespace emb {

namespace {

// Where this rank's rows of one table go: the first file row and the table's total rows.
struct Placement {
  int64_t first = 0, total = 0;
};

// The ranks writing one file (one rank when comm is MPI_COMM_NULL).
struct Writers {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;

  // Collective: `rows` of this rank placed after those of the lower ranks.
  Placement place(int64_t rows) const {
    Placement p{0, rows};
    if (comm == MPI_COMM_NULL) return p;
    p.first = exclusive_sum(comm, rows);
    sum_over_ranks(comm, &p.total, 1);
    return p;
  }

  // A table of `rows` rows of `row_dims` each, this rank's rows after the lower ranks'.
  template <class T>
  void write_table(H5File& f, const std::string& ds, int64_t rows, std::vector<int64_t> row_dims, const T* data) const {
    Placement p = place(rows);
    row_dims.insert(row_dims.begin(), p.total);
    f.write_rows(ds, row_dims, p.first, rows, data);
  }

  // An offsets array [n+1] into a table: this rank's offsets shifted by the rows of the
  // lower ranks' table; rank 0 writes the leading 0, the others start after it.
  void write_offsets(H5File& f, const std::string& ds, const std::vector<int64_t>& offsets) const {
    Placement entries = place(int64_t(offsets.size()) - 1), rows = place(offsets.back());
    std::vector<int64_t> shifted;
    for (size_t i = rank == 0 ? 0 : 1; i < offsets.size(); ++i) shifted.push_back(offsets[i] + rows.first);
    f.write_rows(ds, {entries.total + 1}, rank == 0 ? 0 : entries.first + 1, int64_t(shifted.size()), shifted.data());
  }
};

// Tests: EMBPACK_DEBUG_FAIL_WRITE_RANK=R fails rank R between two tables of the collective
// write (a failure on one rank in the middle of it).
void fail_if_injected(int rank) {
  const char* fail_rank = std::getenv("EMBPACK_DEBUG_FAIL_WRITE_RANK");
  if (fail_rank && std::atoi(fail_rank) == rank)
    throw Error(str("EMBPACK_DEBUG_FAIL_WRITE_RANK: injected failure on rank ", rank, " in the collective write"));
}

// A rank failing in the middle of the collective writes cannot agree with the others on it
// (they wait in the collective it left): it prints its line and aborts the job, which ends
// every rank. Alone, it throws as any failure does.
[[noreturn]] void fail_collective_write(const std::exception& e, MPI_Comm comm) {
  if (comm == MPI_COMM_NULL || ranks_in(comm) == 1) throw;
  error_line(str("embpack: error on rank ", rank_in(comm), ": ", e.what(), "\n"));
  abort_world(kExitFailure);
}

// Every table of rows, written collectively by all ranks.
void write_tables(H5File& f, const PackedData& d, const Writers& w) {
  int64_t S = d.steps(), E = d.episodes();
  w.write_offsets(f, packed::kEpisodeOffsets, d.episode_offsets);
  fail_if_injected(w.rank);
  w.write_table(f, packed::kEpisodeTask, E, {}, d.episode_task.data());
  w.write_table(f, packed::kEpisodeEmbodiment, E, {}, d.episode_embodiment.data());
  w.write_table(f, packed::kState, S, {d.state_dim}, d.state.data());
  w.write_table(f, packed::kAction, S, {d.action_dim}, d.action.data());
  if (!d.reward.empty()) w.write_table(f, packed::kReward, S, {}, d.reward.data());
  if (!d.done.empty()) w.write_table(f, packed::kDone, S, {}, d.done.data());
  for (const auto& [name, v] : d.features) {
    w.write_table(f, str("/features/", name), v.offsets.back(), {v.dim}, v.values.data());
    w.write_offsets(f, str("/features/", name, "_offsets"), v.offsets);
  }
  for (const LatentView& l : d.latents) {
    std::string ds = str(packed::kLatents, "/", l.name);
    w.write_table(f, ds, l.offsets.back(), {l.height, l.width, l.channels}, l.values.data());
    w.write_offsets(f, ds + "_offsets", l.offsets);
  }
  for (const VideoView& v : d.videos)
    w.write_table(f, str(packed::kVideo, "/", v.name), S, {v.height, v.width, 3}, v.frames.data());
}

// The rows every statistic needs whole, gathered to rank 0 (collective).
struct WholeRows {
  std::vector<float> state, action, reward;
};

WholeRows gather_whole_rows(const PackedData& d, MPI_Comm comm) {
  return {gather_to_root(d.state, comm), gather_to_root(d.action, comm), gather_to_root(d.reward, comm)};
}

void write_stats(H5File& f, const std::string& field, const std::vector<float>& rows, int64_t dim) {
  ColumnStats s = column_stats(rows, dim);
  const std::vector<float>* values[] = {&s.mean, &s.std, &s.min, &s.max, &s.q01, &s.q99};
  for (size_t i = 0; i < packed::kStatNames.size(); ++i)
    f.write(str("/stats/", field, "/", packed::kStatNames[i]), {dim}, values[i]->data());
}

// What rank 0 writes alone, into the closed tables' file: attributes, tasks, statistics.
void write_globals(H5File& f, const PackedData& d, const WholeRows& whole, const std::string& created_by) {
  f.set_attr("/", "format", packed::kFormat);
  f.set_attr("/", "family", d.family);
  f.set_attr("/", "fps", d.fps);
  f.set_attr("/", "source", d.source);
  if (!d.modality.empty()) f.set_attr("/", packed::kModality, d.modality);
  f.set_attr("/", "created_by", created_by);
  if (!d.embodiment_state_dim.empty()) {
    int64_t n = int64_t(d.embodiment_state_dim.size());
    f.write(packed::kEmbodimentStateDim, {n}, d.embodiment_state_dim.data());
    f.write(packed::kEmbodimentActionDim, {n}, d.embodiment_action_dim.data());
  }
  write_stats(f, "state", whole.state, d.state_dim);
  write_stats(f, "action", whole.action, d.action_dim);
  write_relative_action_stats(f, d, whole.state, whole.action);
  if (!d.reward.empty()) write_stats(f, "reward", whole.reward, 1);

  std::vector<int32_t> tokens;
  std::vector<int64_t> token_offsets{0};
  for (const std::string& text : d.task_text) {
    std::vector<int32_t> t = tokenize(text);
    tokens.insert(tokens.end(), t.begin(), t.end());
    token_offsets.push_back(int64_t(tokens.size()));
  }
  f.write_strings(packed::kTaskText, d.task_text);
  f.write(packed::kTaskTokens, {int64_t(tokens.size())}, tokens.data());
  f.write(packed::kTaskTokenOffsets, {int64_t(token_offsets.size())}, token_offsets.data());
  for (const LatentView& l : d.latents) {
    f.set_attr(str(packed::kLatents, "/", l.name), packed::kStepsPerLatent, double(l.steps_per_latent));
    for (const auto& [key, value] : l.attributes) f.set_attr(str(packed::kLatents, "/", l.name), key, value);
  }
  for (const auto& [name, v] : d.features)
    for (const auto& [key, value] : v.attributes) f.set_attr(str("/features/", name), key, value);
}

}  // namespace

void write_packed(const PackedData& d, const std::string& out, const std::string& created_by, MPI_Comm comm) {
  EMB_ASSERT(int64_t(d.state.size()) == d.steps() * d.state_dim && int64_t(d.action.size()) == d.steps() * d.action_dim);
  check_relative_action_request(d, out);
  Writers w{comm, 0};
  if (comm != MPI_COMM_NULL) w.rank = rank_in(comm);
  TempOutput temp(out, comm, w.rank == 0);
  std::optional<H5File> f;
  std::string error;
  try {  // a failure to create the file is met by every rank of the collective call
    f.emplace(H5File::create(temp.temp_path(), comm));
  } catch (const std::exception& e) {
    error = e.what();
  }
  throw_if_any_rank_failed(comm, error);
  try {
    write_tables(*f, d, w);
  } catch (const std::exception& e) {
    fail_collective_write(e, comm);
  }
  f.reset();  // closes the file (collective)
  WholeRows whole = gather_whole_rows(d, comm);
  if (w.rank != 0) return;
  {
    H5File f = H5File::append(temp.temp_path());
    write_globals(f, d, whole, created_by);
  }
  verify_packed(H5File::open(temp.temp_path()));
  temp.commit();
}

}  // namespace emb
