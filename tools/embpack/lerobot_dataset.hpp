// The metadata of a LeRobot dataset (DATA.md "Sources"), v2.1 or v3.0, resolved into one
// list of episodes with the data file, rows and per-camera video span of each:
//   v2.1  meta/info.json, meta/tasks.jsonl, meta/episodes.jsonl, meta/episodes_stats.jsonl
//         (optional); one data/video file per episode from info.json's path templates.
//   v3.0  meta/info.json, meta/tasks.parquet, meta/episodes/chunk-*/file-*.parquet with
//         data/{chunk,file}_index, dataset_{from,to}_index and per camera
//         videos/<key>/{chunk_index,file_index,from_timestamp,to_timestamp}; stats from
//         its stats/<column>/{mean,min,max} columns.
// GR00T's meta/modality.json (or --modality FILE) picks state/action slices, picks and renames
// the video keys (as Isaac-GR00T's loader, only the views it names are read: info.json may
// declare others without files) and names the annotation column holding each step's task
// index. Missing or
// inconsistent metadata is one emb::Error naming the file.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace emb {

// A [start, end) slice of a list column that becomes part of /steps/state or /steps/action.
struct ColumnSlice {
  std::string name, column;
  int64_t start = 0, end = 0;
  // modality.json's description, as upstream's metadata.json carries it (schema.py
  // LeRobotStateActionMetadata): continuous = a floating-point dtype (default float32).
  bool absolute = true, continuous = true;
  std::string rotation_type;  // "" = none
};

struct LerobotCamera {
  std::string key;   // the dataset's column / video key, "observation.images.cam_high"
  std::string view;  // the packed file's view name: modality rename or the key's last part
  double fps = 0;
  int64_t height = 0, width = 0, channels = 0;  // info.json's shape of the recorded video
};

struct LerobotEpisode {
  int64_t index = 0, length = 0;
  std::vector<std::string> tasks;
  std::string data_file;
  int64_t from_index = -1, to_index = -1;  // v3.0: global `index` range in data_file
  std::vector<std::string> video_files;    // per camera
  std::vector<double> video_from, video_to;  // per camera: the episode's span in its file (s)
};

// Recorded mean/min/max of one column of one episode (or of the whole dataset).
struct RecordedStats {
  std::vector<double> mean, min, max;
};

struct LerobotDataset {
  std::string root, version;
  double fps = 0;
  std::vector<std::string> tasks;  // by task_index
  std::vector<LerobotCamera> cameras;
  std::vector<LerobotEpisode> episodes;
  std::vector<ColumnSlice> state, action;  // whole columns unless modality.json slices them
  std::string task_column = "task_index";  // or modality.json's annotation column
  bool has_modality = false;               // modality.json was read
  std::string stats_file;                  // where episode stats came from ("" if none)
  std::map<int64_t, std::map<std::string, RecordedStats>> episode_stats;
  std::map<std::string, RecordedStats> dataset_stats;  // meta/stats.json
};

// The state and action sub-keys to keep, in the order to keep them (an upstream GR00T data
// config's state_keys / action_keys without their "state." / "action." prefix); empty: every
// sub-key of modality.json in its order.
struct SubKeyChoice {
  std::vector<std::string> state, action;
};

// modality_path "" = meta/modality.json when present. Throws emb::Error naming modality.json and
// its sub-keys when a chosen key is not among them, or when keys are chosen without a modality.json.
LerobotDataset read_lerobot_dataset(const std::string& root, const std::string& modality_path,
                                    const SubKeyChoice& keys = {});

}  // namespace emb
