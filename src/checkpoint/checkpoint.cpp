#include "checkpoint/checkpoint.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <limits>
#include <memory>
#include <set>

#include <sys/statvfs.h>

#include "comm/host_collectives.hpp"
#include "comm/shard_range.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/log.hpp"
#include "comm/agreement.hpp"
#include "checkpoint/checkpoint_dir.hpp"
#include "checkpoint/checkpoint_file.hpp"
#include "checkpoint/tensor_checksum.hpp"

namespace emb {
namespace {


std::string dataset(const char* group, const ParamInfo& t) { return str("/", group, "/", t.name); }

// The part of tensor t inside `range` (piece-relative, within this rank's owned part of the
// piece p holding t): a range of the tensor and where its elements live in the owned buffers.
struct TensorSlice {
  int64_t begin = 0, count = 0, owned_offset = 0;
};

TensorSlice tensor_slice(const ParamInfo& t, const Piece& p, ShardRange range) {
  EMB_ASSERT(range.offset >= p.begin && range.offset + range.count <= p.begin + p.owned_count);
  const int64_t lo = std::max(t.offset, p.offset + range.offset);
  const int64_t hi = std::min(t.offset + t.numel, p.offset + range.offset + range.count);
  if (hi <= lo) return {};
  return {lo - t.offset, hi - lo, p.owned_offset + (lo - p.offset - p.begin)};
}

// Every element is written by exactly one rank: its shard of the piece, which is its owned
// part when sharded and a 1/N part of the replicated piece without sharding.
TensorSlice written_slice(const ParamInfo& t, const ShardLayout& layout, int rank, int size) {
  const Piece& p = layout.piece_of(t);
  return tensor_slice(t, p, shard_range(p.count, rank, size));
}

TensorSlice owned_slice(const ParamInfo& t, const ShardLayout& layout) {
  const Piece& p = layout.piece_of(t);
  return tensor_slice(t, p, ShardRange{p.begin, p.owned_count});
}

using Clock = std::chrono::steady_clock;

// A frozen tensor (train/freezing.hpp) has no AdamW moments: only its parameters are stored.
bool stored(size_t group, const ShardLayout& layout, int tensor) { return group == 0 || !layout.frozen(tensor); }

// Every stored tensor of every state, in file order, which is also the order their checksums
// are combined and compared: f(group, tensor).
template <class F>
void for_each_tensor(const ParamRegistry& reg, const ShardLayout& layout, F&& f) {
  for (size_t g = 0; g < kTensorGroups.size(); ++g)
    for (int i = 0; i < reg.size(); ++i)
      if (stored(g, layout, i)) f(g, reg[i]);
}

// The tensors and elements a checkpoint of reg stores: the parameters, and the moments of
// trainable tensors.
struct StoredSize {
  int64_t tensors = 0, elements = 0;
};
StoredSize stored_size(const ParamRegistry& reg, const ShardLayout& layout) {
  StoredSize n;
  for_each_tensor(reg, layout, [&](size_t, const ParamInfo& t) { ++n.tensors, n.elements += t.numel; });
  return n;
}

// "201 MB in 0.42 s": the states of reg moved since `start`, for the log.
std::string transfer_summary(const ParamRegistry& reg, const ShardLayout& layout, Clock::time_point start) {
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return str(double(stored_size(reg, layout).elements) * sizeof(float) / 1e6, " MB in ", seconds, " s");
}

void broadcast_meta(MPI_Comm comm, CheckpointMeta& meta) {
  std::array<int64_t, 5> v = {meta.step, meta.sampler.epoch, meta.sampler.cursor, int64_t(meta.seed),
                              meta.world_size_at_save};
  broadcast(comm, v.data(), int(v.size()));
  meta.step = v[0], meta.sampler.epoch = v[1], meta.sampler.cursor = v[2], meta.seed = uint64_t(v[3]);
  meta.world_size_at_save = int(v[4]);
  broadcast_string(comm, meta.preset);
  broadcast_string(comm, meta.deck_text);
  broadcast_string(comm, meta.run_id);
  broadcast_vl_features(comm, meta.vl_features);
  broadcast_string(comm, meta.normalization);
}

void write_meta(CheckpointFile& f, const CheckpointMeta& meta) {
  f.set_attr("format", std::string(kCheckpointFormat));
  f.set_attr("step", meta.step);
  f.set_attr("sampler_epoch", meta.sampler.epoch);
  f.set_attr("sampler_cursor", meta.sampler.cursor);
  f.set_attr("seed", meta.seed);
  f.set_attr("preset", meta.preset);
  f.set_attr("world_size", int64_t(meta.world_size_at_save));
  f.set_attr("run_id", meta.run_id);
  f.set_attr("deck", meta.deck_text);
  write_vl_features(f, meta.vl_features);
  if (!meta.normalization.empty()) f.set_attr("normalization", meta.normalization);
}

// Rank 0's checks before any rank reads a tensor: the file holds reg's parameters and the
// moments of its trainable tensors (those of a tensor frozen now but trained when saved are
// not read), and nothing that is not a parameter.
void validate_tensors(const CheckpointFile& f, const ParamRegistry& reg, const ShardLayout& layout,
                      const std::string& preset) {
  for_each_tensor(reg, layout, [&](size_t g, const ParamInfo& t) {
    const std::string ds = dataset(kTensorGroups[g], t);
    if (g > 0 && !f.has(ds))
      f.fail(ds, str("missing: the tensor was frozen when the checkpoint was saved and is trained now; resume "
                     "with the same train.tune_* flags"));
    const std::vector<int64_t> shape = f.tensor_shape(ds);
    if (shape != t.shape)
      f.fail(ds, str("shape ", shape_text(shape), " in the checkpoint, ", shape_text(t.shape), " in the model (preset ",
                     preset, ")"));
  });
  for (const char* group : kTensorGroups)
    for (const std::string& name : f.members(str("/", group)))
      if (!reg.contains(name)) f.fail(str("/", group, "/", name), str("not a parameter of preset ", preset));
}

// What rank 0 learns of a checkpoint before any rank reads a tensor.
struct Validated {
  CheckpointMeta meta;
  std::vector<uint32_t> checksums;  // per tensor, in checksum_order
};

Validated validate(const std::string& path, const std::string& preset, const ParamRegistry& reg,
                   const ShardLayout& layout) {
  CheckpointFile f(path, MPI_COMM_NULL, CheckpointFile::Access::read);
  f.expect_complete();
  Validated v{read_checkpoint_meta(f), {}};
  if (v.meta.preset != preset)
    f.fail("/", str("checkpoint of preset ", quoted(v.meta.preset), ", this run uses preset ", quoted(preset)));
  validate_tensors(f, reg, layout, preset);
  for_each_tensor(reg, layout, [&](size_t g, const ParamInfo& t) {
    v.checksums.push_back(f.tensor_checksum(dataset(kTensorGroups[g], t)));
  });
  return v;
}

// Checksums of the tensors of reg in states as the rank's written slices partition them
// (every element in exactly one rank's piece, in rank order).
std::vector<uint32_t> whole_checksums(MPI_Comm comm, const ParamRegistry& reg, const ShardLayout& layout,
                                      const std::array<const float*, 3>& states) {
  const int rank = rank_in(comm), size = ranks_in(comm);
  std::vector<ChecksumPiece> pieces;
  for_each_tensor(reg, layout, [&](size_t g, const ParamInfo& t) {
    const TensorSlice s = written_slice(t, layout, rank, size);
    pieces.push_back(checksum_piece(states[g] + s.owned_offset, s.count));
  });
  return combine_checksums(comm, pieces);
}

// Free bytes of the file system holding dir for an unprivileged writer; unbounded when the
// file system cannot say.
int64_t free_bytes(const std::string& dir) {
  struct statvfs st {};
  if (statvfs(dir.c_str(), &st) != 0) return std::numeric_limits<int64_t>::max();
  return int64_t(st.f_bavail) * int64_t(st.f_frsize);
}

std::string megabytes(int64_t bytes) { return str((bytes + 999999) / 1000000, " MB"); }

void write_checkpoint_file(MPI_Comm comm, const std::string& tmp, const ParamRegistry& reg,
                           const ShardLayout& layout, const std::array<const float*, 3>& states,
                           const CheckpointMeta& meta, bool fail_write) {
  const int rank = rank_in(comm), size = ranks_in(comm);
  std::unique_ptr<CheckpointFile> f;
  run_agreed(comm, [&] { f = std::make_unique<CheckpointFile>(tmp, comm, CheckpointFile::Access::create); });
  // From here a failed operation leaves the ranks' HDF5 states inconsistent: closing the file
  // (collective) could wait forever in mismatched barriers, so it is abandoned instead.
  struct Abandon {
    std::unique_ptr<CheckpointFile>& file;
    ~Abandon() { (void)file.release(); }
  } abandon_on_failure{f};
  run_agreed(comm, [&] {
    write_meta(*f, meta);
    for (const char* group : kTensorGroups) f->create_group(str("/", group));
  });
  for_each_tensor(reg, layout, [&](size_t g, const ParamInfo& t) {
    const TensorSlice s = written_slice(t, layout, rank, size);
    const float* data = states[g] + s.owned_offset;
    run_agreed(comm, [&] {
      f->write_tensor(dataset(kTensorGroups[g], t), t.shape, s.begin, s.count, data);
      // After the collective write, as a real failure surfaces: on one rank, from its part.
      if (fail_write && rank == size - 1 && g == 1)
        throw Error(str(tmp, ":", dataset(kTensorGroups[g], t), ": write failed (injected by debug.ckpt_fail_step)"));
    });
  });
  const std::vector<uint32_t> checksums = whole_checksums(comm, reg, layout, states);
  run_agreed(comm, [&] {
    size_t i = 0;
    for_each_tensor(reg, layout,
                    [&](size_t g, const ParamInfo& t) { f->set_tensor_checksum(dataset(kTensorGroups[g], t), checksums[i++]); });
  });
  run_agreed(comm, [&] {
    f->sync();
    f->set_attr("complete", int64_t(1));
    f->close();
  });
  f.reset();
}

}  // namespace

CheckpointMeta read_checkpoint_meta(const CheckpointFile& f) {
  CheckpointMeta meta;
  meta.step = f.attr_int("step");
  meta.sampler.epoch = f.attr_int("sampler_epoch");
  meta.sampler.cursor = f.attr_int("sampler_cursor");
  meta.seed = f.attr_uint("seed");
  meta.preset = f.attr_string("preset");
  meta.world_size_at_save = int(f.attr_int("world_size"));
  meta.deck_text = f.attr_string("deck");
  if (f.has_attr("run_id")) meta.run_id = f.attr_string("run_id");
  meta.vl_features = read_vl_features(f);
  if (f.has_attr("normalization")) meta.normalization = f.attr_string("normalization");
  return meta;
}

CheckpointReader::CheckpointReader(const std::string& path) : file_(path, MPI_COMM_NULL, CheckpointFile::Access::read) {
  file_.expect_complete();
  meta_ = read_checkpoint_meta(file_);
}

void CheckpointReader::read_param(const std::string& name, const std::vector<int64_t>& shape, float* out) const {
  const std::string ds = str("/params/", name);
  const std::vector<int64_t> stored = file_.tensor_shape(ds);
  if (stored != shape)
    file_.fail(ds, str("shape ", shape_text(stored), " in the checkpoint, ", shape_text(shape), " in the model"));
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  file_.read_verified_tensor(ds, n, out);
}

int64_t checkpoint_bytes(const ParamRegistry& reg, const ShardLayout& layout, size_t deck_size) {
  const StoredSize n = stored_size(reg, layout);
  return n.elements * int64_t(sizeof(float)) + n.tensors * 2048 + int64_t(deck_size) + (64 << 10);
}

std::string save_checkpoint(MPI_Comm comm, const std::string& dir, const ParamRegistry& reg, const ShardLayout& layout,
                            const float* owned_params, OptimizerState optimizer, const CheckpointMeta& meta,
                            int keep, bool fail_write) {
  const Clock::time_point start = Clock::now();
  const int rank = rank_in(comm), size = ranks_in(comm);
  CheckpointMeta stored = meta;
  stored.world_size_at_save = size;
  broadcast_meta(comm, stored);
  const std::string path = dir + "/" + checkpoint_file_name(stored.step), tmp = path + ".tmp";
  const int64_t needed = checkpoint_bytes(reg, layout, stored.deck_text.size() + stored.normalization.size());
  int64_t available = 0;
  std::string owner;  // the run of an existing checkpoint of this step
  run_agreed(comm, [&] {
    if (rank != 0) return;
    make_dirs(dir);
    available = free_bytes(dir);
    if (path_exists(path)) owner = checkpoint_run_id(path);
  });
  broadcast(comm, &available, 1);
  broadcast_string(comm, owner);
  if (available < needed)
    throw CheckpointNotWritten(str("checkpoint step ", stored.step, ": no space left on ", dir, ", needed ",
                                   megabytes(needed), ", ", megabytes(available), " free"));
  if (!owner.empty() && owner != stored.run_id)
    throw CheckpointNotWritten(str("checkpoint step ", stored.step, ": ", path, " is a checkpoint of run '", owner,
                                   "', not replaced by run '", stored.run_id,
                                   "'; give this run its own train.ckpt_dir or run.name"));
  try {
    write_checkpoint_file(comm, tmp, reg, layout, {owned_params, optimizer.exp_avg, optimizer.exp_avg_sq}, stored,
                          fail_write);
  } catch (const Error& e) {
    std::string now_free;
    if (rank == 0) {
      std::remove(tmp.c_str());
      now_free = megabytes(free_bytes(dir));
    }
    broadcast_string(comm, now_free);
    throw AgreedError(str("checkpoint step ", stored.step, ": writing failed (", e.what(), "); ", now_free,
                          " free on ", dir, ", needed ", megabytes(needed), "; the partial file was removed"));
  }
  run_agreed(comm, [&] {
    if (rank != 0) return;
    publish_durably(tmp, path);
    write_file_durable(dir + "/" + kLatestName, checkpoint_file_name(stored.step) + "\n");
    if (keep > 0) prune_checkpoints(dir, keep, stored.run_id);
  });
  log_info("checkpoint: wrote ", path, " (step ", stored.step, ", ", transfer_summary(reg, layout, start), ")");
  return path;
}

CheckpointMeta load_checkpoint(MPI_Comm comm, const std::string& path, const std::string& preset,
                               const ParamRegistry& reg, const ShardLayout& layout, float* owned_params,
                               OptimizerState optimizer) {
  const Clock::time_point start = Clock::now();
  const int rank = rank_in(comm);
  Validated v;
  run_agreed(comm, [&] {
    if (rank == 0) v = validate(path, preset, reg, layout);
  });
  CheckpointMeta& meta = v.meta;
  broadcast_meta(comm, meta);
  v.checksums.resize(size_t(stored_size(reg, layout).tensors));
  broadcast(comm, v.checksums.data(), int(v.checksums.size()));
  std::unique_ptr<CheckpointFile> f;
  run_agreed(comm, [&] { f = std::make_unique<CheckpointFile>(path, comm, CheckpointFile::Access::read); });
  const std::array<float*, 3> states = {owned_params, optimizer.exp_avg, optimizer.exp_avg_sq};
  for_each_tensor(reg, layout, [&](size_t g, const ParamInfo& t) {
    const TensorSlice s = owned_slice(t, layout);
    float* data = states[g] + s.owned_offset;
    run_agreed(comm, [&] { f->read_tensor(dataset(kTensorGroups[g], t), s.begin, s.count, data); });
  });
  run_agreed(comm, [&] { f->close(); });
  // Every rank compares the same whole-tensor checksums, so every rank throws the same error.
  const std::vector<uint32_t> loaded = whole_checksums(comm, reg, layout, {owned_params, optimizer.exp_avg, optimizer.exp_avg_sq});
  size_t i = 0;
  for_each_tensor(reg, layout, [&](size_t g, const ParamInfo& t) {
    if (loaded[i] != v.checksums[i])
      throw Error(str(path, ":", dataset(kTensorGroups[g], t), ": ", checksum_mismatch(v.checksums[i], loaded[i])));
    ++i;
  });
  log_info("checkpoint: loaded ", path, " (step ", meta.step, ", saved on ", meta.world_size_at_save, " rank(s), ",
           transfer_summary(reg, layout, start), ")");
  return meta;
}

CheckpointMeta load_first_valid(MPI_Comm comm, const std::vector<std::string>& candidates, const std::string& preset,
                                const ParamRegistry& reg, const ShardLayout& layout, float* owned_params,
                                OptimizerState optimizer, std::string* loaded) {
  EMB_ASSERT(!candidates.empty());
  for (size_t i = 0;; ++i) {
    try {
      CheckpointMeta meta = load_checkpoint(comm, candidates[i], preset, reg, layout, owned_params, optimizer);
      *loaded = candidates[i];
      return meta;
    } catch (const Error& e) {
      if (i + 1 == candidates.size()) throw;
      if (rank_in(comm) == 0) log_warn(e.what(), "; falling back to the previous checkpoint, ", candidates[i + 1]);
    }
  }
}

}  // namespace emb
