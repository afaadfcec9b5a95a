#include "lerobot.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>

#include "context_features.hpp"
#include "core/error.hpp"
#include "frame_gather.hpp"
#include "data/gr00t_embodiment_tags.hpp"
#include "lerobot_dataset.hpp"
#include "lerobot_modality.hpp"
#include "parquet/parquet_file.hpp"
#include "progress.hpp"
#include "comm/agreement.hpp"
#include "comm/host_collectives.hpp"
#include "comm/rank_gather.hpp"

namespace emb {

namespace {

struct EpisodeRef {
  const LerobotDataset* dataset;
  const LerobotEpisode* episode;
};

// The columns of one Parquet data file, read once for all the episodes it holds.
class DataFile {
 public:
  bool has(const std::string& path, const std::string& name) {
    open(path);
    return file_.has(name);
  }
  const parquet::ColumnData& column(const std::string& path, const std::string& name) {
    open(path);
    auto it = columns_.find(name);
    if (it == columns_.end()) it = columns_.emplace(name, file_.read(name)).first;
    return it->second;
  }

 private:
  void open(const std::string& path) {
    if (path != path_) file_ = parquet::ParquetFile::open(path), path_ = path, columns_.clear();
  }
  std::string path_;
  parquet::ParquetFile file_;
  std::map<std::string, parquet::ColumnData> columns_;
};

// The rows of one episode read from its data file, before the videos are decoded.
struct EpisodeRows {
  std::string task;
  std::vector<float> state, action;
  std::vector<std::vector<int64_t>> frame;  // [camera][step]
};

std::vector<int64_t> rows_of_episode(DataFile& data, const LerobotEpisode& e) {
  const parquet::ColumnData& episode = data.column(e.data_file, "episode_index");
  std::vector<int64_t> rows;
  for (int64_t r = 0; r < episode.rows(); ++r)
    if (episode.ints[size_t(r)] == e.index) rows.push_back(r);
  EMB_CHECK(int64_t(rows.size()) == e.length, e.data_file, ": column episode_index: episode ", e.index, " has ",
            rows.size(), " rows, the metadata says length ", e.length);
  if (e.from_index >= 0) {
    const parquet::ColumnData& index = data.column(e.data_file, "index");
    for (int64_t r : rows)
      EMB_CHECK(index.ints[size_t(r)] >= e.from_index && index.ints[size_t(r)] < e.to_index, e.data_file,
                ": column index: row ", r, " of episode ", e.index, " has index ", index.ints[size_t(r)],
                " outside its dataset_from/to_index [", e.from_index, ", ", e.to_index, ")");
  }
  return rows;
}

// Compares mean/min/max of `column` over `rows` with the recorded ones; adds a warning per
// disagreeing statistic (float32 data against float64 statistics: 1e-5 relative).
void check_stats(const parquet::ColumnData& column, const std::vector<int64_t>& rows, const RecordedStats& recorded,
                 const std::string& what, std::vector<std::string>& warnings) {
  int64_t width = column.row_size(rows[0]);
  std::vector<double> sum(size_t(width), 0), lo(size_t(width), INFINITY), hi(size_t(width), -INFINITY);
  for (int64_t r : rows)
    for (int64_t c = 0; c < width; ++c) {
      double v = column.number(column.row_offsets[size_t(r)] + c);
      sum[size_t(c)] += v, lo[size_t(c)] = std::min(lo[size_t(c)], v), hi[size_t(c)] = std::max(hi[size_t(c)], v);
    }
  for (double& s : sum) s /= double(rows.size());
  const std::pair<const char*, std::pair<const std::vector<double>*, const std::vector<double>*>> stats[] = {
      {"mean", {&sum, &recorded.mean}}, {"min", {&lo, &recorded.min}}, {"max", {&hi, &recorded.max}}};
  for (const auto& [name, pair] : stats) {
    const std::vector<double>&computed = *pair.first, &want = *pair.second;
    if (want.empty()) continue;
    if (want.size() != computed.size()) {
      warnings.push_back(str(what, " ", name, ": recorded ", want.size(), " values, the data has ", computed.size()));
      continue;
    }
    for (size_t c = 0; c < want.size(); ++c)
      if (std::abs(computed[c] - want[c]) > 1e-5 * (1 + std::abs(want[c]))) {
        warnings.push_back(str(what, " ", name, "[", c, "]: computed ", computed[c], ", recorded ", want[c]));
        break;
      }
  }
}

EpisodeRows read_episode(DataFile& data, const EpisodeRef& ref, std::vector<std::string>& warnings) {
  const LerobotDataset& d = *ref.dataset;
  const LerobotEpisode& e = *ref.episode;
  std::vector<int64_t> rows = rows_of_episode(data, e);
  EpisodeRows out;
  // state/action: the slices in order, every row checked for its width and finite values.
  std::map<std::string, const parquet::ColumnData*> used;
  auto append = [&](const std::vector<ColumnSlice>& slices, std::vector<float>& dst) {
    for (int64_t r : rows)
      for (const ColumnSlice& s : slices) {
        const parquet::ColumnData& c = data.column(e.data_file, s.column);
        used[s.column] = &c;
        EMB_CHECK(c.list && !c.is_string(), e.data_file, ": column ", s.column, ": expected list<float>, found ",
                  c.list ? "list<" : "", type_name(c.type), c.list ? ">" : "");
        EMB_CHECK(c.row_size(r) >= s.end, e.data_file, ": column ", s.column, ": row ", r, " has ", c.row_size(r),
                  " values, ", s.name, " needs [", s.start, ", ", s.end, ")");
        for (int64_t k = s.start; k < s.end; ++k) {
          double v = c.number(c.row_offsets[size_t(r)] + k);
          EMB_CHECK(std::isfinite(v), e.data_file, ": column ", s.column, ": non-finite value in row ", r);
          dst.push_back(float(v));
        }
      }
  };
  append(d.state, out.state);
  append(d.action, out.action);
  auto recorded = d.episode_stats.find(e.index);
  for (const auto& [name, column] : used)
    if (recorded != d.episode_stats.end() && recorded->second.count(name))
      check_stats(*column, rows, recorded->second.at(name), str(d.stats_file, ": episode ", e.index, " ", name), warnings);

  if (data.has(e.data_file, d.task_column)) {
    const parquet::ColumnData& task = data.column(e.data_file, d.task_column);
    int64_t t = task.ints.empty() ? -1 : task.ints[size_t(rows[0])];
    EMB_CHECK(t >= 0 && t < int64_t(d.tasks.size()) && !task.list && !task.is_real(), e.data_file, ": column ",
              d.task_column, ": row ", rows[0], ": task index ", t, " not in the dataset's ", d.tasks.size(), " tasks");
    out.task = d.tasks[size_t(t)];
  } else {  // no per-step task column: the episode's first task in the metadata
    EMB_CHECK(!e.tasks.empty(), e.data_file, ": no column ", d.task_column, " and no tasks for episode ", e.index,
              " in the metadata");
    out.task = e.tasks[0];
  }

  const parquet::ColumnData& timestamp = data.column(e.data_file, "timestamp");
  for (size_t c = 0; c < d.cameras.size(); ++c) {
    double fps = d.cameras[c].fps, from = e.video_from[c], to = e.video_to[c];
    std::vector<int64_t>& frames = out.frame.emplace_back();
    for (int64_t r : rows) {
      double ts = timestamp.number(r), at = from + ts;
      EMB_CHECK(std::isfinite(ts) && ts >= 0 && at < to + 0.5 / fps, e.data_file, ": column timestamp: row ", r,
                " (episode ", e.index, "): timestamp ", ts, " outside the episode's video span [", from, ", ", to,
                ") of ", e.video_files[c]);
      frames.push_back(std::llround(at * fps));
    }
  }
  return out;
}

// Decodes every (camera, video file) this rank needs on `threads` workers; a file's
// frames land in the rows of the steps that show them.
int64_t decode_views(const std::vector<EpisodeRef>& episodes, const std::vector<EpisodeRows>& rows,
                     const LerobotOptions& o, bool show_progress, std::vector<VideoView>& views) {
  struct Job {
    size_t camera;
    std::string file;
    int64_t first_row;                  // the job's rows: [first_row, first_row + frame_of_row.size())
    std::vector<int64_t> frame_of_row;  // -1: a row another file shows
  };
  std::map<std::pair<size_t, std::string>, size_t> job_of;
  std::vector<Job> jobs;
  std::vector<int64_t> starts;  // each episode's first row
  int64_t first = 0;
  for (size_t e = 0; e < episodes.size(); ++e) {
    const LerobotEpisode& ep = *episodes[e].episode;
    starts.push_back(first);
    for (size_t c = 0; c < views.size(); ++c) {
      auto key = std::make_pair(c, ep.video_files[c]);
      auto it = job_of.find(key);
      if (it == job_of.end()) {
        it = job_of.emplace(key, jobs.size()).first;
        jobs.push_back({c, ep.video_files[c], first, {}});
      }
      Job& job = jobs[it->second];
      job.frame_of_row.resize(size_t(first + ep.length - job.first_row), -1);
      std::copy(rows[e].frame[c].begin(), rows[e].frame[c].end(), job.frame_of_row.begin() + (first - job.first_row));
    }
    first += ep.length;
  }
  int workers = std::max(1, std::min(o.threads, int(jobs.size())));
  int decoder_threads = std::max(1, o.threads / workers);
  int64_t wanted = 0;
  for (const Job& j : jobs) {
    const FrameRange decoded = frames_to_decode(j.frame_of_row);
    wanted += decoded.end - decoded.first;
  }
  std::mutex progress_lock;
  Progress progress("lerobot: decoding (rank 0's share)", wanted, o.progress, show_progress);
  std::atomic<size_t> next{0};
  std::atomic<int64_t> decoded{0};
  std::vector<std::string> errors(jobs.size());
  auto work = [&]() {
    for (size_t j = next++; j < jobs.size(); j = next++) {
      Job& job = jobs[j];
      VideoView& view = views[job.camera];
      try {
        size_t frame_bytes = size_t(o.height) * size_t(o.width) * 3;
        VideoInfo info = gather_frames(job.file, job.frame_of_row, o.height, o.width, decoder_threads,
                                       view.frames.data() + size_t(job.first_row) * frame_bytes, [&]() {
                                         ++decoded;
                                         std::lock_guard<std::mutex> lock(progress_lock);
                                         progress.advance();
                                       });
        for (size_t i = 0; i < job.frame_of_row.size(); ++i) {
          int64_t f = job.frame_of_row[i], row = job.first_row + int64_t(i);
          size_t e = size_t(std::upper_bound(starts.begin(), starts.end(), row) - starts.begin()) - 1;
          EMB_CHECK(f <= info.frames, job.file, ": frame ", f, " (episode ", episodes[e].episode->index, ", step ",
                    row - starts[e], ") beyond the video's ", info.frames, " frames (video shorter than its episode)");
        }
      } catch (const std::exception& err) {
        errors[j] = err.what();
      }
    }
  };
  std::vector<std::thread> pool;
  for (int w = 1; w < workers; ++w) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  for (const std::string& err : errors)
    if (!err.empty()) throw Error(err);
  return decoded;
}

// This rank's share of the episodes converted into a PackedData (no file yet).
PackedData convert_share(const std::vector<EpisodeRef>& episodes, const LerobotOptions& o, int32_t embodiment,
                         int64_t state_dim, int64_t action_dim, const std::vector<LerobotCamera>& cameras,
                         bool show_progress, LerobotReport& report) {
  PackedData p;
  p.state_dim = state_dim, p.action_dim = action_dim;
  DataFile data;
  std::vector<EpisodeRows> rows;
  for (const EpisodeRef& ref : episodes) {
    rows.push_back(read_episode(data, ref, report.warnings));
    p.state.insert(p.state.end(), rows.back().state.begin(), rows.back().state.end());
    p.action.insert(p.action.end(), rows.back().action.begin(), rows.back().action.end());
    int32_t task = int32_t(std::find(p.task_text.begin(), p.task_text.end(), rows.back().task) - p.task_text.begin());
    if (task == int32_t(p.task_text.size())) p.task_text.push_back(rows.back().task);
    p.add_episode(ref.episode->length, task, embodiment);
  }
  for (const LerobotCamera& c : cameras) {
    VideoView v;
    v.name = c.view, v.height = o.height, v.width = o.width;
    v.frames.resize(size_t(p.steps()) * size_t(o.height) * size_t(o.width) * 3);
    p.videos.push_back(std::move(v));
  }
  report.frames_decoded += decode_views(episodes, rows, o, show_progress, p.videos);
  ContextFeatures features(o.d_vl, 0);
  VarlenFeatures& vl = p.features["vl"];
  vl.dim = o.d_vl;
  for (int64_t e = 0, s = 0; e < p.episodes(); ++e)
    for (; s < p.episode_offsets[size_t(e) + 1]; ++s)
      add_step_context(features, p.videos, s, p.task_text[size_t(p.episode_task[size_t(e)])], o.vl_grid, vl);
  return p;
}

std::vector<char> join(const std::vector<std::string>& strings) {
  std::vector<char> out;
  for (const std::string& s : strings) out.insert(out.end(), s.c_str(), s.c_str() + s.size() + 1);
  return out;
}

std::vector<std::string> split(const std::vector<char>& joined) {
  std::vector<std::string> out;
  for (size_t at = 0; at < joined.size(); at += out.back().size() + 1) out.emplace_back(&joined[at]);
  return out;
}

// Every rank's tasks in rank order, each once, become the common task list (the order one
// rank converting every episode finds them in); episode_task is renumbered into it.
void agree_on_tasks(PackedData& p, MPI_Comm comm) {
  std::vector<std::string> common;
  for (const std::string& t : split(gather_to_all(join(p.task_text), comm)))
    if (std::find(common.begin(), common.end(), t) == common.end()) common.push_back(t);
  for (int32_t& task : p.episode_task)
    task = int32_t(std::find(common.begin(), common.end(), p.task_text[size_t(task)]) - common.begin());
  p.task_text = std::move(common);
}

int64_t width_of(const std::vector<ColumnSlice>& slices) {
  int64_t w = 0;
  for (const ColumnSlice& s : slices) w += s.end - s.start;
  return w;
}

// The conversion of this rank's share; every error is thrown here, before any collective.
PackedData convert_local(const LerobotOptions& o, int rank, int ranks, std::vector<LerobotDataset>& datasets,
                         LerobotReport& report) {
  // Bad options are the user's input to fix: refused with exit code 2.
  auto refuse_unless = [](bool ok, const std::string& message) {
    if (!ok) throw Error("lerobot: " + message, kExitInput);
  };
  refuse_unless(o.height > 0 && o.width > 0, "--height and --width must be positive");
  refuse_unless(o.threads > 0, "--threads must be positive");
  const int embodiment = o.embodiment_tag.empty() ? 0 : gr00t_embodiment_id(o.embodiment_tag);
  refuse_unless(embodiment >= 0, str("--embodiment-tag ", quoted(o.embodiment_tag),
                                     " is not one of GR00T's tags (accepted: ", gr00t_embodiment_tags_text(), ")"));
  for (const std::string& dir : o.dirs) datasets.push_back(read_lerobot_dataset(dir, o.modality, o.keys));
  const LerobotDataset& first = datasets[0];
  std::vector<EpisodeRef> all;
  for (const LerobotDataset& d : datasets) {
    EMB_CHECK(width_of(d.state) == width_of(first.state) && width_of(d.action) == width_of(first.action), d.root,
              ": state/action widths ", width_of(d.state), "/", width_of(d.action), " differ from ", first.root, "'s ",
              width_of(first.state), "/", width_of(first.action));
    EMB_CHECK(d.cameras.size() == first.cameras.size(), d.root, ": ", d.cameras.size(), " cameras, ", first.root, " has ",
              first.cameras.size());
    for (size_t c = 0; c < d.cameras.size(); ++c)
      EMB_CHECK(d.cameras[c].view == first.cameras[c].view, d.root, ": camera ", c, " is ", d.cameras[c].view, ", ",
                first.root, " has ", first.cameras[c].view);
    for (const LerobotEpisode& e : d.episodes) all.push_back({&d, &e});
  }
  size_t begin = all.size() * size_t(rank) / size_t(ranks), end = all.size() * size_t(rank + 1) / size_t(ranks);
  std::vector<EpisodeRef> share(all.begin() + long(begin), all.begin() + long(end));
  return convert_share(share, o, embodiment, width_of(first.state), width_of(first.action), first.cameras, rank == 0,
                       report);
}

// The recorded dataset statistics (meta/stats.json) cover all of a dataset's episodes:
// compared when one dataset with whole state/action columns is converted.
void check_dataset_stats(const LerobotDataset& d, const std::vector<float>& state, const std::vector<float>& action,
                         int64_t state_dim, int64_t action_dim, std::vector<std::string>& warnings) {
  for (const auto& [column, rows, dim, slices] :
       {std::make_tuple("observation.state", &state, state_dim, &d.state), std::make_tuple("action", &action, action_dim, &d.action)}) {
    auto it = d.dataset_stats.find(column);
    if (it == d.dataset_stats.end() || slices->size() != 1 || slices->front().column != column) continue;
    parquet::ColumnData c;
    c.type = parquet::PhysicalType::float64, c.list = true;
    c.reals.assign(rows->begin(), rows->end());
    std::vector<int64_t> all_rows;
    for (int64_t r = 0; r < int64_t(rows->size()) / dim; ++r) c.row_offsets.push_back((r + 1) * dim), all_rows.push_back(r);
    check_stats(c, all_rows, it->second, str(d.root, "/meta/stats.json: ", column), warnings);
  }
}

}  // namespace

PackedData convert_lerobot(const LerobotOptions& o, MPI_Comm comm, LerobotReport& report) {
  auto start = std::chrono::steady_clock::now();
  const bool alone = comm == MPI_COMM_NULL;
  const int rank = alone ? 0 : rank_in(comm), ranks = alone ? 1 : ranks_in(comm);
  std::vector<LerobotDataset> datasets;
  PackedData p;
  run_agreed(comm, [&]() { p = convert_local(o, rank, ranks, datasets, report); });
  agree_on_tasks(p, comm);
  const LerobotDataset& first = datasets[0];
  p.family = "gr00t";
  p.fps = first.fps;
  p.source = "lerobot:" + first.version;
  p.modality = lerobot_modality_attribute(first);
  for (const LerobotDataset& d : datasets) p.source += ":" + d.root;
  // The report is rank 0's: every rank's warnings in rank order, the totals of all ranks.
  report.warnings = split(gather_to_root(join(report.warnings), comm));
  if (datasets.size() == 1) {
    std::vector<float> state = gather_to_root(p.state, comm), action = gather_to_root(p.action, comm);
    if (rank == 0) check_dataset_stats(first, state, action, p.state_dim, p.action_dim, report.warnings);
  }
  int64_t totals[3] = {p.episodes(), p.steps(), report.frames_decoded};
  if (!alone) sum_over_ranks(comm, totals, 3);
  report.episodes = totals[0], report.steps = totals[1], report.frames_decoded = totals[2];
  report.threads = o.threads, report.ranks = ranks;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return p;
}

}  // namespace emb
