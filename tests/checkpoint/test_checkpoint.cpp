// Checkpoints of the tiny_wan registry: saved by N ranks in one shard mode and loaded by M
// ranks in another (N → N, N → 1, N → N−1, 1 → N, N−1 → N over RANKS 1 2 3 4, with
// different bucket sizes), every restored element compared exactly; torn, temporary and
// truncated files refused and skipped by resume = auto; validation errors on every rank
// with one line naming the file and the dataset.
#define BOOST_TEST_MODULE checkpoint
#include <boost/test/unit_test.hpp>

#include <hdf5.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "checkpoint/checkpoint_fixture.hpp"
#include "comm/agreement.hpp"
#include "comm/world_fixture.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/log.hpp"
#include "model/model.hpp"
#include "model/presets.hpp"
#include "checkpoint/checkpoint.hpp"
#include "checkpoint/checkpoint_dir.hpp"
#include "checkpoint/checkpoint_file.hpp"
#include "checkpoint/checkpoint_lock.hpp"
#include "error_of.hpp"

using namespace emb;
using emb::test::error_of;
namespace fs = std::filesystem;

BOOST_TEST_GLOBAL_FIXTURE(WorldFixture);

namespace {

constexpr uint64_t kSeed = 0xF00DFACE12345678ull;  // beyond double precision: stored as uint64
constexpr int64_t kBucketBytes = 64 << 10;
const std::string kRunId = "0123456789abcdef";

const ParamRegistry& tiny_registry() {
  static const std::unique_ptr<Model> model = make_model(preset_config("tiny_wan"), nullptr);
  return model->params();
}

CheckpointMeta meta_at(int64_t step, const std::string& preset = "tiny_wan") {
  CheckpointMeta m;
  m.step = step;
  m.sampler = SamplerState{step / 4, 17 * step};
  m.seed = kSeed;
  m.preset = preset;
  m.deck_text = str("[model]\npreset = ", preset, "\n[train]\nsteps = ", step, "\n");
  m.run_id = kRunId;
  return m;
}

struct CommInfo {
  int rank = 0, size = 1;
};
CommInfo info(MPI_Comm comm) {
  CommInfo c;
  MPI_Comm_rank(comm, &c.rank);
  MPI_Comm_size(comm, &c.size);
  return c;
}

std::string save_states(MPI_Comm comm, const std::string& dir, const ParamRegistry& reg, ShardMode mode,
                        const CheckpointMeta& meta, int64_t bucket_bytes = 0, int keep = 0) {
  const CommInfo c = info(comm);
  ShardLayout layout(reg, mode, c.rank, c.size, bucket_bytes);
  OwnedStates s = expected_states(layout, meta.step);
  return save_checkpoint(comm, dir, reg, layout, s.params.data(), OptimizerState{s.exp_avg.data(), s.exp_avg_sq.data()},
                         meta, keep);
}

int64_t mismatches(const std::vector<float>& got, const std::vector<float>& want) {
  int64_t bad = 0;
  for (size_t i = 0; i < want.size(); ++i) bad += got[i] != want[i];
  return bad;
}

// Loads `path` on comm in `mode` and checks every owned element and the metadata.
void check_load(MPI_Comm comm, const std::string& path, ShardMode mode, int64_t step, int saved_on,
                int64_t bucket_bytes) {
  const CommInfo c = info(comm);
  const ParamRegistry& reg = tiny_registry();
  ShardLayout layout(reg, mode, c.rank, c.size, bucket_bytes);
  OwnedStates got = blank_states(layout);
  CheckpointMeta meta = load_checkpoint(comm, path, "tiny_wan", reg, layout, got.params.data(),
                                        OptimizerState{got.exp_avg.data(), got.exp_avg_sq.data()});
  const OwnedStates want = expected_states(layout, step);
  BOOST_TEST(mismatches(got.params, want.params) == 0);
  BOOST_TEST(mismatches(got.exp_avg, want.exp_avg) == 0);
  BOOST_TEST(mismatches(got.exp_avg_sq, want.exp_avg_sq) == 0);
  const CheckpointMeta expected = meta_at(step);
  BOOST_TEST(meta.step == step);
  BOOST_TEST((meta.sampler == expected.sampler));
  BOOST_TEST(meta.seed == kSeed);
  BOOST_TEST(meta.preset == "tiny_wan");
  BOOST_TEST(meta.deck_text == expected.deck_text);
  BOOST_TEST(meta.world_size_at_save == saved_on);
  BOOST_TEST(meta.run_id == kRunId);
}

// The checkpoint resolve_resume prefers for run kRunId, "" for a fresh start.
std::string resume_path(const std::string& setting, const std::string& dir) {
  const std::vector<std::string> candidates = resolve_resume(test_world().comm, setting, dir, kRunId);
  return candidates.empty() ? "" : candidates.front();
}

// The first N−1 ranks of the world (N > 1), MPI_COMM_NULL elsewhere.
MPI_Comm all_but_last(const World& w) {
  MPI_Comm sub = MPI_COMM_NULL;
  MPI_Comm_split(w.comm, w.rank < w.size - 1 ? 0 : MPI_UNDEFINED, w.rank, &sub);
  return sub;
}

std::string load_error(const std::string& path, const std::string& preset = "tiny_wan") {
  const World& w = test_world();
  ShardLayout layout(tiny_registry(), ShardMode::full, w.rank, w.size);
  OwnedStates got = blank_states(layout);
  return error_of([&] {
    load_checkpoint(w.comm, path, preset, tiny_registry(), layout, got.params.data(),
                    OptimizerState{got.exp_avg.data(), got.exp_avg_sq.data()});
  });
}

// Runs f on rank 0 only (serial edits of a saved file), then lets every rank continue.
void on_rank0(const std::function<void()>& f) {
  if (test_world().rank == 0) f();
  MPI_Barrier(test_world().comm);
}

void truncate_to_half(const std::string& path) { fs::resize_file(path, fs::file_size(path) / 2); }

// Flips one bit inside /<group>/<t> of checkpoint `path` (its crc32 no longer matches).
void flip_param_byte(const std::string& path, const ParamInfo& t, const std::string& group = "params") {
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t d = H5Dopen2(f, ("/" + group + "/" + t.name).c_str(), H5P_DEFAULT);
  const haddr_t offset = H5Dget_offset(d);
  H5Dclose(d);
  H5Fclose(f);
  BOOST_REQUIRE(offset != HADDR_UNDEF);
  std::fstream io(path, std::ios::in | std::ios::out | std::ios::binary);
  io.seekg(std::streamoff(offset + 5));
  char byte = 0;
  io.read(&byte, 1);
  byte ^= 0x10;
  io.seekp(std::streamoff(offset + 5));
  io.write(&byte, 1);
}

// The lines rank 0 logs (warnings included) while f runs.
std::vector<std::string> logged_lines(const std::string& log, const std::function<void()>& f) {
  set_log_file(log);
  f();
  set_log_file("");
  std::vector<std::string> lines;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  fs::remove(log);
  return lines;
}

void delete_complete_marker(const std::string& path) {
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  BOOST_REQUIRE(f >= 0);
  BOOST_REQUIRE(H5Adelete(f, "complete") >= 0);
  H5Fclose(f);
}

// tiny_wan's tensors, with `drop` left out, `transpose` stored with its two dimensions
// swapped and `extra` added at the end.
ParamRegistry registry_variant(const std::string& drop, const std::string& transpose, const std::string& extra) {
  const ParamRegistry& base = tiny_registry();
  ParamRegistry reg;
  int unit = -1;
  for (const ParamInfo& t : base.all()) {
    if (t.unit != unit) reg.begin_unit(base.unit(unit = t.unit).name);
    if (t.name == drop) continue;
    std::vector<int64_t> shape = t.shape;
    if (t.name == transpose) std::swap(shape[0], shape[1]);
    reg.add(t.name, shape, t.init, t.decay);
  }
  if (!extra.empty()) reg.add(extra, {3}, ParamInit::zeros, false);
  return reg;
}

// A 2-D tensor of tiny_wan with distinct dimensions.
const ParamInfo& rectangular_tensor() {
  for (const ParamInfo& t : tiny_registry().all())
    if (t.shape.size() == 2 && t.shape[0] != t.shape[1]) return t;
  throw Error("tiny_wan has no rectangular tensor");
}

}  // namespace

BOOST_AUTO_TEST_CASE(values_are_exact_in_fp32) {
  BOOST_REQUIRE(tiny_registry().total() < (int64_t(1) << 24));
}

BOOST_AUTO_TEST_CASE(reshard_across_rank_counts_and_shard_modes) {
  const World& w = test_world();
  ScratchDir dir(w.comm, "embtrain_ckpt_reshard");
  const ShardMode modes[] = {ShardMode::none, ShardMode::grads, ShardMode::full};
  MPI_Comm sub = all_but_last(w);
  int64_t step = 100;
  for (int i = 0; i < 3; ++i) {
    const ShardMode save_mode = modes[i], load_mode = modes[(i + 1) % 3];
    BOOST_TEST_CONTEXT("save shard mode " << i << ", load shard mode " << (i + 1) % 3) {
      // N ranks save; N, 1 and N−1 ranks load.
      ++step;
      const std::string path = save_states(w.comm, dir.path() + "/world", tiny_registry(), save_mode, meta_at(step));
      BOOST_TEST(path == dir.path() + "/world/" + checkpoint_file_name(step));
      check_load(w.comm, path, load_mode, step, w.size, kBucketBytes);
      check_load(MPI_COMM_SELF, path, load_mode, step, w.size, 0);
      if (sub != MPI_COMM_NULL) check_load(sub, path, load_mode, step, w.size, kBucketBytes);
      MPI_Barrier(w.comm);

      // 1 rank saves, N load.
      ++step;
      std::string self_path;
      if (w.rank == 0)
        self_path =
            save_states(MPI_COMM_SELF, dir.path() + "/self", tiny_registry(), save_mode, meta_at(step), kBucketBytes);
      broadcast_string(w.comm, self_path);
      check_load(w.comm, self_path, load_mode, step, 1, 0);

      // N−1 ranks save, N load.
      if (w.size > 1) {
        ++step;
        std::string sub_path;
        if (sub != MPI_COMM_NULL)
          sub_path = save_states(sub, dir.path() + "/sub", tiny_registry(), save_mode, meta_at(step), kBucketBytes);
        broadcast_string(w.comm, sub_path);
        check_load(w.comm, sub_path, load_mode, step, w.size - 1, 0);
      }
    }
  }
  if (sub != MPI_COMM_NULL) MPI_Comm_free(&sub);
}

// Frozen tensors (train/freezing.hpp) have no AdamW moments: the file stores /params of every
// tensor and the moments of the trainable ones only, is that much smaller, and reshards N -> 1
// and 1 -> N like any other; a run that trains a tensor the checkpoint froze is refused.
BOOST_AUTO_TEST_CASE(frozen_tensors_store_no_moments_and_reshard) {
  const World& w = test_world();
  ScratchDir dir(w.comm, "embtrain_ckpt_frozen");
  const ParamRegistry& reg = tiny_registry();
  std::vector<bool> frozen(size_t(reg.size()));
  int64_t frozen_elements = 0;
  for (int i = 0; i < reg.size(); ++i)
    if (reg[i].unit == 1 || i % 3 == 0) frozen[size_t(i)] = true, frozen_elements += reg[i].numel;  // whole and partial units
  BOOST_REQUIRE(0 < frozen_elements && frozen_elements < reg.total());

  auto save = [&](MPI_Comm comm, const std::string& to, ShardMode mode, int64_t step) {
    const CommInfo c = info(comm);
    const ShardLayout layout(reg, mode, c.rank, c.size, kBucketBytes, frozen);
    OwnedStates s = expected_states(layout, step);
    return save_checkpoint(comm, to, reg, layout, s.params.data(), OptimizerState{s.exp_avg.data(), s.exp_avg_sq.data()},
                           meta_at(step));
  };
  auto check = [&](MPI_Comm comm, const std::string& path, ShardMode mode, int64_t step) {
    const CommInfo c = info(comm);
    const ShardLayout layout(reg, mode, c.rank, c.size, 0, frozen);
    OwnedStates got = blank_states(layout);
    load_checkpoint(comm, path, "tiny_wan", reg, layout, got.params.data(),
                    OptimizerState{got.exp_avg.data(), got.exp_avg_sq.data()});
    const OwnedStates want = expected_states(layout, step);
    BOOST_TEST(mismatches(got.params, want.params) == 0);
    int64_t bad = 0;  // the moments of trainable elements restored, those of frozen ones untouched
    for (const DecaySegment& r : layout.trainable_runs())
      for (int64_t i = r.owned_offset; i < r.owned_offset + r.count; ++i)
        bad += got.exp_avg[size_t(i)] != want.exp_avg[size_t(i)] || got.exp_avg_sq[size_t(i)] != want.exp_avg_sq[size_t(i)];
    BOOST_TEST(bad == 0);
    BOOST_TEST(layout.trainable_owned_total() < layout.owned_total());
  };

  const std::string path = save(w.comm, dir.path() + "/world", ShardMode::full, 5);
  check(w.comm, path, ShardMode::none, 5);
  check(MPI_COMM_SELF, path, ShardMode::full, 5);
  std::string self_path;
  if (w.rank == 0) self_path = save(MPI_COMM_SELF, dir.path() + "/self", ShardMode::none, 6);
  broadcast_string(w.comm, self_path);
  check(w.comm, self_path, ShardMode::full, 6);

  int64_t moments = 0;
  {
    CheckpointFile f(path, MPI_COMM_NULL, CheckpointFile::Access::read);
    BOOST_TEST(f.members("/params").size() == size_t(reg.size()));
    for (const std::string& name : f.members("/exp_avg")) moments += reg.get(name).numel;
    BOOST_TEST(f.members("/exp_avg_sq") == f.members("/exp_avg"));
  }
  BOOST_TEST(moments == reg.total() - frozen_elements);
  const ShardLayout frozen_layout(reg, ShardMode::full, w.rank, w.size, 0, frozen);
  const ShardLayout full_layout(reg, ShardMode::full, w.rank, w.size);
  BOOST_TEST(checkpoint_bytes(reg, full_layout, 0) - checkpoint_bytes(reg, frozen_layout, 0) >=
             2 * frozen_elements * int64_t(sizeof(float)));
  BOOST_TEST(int64_t(fs::file_size(path)) <= checkpoint_bytes(reg, frozen_layout, meta_at(5).deck_text.size()));

  const std::string e = load_error(path);  // every tensor trained now
  BOOST_TEST(e.find("/exp_avg/" + reg[0].name) != std::string::npos);
  BOOST_TEST(e.find("frozen when the checkpoint was saved") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(file_layout_and_latest_pointer) {
  const World& w = test_world();
  ScratchDir dir(w.comm, "embtrain_ckpt_layout");
  const std::string path = save_states(w.comm, dir.path(), tiny_registry(), ShardMode::full, meta_at(7));
  std::ifstream latest(dir.path() + "/latest");
  std::string name;
  latest >> name;
  BOOST_TEST(name == "step_00000007.h5");
  BOOST_TEST(!fs::exists(path + ".tmp"));
  // Every tensor of every state is stored whole under its registry name, with its shape.
  CheckpointFile f(path, MPI_COMM_NULL, CheckpointFile::Access::read);
  BOOST_TEST(f.attr_string("format") == "embtrain-ckpt/1");
  BOOST_TEST(f.attr_int("complete") == 1);
  BOOST_TEST(f.attr_int("world_size") == w.size);
  const ParamInfo& t = rectangular_tensor();
  for (const std::string group : {"/params", "/exp_avg", "/exp_avg_sq"}) {
    BOOST_TEST(f.members(group).size() == tiny_registry().all().size());
    BOOST_TEST(f.tensor_shape(group + "/" + t.name) == t.shape);
  }
  std::vector<float> values(size_t(t.numel));
  f.read_tensor("/exp_avg/" + t.name, 0, t.numel, values.data());
  for (int64_t i = 0; i < t.numel; ++i) BOOST_TEST_REQUIRE(values[size_t(i)] == state_value(1, t.offset + i, 7));
}

BOOST_AUTO_TEST_CASE(torn_and_temporary_checkpoints_are_never_loaded) {
  const World& w = test_world();
  ScratchDir dir(w.comm, "embtrain_ckpt_torn");
  const std::string p1 = save_states(w.comm, dir.path(), tiny_registry(), ShardMode::grads, meta_at(1));
  const std::string p2 = save_states(w.comm, dir.path(), tiny_registry(), ShardMode::grads, meta_at(2));
  BOOST_TEST(resume_path("auto", dir.path()) == p2);

  // Step 2 lost its completion marker: refused; `latest` (naming it) is not trusted.
  on_rank0([&] { delete_complete_marker(p2); });
  BOOST_TEST(load_error(p2) == p2 + ":/: incomplete checkpoint (no 'complete' marker: the write was torn)");
  BOOST_TEST(resume_path("auto", dir.path()) == p1);
  check_load(w.comm, resume_path("auto", dir.path()), ShardMode::none, 1, w.size, 0);

  // Truncated: refused, skipped.
  on_rank0([&] { truncate_to_half(p2); });
  BOOST_TEST(load_error(p2) == p2 + ": cannot open as HDF5 (truncated or corrupt file)");
  BOOST_TEST(resume_path("auto", dir.path()) == p1);

  // A complete file still under its temporary name, even when `latest` names it.
  const std::string tmp = dir.path() + "/" + checkpoint_file_name(3) + ".tmp";
  on_rank0([&] {
    fs::copy_file(p1, tmp);
    write_file_atomic(dir.path() + "/latest", checkpoint_file_name(3) + ".tmp\n");
  });
  BOOST_TEST(load_error(tmp) == tmp + ": a temporary checkpoint (still being written, or torn): never loaded");
  BOOST_TEST(resume_path("auto", dir.path()) == p1);

  // `latest` names a file that is gone.
  on_rank0([&] { write_file_atomic(dir.path() + "/latest", checkpoint_file_name(9) + "\n"); });
  BOOST_TEST(resume_path("auto", dir.path()) == p1);

  // Nothing complete left, only the truncated step 2: refused with one line (never a silent
  // fresh start over a run's broken checkpoints).
  on_rank0([&] { fs::remove(p1); });
  int code = 0;
  std::string error;
  try {
    resume_path("auto", dir.path());
  } catch (const Error& e) {
    error = e.what(), code = e.exit_code();
  }
  BOOST_TEST(code == kExitInput);
  BOOST_TEST(error == str("train.resume = auto: none of the 1 checkpoints in ", dir.path(),
                          " is complete (newest step_00000002.h5); to start fresh set train.resume = off or give "
                          "this run its own train.ckpt_dir"));
}

// A run stopped after publishing step 3 but before pointing `latest` at it: `latest` (still
// naming step 2) is only a hint, the newest complete checkpoint is the one every rank resumes
// from; a newest one whose tensor is corrupt is skipped at load for the next older one.
BOOST_AUTO_TEST_CASE(resume_prefers_the_newest_complete_checkpoint_over_latest) {
  const World& w = test_world();
  ScratchDir dir(w.comm, "embtrain_ckpt_lagging_latest");
  save_states(w.comm, dir.path(), tiny_registry(), ShardMode::grads, meta_at(2));
  const std::string p3 = save_states(w.comm, dir.path(), tiny_registry(), ShardMode::grads, meta_at(3));
  on_rank0([&] { write_file_atomic(dir.path() + "/latest", checkpoint_file_name(2) + "\n"); });
  const std::vector<std::string> candidates = resolve_resume(w.comm, "auto", dir.path(), kRunId);
  const std::vector<std::string> newest_first = {p3, dir.path() + "/" + checkpoint_file_name(2)};
  BOOST_TEST(candidates == newest_first, boost::test_tools::per_element());
  std::string rank0_choice = candidates.front();
  broadcast_string(w.comm, rank0_choice);
  BOOST_TEST(candidates.front() == rank0_choice);  // every rank agrees
  check_load(w.comm, candidates.front(), ShardMode::full, 3, w.size, kBucketBytes);
}

BOOST_AUTO_TEST_CASE(resume_settings) {
  const World& w = test_world();
  ScratchDir dir(w.comm, "embtrain_ckpt_resume");
  BOOST_TEST(resume_path("off", dir.path()).empty());
  BOOST_TEST(resume_path("auto", dir.path() + "/never_created").empty());
  const std::string missing = dir.path() + "/step_00000005.h5";
  BOOST_TEST(error_of([&] { resume_path(missing, dir.path()); }) ==
             "train.resume: checkpoint " + missing + ": cannot open: No such file or directory");
  const std::string p = save_states(w.comm, dir.path(), tiny_registry(), ShardMode::none, meta_at(5));
  BOOST_TEST(resume_path(p, "") == p);
}

// Another run's checkpoint (step 30) shares the directory: pruning keeps it and the newest
// two of this run, and resume = auto continues this run, not the other one.
BOOST_AUTO_TEST_CASE(keep_deletes_all_but_the_newest_of_this_run) {
  const World& w = test_world();
  ScratchDir dir(w.comm, "embtrain_ckpt_keep");
  CheckpointMeta other = meta_at(30);
  other.run_id = "other-run";
  save_states(w.comm, dir.path(), tiny_registry(), ShardMode::full, other, 0, 2);
  for (int64_t step = 8; step <= 16; step += 4)
    save_states(w.comm, dir.path(), tiny_registry(), ShardMode::full, meta_at(step), 0, 2);
  const std::vector<std::string> kept = {checkpoint_file_name(12), checkpoint_file_name(16), checkpoint_file_name(30)};
  BOOST_TEST(list_checkpoints(dir.path()) == kept, boost::test_tools::per_element());
  BOOST_TEST(checkpoint_run_id(dir.path() + "/" + checkpoint_file_name(30)) == "other-run");
  const std::vector<std::string> candidates = resolve_resume(w.comm, "auto", dir.path(), kRunId);
  const std::vector<std::string> ours = {dir.path() + "/" + checkpoint_file_name(16),
                                         dir.path() + "/" + checkpoint_file_name(12)};
  BOOST_TEST(candidates == ours, boost::test_tools::per_element());
}

// resume = auto never continues another run; naming its checkpoint does.
BOOST_AUTO_TEST_CASE(auto_resume_refuses_another_runs_checkpoints) {
  const World& w = test_world();
  ScratchDir dir(w.comm, "embtrain_ckpt_foreign");
  CheckpointMeta other = meta_at(30);
  other.run_id = "other-run";
  const std::string p = save_states(w.comm, dir.path(), tiny_registry(), ShardMode::grads, other);
  int code = 0;
  std::string error;
  try {
    resolve_resume(w.comm, "auto", dir.path(), kRunId);
  } catch (const Error& e) {
    error = e.what(), code = e.exit_code();
  }
  BOOST_TEST(code == kExitInput);
  BOOST_TEST(error == str("train.resume = auto: ", dir.path(), " holds checkpoints of other runs only (newest ", p,
                          ", run id 'other-run'; this deck is run '", kRunId,
                          "': another seed, model, data or optimizer setting); to continue it set train.resume = ", p,
                          ", to start fresh give this run its own train.ckpt_dir or run.name"));
  BOOST_TEST(resume_path(p, dir.path()) == p);
}

// The stored crc32 of a tensor is zlib's CRC-32 of its whole fp32 data, whatever rank
// count wrote it.
BOOST_AUTO_TEST_CASE(tensor_checksums_are_the_crc_of_the_whole_tensor) {
  const World& w = test_world();
  ScratchDir dir(w.comm, "embtrain_ckpt_crc");
  const std::string path = save_states(w.comm, dir.path(), tiny_registry(), ShardMode::full, meta_at(3), kBucketBytes);
  CheckpointFile f(path, MPI_COMM_NULL, CheckpointFile::Access::read);
  const ParamInfo& t = rectangular_tensor();
  const std::vector<float> flat = flat_state(2, tiny_registry().total(), 3);
  const uLong want = crc32_z(0, reinterpret_cast<const Bytef*>(flat.data() + t.offset), size_t(t.numel) * 4);
  BOOST_TEST(f.tensor_checksum("/exp_avg_sq/" + t.name) == uint32_t(want));
}

// One flipped byte in a tensor: the load fails naming the tensor, and resuming falls back
// to the previous complete checkpoint.
BOOST_AUTO_TEST_CASE(corrupt_tensor_is_refused_and_resume_falls_back) {
  const World& w = test_world();
  ScratchDir dir(w.comm, "embtrain_ckpt_corrupt");
  save_states(w.comm, dir.path(), tiny_registry(), ShardMode::grads, meta_at(1));
  const std::string p2 = save_states(w.comm, dir.path(), tiny_registry(), ShardMode::grads, meta_at(2));
  const ParamInfo& t = rectangular_tensor();
  on_rank0([&] { flip_param_byte(p2, t); });
  const std::string error = load_error(p2);
  BOOST_TEST(error.rfind(p2 + ":/params/" + t.name + ": checksum mismatch (crc32 ", 0) == 0, error);
  BOOST_TEST(error.find("the file is corrupt") != std::string::npos, error);

  ShardLayout layout(tiny_registry(), ShardMode::full, w.rank, w.size, kBucketBytes);
  OwnedStates got = blank_states(layout);
  std::string loaded;
  const CheckpointMeta meta =
      load_first_valid(w.comm, resolve_resume(w.comm, "auto", dir.path(), kRunId), "tiny_wan", tiny_registry(),
                       layout, got.params.data(), OptimizerState{got.exp_avg.data(), got.exp_avg_sq.data()}, &loaded);
  BOOST_TEST(loaded == dir.path() + "/" + checkpoint_file_name(1));
  BOOST_TEST(meta.step == 1);
  BOOST_TEST(mismatches(got.params, expected_states(layout, 1).params) == 0);
}

// What export, embsim eval and rl.init take from a folder (verified_checkpoints) follows
// resume's rule, not `latest`: the newest complete checkpoint; a newest one with a corrupt
// tensor is skipped with one warning line naming it; nothing valid is one error line, exit 2.
// Readers of trained weights check the parameters only: a corrupt moment skips a checkpoint
// only where the moments are read (an RL run resumed).
BOOST_AUTO_TEST_CASE(tools_take_the_newest_verified_checkpoint_of_a_folder) {
  const World& w = test_world();
  ScratchDir dir(w.comm, "embtrain_ckpt_tools");
  const std::string p2 = save_states(w.comm, dir.path(), tiny_registry(), ShardMode::grads, meta_at(2));
  const std::string p3 = save_states(w.comm, dir.path(), tiny_registry(), ShardMode::grads, meta_at(3));
  on_rank0([&] {
    write_file_atomic(dir.path() + "/latest", checkpoint_file_name(2) + "\n");
    const CheckedTensors params = CheckedTensors::parameters, all = CheckedTensors::parameters_and_moments;
    BOOST_TEST(verified_checkpoints(dir.path(), params, 1) == std::vector<std::string>{p3},
               boost::test_tools::per_element());
    const std::string run = dir.path() + "/run";  // a run's output folder: its ckpt_dir file names the folder
    fs::create_directories(run);
    write_file_atomic(run + "/ckpt_dir", dir.path() + "\n");
    const std::vector<std::string> newest_first = {p3, p2};
    BOOST_TEST(verified_checkpoints(run, params) == newest_first, boost::test_tools::per_element());
    BOOST_TEST(verified_checkpoints(p2, params) == std::vector<std::string>{p2}, boost::test_tools::per_element());

    const ParamInfo& t = rectangular_tensor();
    flip_param_byte(p3, t, "exp_avg");
    BOOST_TEST(verified_checkpoints(dir.path(), params, 1) == std::vector<std::string>{p3},
               boost::test_tools::per_element());
    std::vector<std::string> resumable;
    const std::vector<std::string> moment_lines =
        logged_lines(dir.path() + "/moments.log", [&] { resumable = verified_checkpoints(dir.path(), all, 1); });
    BOOST_TEST(resumable == std::vector<std::string>{p2}, boost::test_tools::per_element());
    BOOST_TEST_REQUIRE(moment_lines.size() == 1u);
    BOOST_TEST(moment_lines[0].find(p3 + ":/exp_avg/" + t.name + ": checksum mismatch") != std::string::npos,
               moment_lines[0]);

    flip_param_byte(p3, t);
    std::vector<std::string> taken;
    const std::vector<std::string> lines =
        logged_lines(dir.path() + "/warnings.log", [&] { taken = verified_checkpoints(dir.path(), params, 1); });
    BOOST_TEST(taken == std::vector<std::string>{p2}, boost::test_tools::per_element());
    BOOST_TEST_REQUIRE(lines.size() == 1u);
    const std::string skipped = "warning: skipping " + p3 + ":/params/" + t.name + ": checksum mismatch (crc32 ";
    BOOST_TEST(lines[0].find(skipped) != std::string::npos, lines[0]);

    delete_complete_marker(p2);
    int code = 0;
    std::string error;
    try {
      verified_checkpoints(run, params);
    } catch (const Error& e) {
      error = e.what(), code = e.exit_code();
    }
    BOOST_TEST(code == kExitInput);
    BOOST_TEST(error == str(run, ": no complete checkpoint with intact tensors in ", dir.path(),
                            " (2 step_*.h5 files; train.ckpt_every > 0 writes them)"));
  });
}

BOOST_AUTO_TEST_CASE(validation_errors_name_file_and_dataset) {
  const World& w = test_world();
  ScratchDir dir(w.comm, "embtrain_ckpt_errors");
  const ParamInfo& rect = rectangular_tensor();
  const std::string dropped = tiny_registry()[3].name;

  const ParamRegistry missing = registry_variant(dropped, "", "");
  std::string path = save_states(w.comm, dir.path() + "/missing", missing, ShardMode::full, meta_at(1));
  BOOST_TEST(load_error(path) == path + ":/params/" + dropped + ": missing");

  const ParamRegistry transposed = registry_variant("", rect.name, "");
  path = save_states(w.comm, dir.path() + "/shape", transposed, ShardMode::grads, meta_at(1));
  BOOST_TEST(load_error(path) == str(path, ":/params/", rect.name, ": shape [", rect.shape[1], ", ", rect.shape[0],
                                     "] in the checkpoint, [", rect.shape[0], ", ", rect.shape[1],
                                     "] in the model (preset tiny_wan)"));

  const ParamRegistry extra = registry_variant("", "", "extra.scale");
  path = save_states(w.comm, dir.path() + "/extra", extra, ShardMode::none, meta_at(1));
  BOOST_TEST(load_error(path) == path + ":/params/extra.scale: not a parameter of preset tiny_wan");

  path = save_states(w.comm, dir.path() + "/preset", tiny_registry(), ShardMode::full, meta_at(1, "tiny_gr00t"));
  BOOST_TEST(load_error(path) == path + ":/: checkpoint of preset 'tiny_gr00t', this run uses preset 'tiny_wan'");

  const std::string text = dir.path() + "/notes.h5";
  on_rank0([&] { write_file_atomic(text, "not a checkpoint\n"); });
  BOOST_TEST(load_error(text) == text + ": not an HDF5 file");
  BOOST_TEST(load_error(dir.path() + "/absent.h5") ==
             "checkpoint " + dir.path() + "/absent.h5: cannot open: No such file or directory");
}

BOOST_AUTO_TEST_CASE(save_errors_reach_every_rank) {
  const World& w = test_world();
  ScratchDir dir(w.comm, "embtrain_ckpt_save_error");
  const std::string blocker = dir.path() + "/file", target = blocker + "/ckpt";
  on_rank0([&] { write_file_atomic(blocker, "a file where the checkpoint directory should be\n"); });
  const std::string error =
      error_of([&] { save_states(w.comm, target, tiny_registry(), ShardMode::full, meta_at(1)); });
  BOOST_TEST(error.rfind(target + ": cannot create directory", 0) == 0, error);
}

// One run at a time per checkpoint directory: a second lock is refused naming the holder;
// releasing empties the lock; a lock file left by a process that died is taken over.
BOOST_AUTO_TEST_CASE(checkpoint_directory_lock) {
  const World& w = test_world();
  ScratchDir dir(w.comm, "embtrain_ckpt_lock");
  const std::string ckpt = dir.path() + "/ckpt", lock_file = ckpt + "/.lock";
  auto lock_error = [&] {
    try {
      CheckpointLock second(w.comm, ckpt, "second");
    } catch (const Error& e) {
      BOOST_TEST(e.exit_code() == kExitInput);
      return std::string(e.what());
    }
    return std::string();
  };
  {
    CheckpointLock first(w.comm, ckpt, "first");  // creates the directory
    const std::string error = lock_error();
    BOOST_TEST(error.rfind(ckpt + ": checkpoint directory in use by another run (pid ", 0) == 0, error);
    BOOST_TEST(error.find(", run first); give this run its own train.ckpt_dir or run.name") != std::string::npos,
               error);
  }
  MPI_Barrier(w.comm);
  BOOST_TEST(fs::file_size(lock_file) == 0u);
  MPI_Barrier(w.comm);  // before rank 0 locks again
  BOOST_TEST(lock_error().empty());
  // What a SIGKILLed holder leaves: its line in an unlocked file.
  on_rank0([&] { write_file_atomic(lock_file, "pid 1 on gone-host since 2026-01-01T00:00:00Z, run dead\n"); });
  {
    CheckpointLock next(w.comm, ckpt, "next");
    if (w.rank == 0) {
      std::ifstream in(lock_file);
      std::string holder;
      std::getline(in, holder);
      BOOST_TEST(holder.find(", run next") != std::string::npos, holder);
    }
  }
}
