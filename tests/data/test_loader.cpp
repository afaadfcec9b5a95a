#define BOOST_TEST_MODULE data_loader
#include <boost/test/unit_test.hpp>

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "core/error.hpp"
#include "batch/sample_tokens.hpp"
#include "core/half.hpp"
#include "data/loader.hpp"
#include "data_fixtures.hpp"

using namespace emb;
namespace fs = std::filesystem;

namespace {

struct Mpi {
  Mpi() {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
  }
  ~Mpi() { MPI_Finalize(); }
};

int world_rank() {
  int r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int n;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

// Two synthetic files per family (the glob a*.h5 sorts them), rebuilt in memory as reference.
struct Dataset {
  std::string dir;
  std::vector<PackedData> files;
  std::vector<int64_t> begin{0};
  Dataset(const std::string& family) {
    dir = str(EMBTRAIN_TEST_TMP, "/loader_np", world_size(), "_", family);
    for (uint64_t seed : {11, 12}) {
      SynthOptions o = test::tiny_synth(family, 7, seed);
      files.push_back(synthesize(o));
      begin.push_back(begin.back() + files.back().steps());
      if (world_rank() == 0) {
        fs::create_directories(dir);
        write_packed(files.back(), str(dir, "/a", seed, ".h5"), "test");
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  DataConfig config() const {
    DataConfig c;
    c.paths = {dir + "/a*.h5"};
    c.global_batch = 10, c.chunk_rows = 16, c.shuffle_buffer = 48, c.tokens_per_mb = 300, c.prefetch = 2, c.seed = 5;
    return c;
  }
};

struct Seen {
  int64_t id;
  std::vector<float> state, action0;
  int64_t context;
  float context0;
};

std::vector<Seen> collect(Loader& loader, int64_t steps, const ModelConfig& cfg, int64_t* batches_min = nullptr) {
  std::vector<Seen> out;
  for (int64_t k = 0; k < steps; ++k) {
    std::vector<PackedBatch> mbs = loader.next_step();
    int64_t n = int64_t(mbs.size()), lo = 0, hi = 0;
    MPI_Allreduce(&n, &lo, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&n, &hi, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    BOOST_TEST(lo == hi);  // every rank has the same number of micro-batches
    if (batches_min) *batches_min = lo;
    for (const PackedBatch& b : mbs) {
      int64_t c = 0;
      for (int i = 0; i < b.n_samples; ++i) {
        Seen s;
        s.id = b.sample_id[i];
        if (cfg.family == Family::gr00t) {
          const float* st = &b.state[size_t(i * cfg.state_dim)];
          const float* a0 = &b.actions[size_t(i * cfg.horizon * cfg.action_dim)];
          s.state = std::vector<float>(st, st + cfg.state_dim);
          s.action0 = std::vector<float>(a0, a0 + cfg.action_dim);
        }
        int64_t first = c;
        while (c < b.n_context && b.cseq[c] == i) ++c;
        s.context = c - first;
        s.context0 = s.context ? b.context[size_t(first * cfg.d_ctx)] : 0.f;
        out.push_back(s);
      }
    }
  }
  return out;
}

// Ids seen by all ranks, gathered on every rank.
std::vector<int64_t> all_ids(const std::vector<Seen>& seen) {
  std::vector<int64_t> mine;
  for (const Seen& s : seen) mine.push_back(s.id);
  int n = int(mine.size());
  std::vector<int> counts(static_cast<size_t>(world_size())), displs(static_cast<size_t>(world_size()));
  MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  for (size_t i = 1; i < counts.size(); ++i) displs[i] = displs[i - 1] + counts[i - 1];
  std::vector<int64_t> all(size_t(displs.back() + counts.back()));
  MPI_Allgatherv(mine.data(), n, MPI_INT64_T, all.data(), counts.data(), displs.data(), MPI_INT64_T, MPI_COMM_WORLD);
  std::sort(all.begin(), all.end());
  return all;
}

}  // namespace

BOOST_GLOBAL_FIXTURE(Mpi);

// Both MPI-IO transfer modes (data.mpio_transfer) must deliver the same epoch.
BOOST_AUTO_TEST_CASE(gr00t_epoch_is_covered_once_with_the_right_content) {
  Dataset d("gr00t");
  const ModelConfig cfg = test::tiny_model(Family::gr00t);
  for (MpioTransfer transfer : {MpioTransfer::independent, MpioTransfer::collective}) {
    BOOST_TEST_CONTEXT("mpio_transfer " << (transfer == MpioTransfer::collective ? "collective" : "independent")) {
      DataConfig dc = d.config();
      dc.mpio_transfer = transfer;
      dc.normalize = false;  // the file's raw rows (test_data_normalization checks the normalisation)
      Loader loader(MPI_COMM_WORLD, dc, cfg);
      int64_t S = loader.samples_per_epoch();
      BOOST_TEST(S == d.begin.back());
      int64_t steps = S / dc.global_batch;
      std::vector<Seen> seen = collect(loader, steps, cfg);
      std::vector<int64_t> ids = all_ids(seen);
      BOOST_TEST(int64_t(ids.size()) == steps * dc.global_batch);
      for (size_t i = 0; i < ids.size(); ++i) BOOST_TEST(ids[i] == int64_t(i));  // positions 0.. once each
      // Content: the sample at position p is Sampler(...).at(0, p) of the same dataset.
      std::vector<int64_t> sizes;
      for (const PackedData& f : d.files)
        for (int64_t r = 0; r < f.steps(); r += dc.chunk_rows) sizes.push_back(std::min(dc.chunk_rows, f.steps() - r));
      Sampler ref(sizes, dc.shuffle_buffer / dc.chunk_rows, dc.seed);
      for (const Seen& s : seen) {
        int64_t sample = ref.at(0, s.id).sample;
        size_t f = sample >= d.begin[1] ? 1 : 0;
        int64_t row = sample - d.begin[f];
        const PackedData& p = d.files[f];
        for (int64_t c = 0; c < p.state_dim; ++c) BOOST_TEST(s.state[size_t(c)] == p.state[size_t(row * p.state_dim + c)]);
        for (int64_t c = 0; c < p.action_dim; ++c) BOOST_TEST(s.action0[size_t(c)] == p.action[size_t(row * p.action_dim + c)]);
        const VarlenFeatures& vl = p.features.at("vl");
        BOOST_TEST(s.context == vl.offsets[size_t(row + 1)] - vl.offsets[size_t(row)]);
        BOOST_TEST(s.context0 == half_to_float(vl.values[size_t(vl.offsets[size_t(row)] * vl.dim)]));
      }
      LoaderStats st = loader.stats();
      BOOST_TEST(st.samples == int64_t(seen.size()));
      BOOST_TEST(st.real_tokens == st.computed_tokens);
      BOOST_TEST(st.bytes_read > 0);
    }
  }
}

// The action chunk of the sample at row t is a[t : t + Hz]; past the episode's end its last action
// repeats. data.action_past_end = train (upstream GR00T-N1.5) trains on those steps: the mask is 1
// on the embodiment's action columns of every step and 0 on the unused columns; = mask also masks
// the steps past the end. Checked for every sample of an epoch against the files.
BOOST_AUTO_TEST_CASE(gr00t_action_chunks_past_the_episode_end) {
  Dataset d("gr00t");
  ModelConfig cfg = test::tiny_model(Family::gr00t);
  cfg.horizon = 12;  // longer than many of the 5..40-step episodes' tails
  for (bool mask_past_end : {false, true}) {
    BOOST_TEST_CONTEXT("mask_past_end " << mask_past_end) {
      DataConfig dc = d.config();
      dc.mask_past_end = mask_past_end;
      dc.normalize = false;  // the file's raw rows (test_data_normalization checks the normalisation)
      Sampler ref_order([&] {
        std::vector<int64_t> sizes;
        for (const PackedData& f : d.files)
          for (int64_t r = 0; r < f.steps(); r += dc.chunk_rows) sizes.push_back(std::min(dc.chunk_rows, f.steps() - r));
        return sizes;
      }(), dc.shuffle_buffer / dc.chunk_rows, dc.seed);
      Loader loader(MPI_COMM_WORLD, dc, cfg);
      int64_t past_end = 0;
      for (int64_t k = 0; k < loader.samples_per_epoch() / dc.global_batch; ++k)
        for (const PackedBatch& b : loader.next_step())
          for (int i = 0; i < b.n_samples; ++i) {
            const int64_t sample = ref_order.at(0, b.sample_id[size_t(i)]).sample;
            const size_t f = sample >= d.begin[1] ? 1 : 0;
            const PackedData& p = d.files[f];
            const int64_t row = sample - d.begin[f];
            const int64_t e = std::upper_bound(p.episode_offsets.begin(), p.episode_offsets.end(), row) -
                              p.episode_offsets.begin() - 1;
            const int64_t end = p.episode_offsets[size_t(e + 1)];
            const int64_t width = p.embodiment_action_dim.empty()
                                      ? p.action_dim
                                      : p.embodiment_action_dim[size_t(p.episode_embodiment[size_t(e)])];
            for (int64_t h = 0; h < cfg.horizon; ++h) {
              const int64_t src = std::min(row + h, end - 1);
              past_end += row + h >= end;
              for (int64_t c = 0; c < cfg.action_dim; ++c) {
                const size_t at = size_t((i * cfg.horizon + h) * cfg.action_dim + c);
                const float want = c < width ? p.action[size_t(src * p.action_dim + c)] : 0.0f;
                const float want_mask = c < width && !(mask_past_end && row + h >= end) ? 1.0f : 0.0f;
                BOOST_TEST(b.actions[at] == want);
                BOOST_TEST(b.action_mask[at] == want_mask);
              }
            }
          }
      BOOST_TEST(past_end > 0);  // the case is exercised
    }
  }
}

// Past an episode's end upstream pads an action sub-key its modality marks absolute = false with
// zeros and an absolute one with its last row, in the raw values before they are normalised
// (Isaac-GR00T 4af2b622 gr00t/data/dataset.py:611-657,788), with no data.upstream_config. Row r of
// the file: state [r, 0, 0, 0]; action pos [r, r] (absolute), delta [100 + r] x 3 (relative),
// grip [r] x 3 (absolute by default); episodes of 5..8 steps, so every 12-step chunk reaches past
// its end.
BOOST_AUTO_TEST_CASE(gr00t_relative_action_keys_are_zero_past_the_episode_end) {
  const std::string path = str(EMBTRAIN_TEST_TMP, "/loader_np", world_size(), "_relative/a.h5");
  SynthOptions o = test::tiny_synth("gr00t", 6, 21);
  o.min_steps = 5, o.max_steps = 8, o.embodiments = 1, o.state_dim = 4, o.action_dim = 8;
  PackedData p = synthesize(o);
  const int64_t steps = p.steps();
  const auto relative = [](int64_t c) { return c >= 2 && c < 5; };
  const auto raw = [&](int64_t r, int64_t c) { return float(relative(c) ? 100 + r : r); };
  for (int64_t r = 0; r < steps; ++r) {
    std::fill_n(&p.state[size_t(r * o.state_dim)], o.state_dim, 0.f);
    p.state[size_t(r * o.state_dim)] = float(r);
    for (int64_t c = 0; c < o.action_dim; ++c) p.action[size_t(r * o.action_dim + c)] = raw(r, c);
  }
  p.modality = R"({"action": {"pos": {"start": 0, "end": 2, "absolute": true},)"
               R"( "delta": {"start": 2, "end": 5, "absolute": false}, "grip": {"start": 5, "end": 8}}})";
  if (world_rank() == 0) {
    fs::create_directories(fs::path(path).parent_path());
    write_packed(p, path, "test");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  ModelConfig cfg = test::tiny_model(Family::gr00t);
  cfg.horizon = 12;
  // data.normalize = upstream's min_max by the file's statistics: the columns' min and max over all rows.
  const auto min_max = [&](int64_t c, float x) {
    const float lo = raw(0, c), hi = raw(steps - 1, c);
    return 2.f * ((x - lo) / (hi - lo)) - 1.f;
  };
  for (bool normalize : {false, true}) {
    BOOST_TEST_CONTEXT("normalize " << normalize) {
      DataConfig dc;
      dc.paths = {path};
      dc.normalize = normalize;
      dc.global_batch = 4, dc.chunk_rows = 8, dc.shuffle_buffer = 16, dc.tokens_per_mb = 300, dc.prefetch = 0;
      Loader loader(MPI_COMM_WORLD, dc, cfg);
      int64_t past_end = 0;
      for (int64_t k = 0; k < loader.samples_per_epoch() / dc.global_batch; ++k)
        for (const PackedBatch& b : loader.next_step())
          for (int i = 0; i < b.n_samples; ++i) {
            const float s0 = b.state[size_t(i * cfg.state_dim)];
            const int64_t row = normalize ? std::lround((s0 + 1.f) / 2.f * float(steps - 1)) : int64_t(s0);
            const int64_t end = *std::upper_bound(p.episode_offsets.begin(), p.episode_offsets.end(), row);
            for (int64_t h = 0; h < cfg.horizon; ++h) {
              const bool past = row + h >= end;
              past_end += past;
              for (int64_t c = 0; c < o.action_dim; ++c) {
                const float padded = past && relative(c) ? 0.f : raw(std::min(row + h, end - 1), c);
                const float got = b.actions[size_t((i * cfg.horizon + h) * cfg.action_dim + c)];
                BOOST_TEST(got == (normalize ? min_max(c, padded) : padded), "row " << row << " + " << h << " column " << c << ": " << got);
              }
              // Normalised, a relative key's padding is min_max(0) = 2·(−100/(S − 1)) − 1, not 0:
              // the zeros are the raw values', as upstream's.
              if (past && normalize) BOOST_TEST(b.actions[size_t((i * cfg.horizon + h) * cfg.action_dim + 2)] < -1.f);
            }
          }
      int64_t total = 0;
      MPI_Allreduce(&past_end, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
      BOOST_TEST(total > 0);
    }
  }
}

BOOST_AUTO_TEST_CASE(restore_continues_the_global_order) {
  Dataset d("gr00t");
  ModelConfig cfg = test::tiny_model(Family::gr00t);
  DataConfig dc = d.config();
  SamplerState mid;
  std::vector<int64_t> before, after;
  {
    Loader loader(MPI_COMM_WORLD, dc, cfg);
    before = all_ids(collect(loader, 3, cfg));
    mid = loader.state();
  }
  BOOST_TEST(mid.cursor == 3 * dc.global_batch);
  dc.prefetch = 0;  // also covers the synchronous path
  Loader loader(MPI_COMM_WORLD, dc, cfg);
  loader.restore(mid);
  after = all_ids(collect(loader, 2, cfg));
  for (size_t i = 0; i < after.size(); ++i) BOOST_TEST(after[i] == mid.cursor + int64_t(i));
  BOOST_TEST(before.back() + 1 == after.front());
}

BOOST_AUTO_TEST_CASE(padded_mode_carries_the_same_samples) {
  Dataset d("gr00t");
  ModelConfig cfg = test::tiny_model(Family::gr00t);
  DataConfig dc = d.config();
  // One loader at a time: each has a reader thread and HDF5 is not thread-safe.
  auto run = [&](bool packing, LoaderStats& stats) {
    dc.packing = packing;
    Loader loader(MPI_COMM_WORLD, dc, cfg);
    std::vector<int64_t> ids = all_ids(collect(loader, 4, cfg));
    stats = loader.stats();
    return ids;
  };
  LoaderStats sa, sb;
  BOOST_TEST(run(true, sa) == run(false, sb));
  BOOST_TEST(sa.real_tokens == sb.real_tokens);
  BOOST_TEST(sb.computed_tokens > sb.real_tokens);
}

// data.pad_context pads every sample's context to that many masked tokens (the JDT baseline),
// and is refused when shorter than the longest context in the data.
BOOST_AUTO_TEST_CASE(pad_context_sets_the_padded_context_length) {
  Dataset d("gr00t");
  ModelConfig cfg = test::tiny_model(Family::gr00t);
  DataConfig dc = d.config();
  dc.packing = false;
  dc.pad_context = 0;
  int64_t longest = 0;
  {
    Loader loader(MPI_COMM_WORLD, dc, cfg);
    for (const PackedBatch& b : loader.next_step())
      if (b.n_samples > 0) longest = std::max(longest, b.n_context / b.n_samples);  // padded to the longest
  }
  MPI_Allreduce(MPI_IN_PLACE, &longest, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  dc.pad_context = longest + 7;
  dc.tokens_per_mb = std::max<int64_t>(dc.tokens_per_mb, 4 * (longest + 7 + 64));
  {
    Loader loader(MPI_COMM_WORLD, dc, cfg);
    for (const PackedBatch& b : loader.next_step()) {
      BOOST_TEST(b.n_context == int64_t(b.n_samples) * (longest + 7));
      const int64_t real = std::count_if(b.cseq.begin(), b.cseq.end(), [](int32_t s) { return s >= 0; });
      BOOST_TEST(real <= int64_t(b.n_samples) * longest);
      BOOST_TEST(b.n_context - real >= int64_t(b.n_samples) * 7);
    }
  }
  dc.pad_context = longest - 1;
  BOOST_CHECK_THROW(Loader(MPI_COMM_WORLD, dc, cfg), Error);
}

BOOST_AUTO_TEST_CASE(wan_samples_are_assembled) {
  Dataset d("wan");
  ModelConfig cfg = test::tiny_model(Family::wan);
  DataConfig dc = d.config();
  dc.view = "view1";
  Loader loader(MPI_COMM_WORLD, dc, cfg);
  int64_t steps = loader.samples_per_epoch() / dc.global_batch;
  int64_t seen = 0;
  for (int64_t k = 0; k < steps; ++k)
    for (const PackedBatch& b : loader.next_step()) {
      BOOST_TEST(b.n_tokens == int64_t(b.n_samples) * sample_query_tokens(cfg, cfg.latent_frames));
      BOOST_TEST(b.video_x0.size() == size_t(2 * 3 * 4) * size_t(4 * cfg.latent_channels) * size_t(b.n_samples));
      BOOST_TEST(b.act_x0.size() == size_t(4 * cfg.action_dim * b.n_samples));
      for (float v : b.video_x0) BOOST_TEST(std::isfinite(v));
      seen += b.n_samples;
    }
  int64_t total = 0;
  MPI_Allreduce(&seen, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  BOOST_TEST(total == steps * dc.global_batch);
}

// Nodes of two ranks (np 3: {0, 1}, {2}; np 4: {0, 1}, {2, 3}): each rank reads a 1/N share
// into its node's shared block and the rows a node needs from other nodes' shares arrive by
// the exchange; every rank must see the exact feature rows of the samples it assembles.
BOOST_AUTO_TEST_CASE(shuffle_buffer_features_reach_every_node) {
  Dataset d("gr00t");
  ModelConfig cfg = test::tiny_model(Family::gr00t);
  MPI_Comm node;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank() / 2, world_rank(), &node);
  {
    NodeLayout nodes = NodeLayout::of(MPI_COMM_WORLD, node);
    BOOST_TEST(nodes.nodes() == (world_size() + 1) / 2);
    PackedDataset data(MPI_COMM_WORLD, MpioTransfer::independent, expand_paths(d.config().paths), cfg, "");
    std::vector<BufferSample> samples;
    for (int64_t s = 0; s < data.samples(); ++s) {
      auto [file, row] = data.locate(s);
      samples.push_back(BufferSample{file, row, s % 5 == 4 ? -1 : int(s % world_size())});
    }
    ShuffleBuffer buffer;
    for (int64_t chunk_rows : {int64_t(16), int64_t(1000)}) {  // the second load reuses the blocks
      buffer.load(data, data.chunks(chunk_rows), cfg, samples, nodes);
      int64_t checked = 0;
      for (const BufferSample& s : samples) {
        if (s.rank != world_rank()) continue;
        const PackedData& p = d.files[size_t(s.file)];
        const VarlenFeatures& vl = p.features.at("vl");
        for (int64_t t = vl.offsets[size_t(s.row)]; t < vl.offsets[size_t(s.row + 1)]; ++t) {
          const uint16_t* got = buffer.feature(s.file, t);
          for (int64_t c = 0; c < vl.dim; ++c) BOOST_TEST(got[c] == vl.values[size_t(t * vl.dim + c)]);
          ++checked;
        }
        BOOST_TEST(buffer.state(s.file, s.row)[0] == p.state[size_t(s.row * p.state_dim)]);
      }
      BOOST_TEST(checked > 0);
    }
  }
  MPI_Comm_free(&node);
}

BOOST_AUTO_TEST_CASE(model_mismatch_is_a_clear_error) {
  Dataset d("gr00t");
  ModelConfig cfg = test::tiny_model(Family::gr00t);
  cfg.d_ctx = 48;
  try {
    Loader loader(MPI_COMM_WORLD, d.config(), cfg);
    BOOST_FAIL("expected an error");
  } catch (const Error& e) {
    BOOST_TEST(std::string(e.what()).find(":/features/vl: feature dim 32 != model context dim 48") != std::string::npos);
  }
  DataConfig dc = d.config();
  dc.paths = {d.dir + "/zzz*.h5"};
  try {
    Loader loader(MPI_COMM_WORLD, dc, test::tiny_model(Family::gr00t));
    BOOST_FAIL("expected an error");
  } catch (const Error& e) {
    BOOST_TEST(std::string(e.what()).find("matches no file") != std::string::npos);
  }
}
