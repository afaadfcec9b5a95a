#include "info.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "data/h5_file.hpp"
#include "data/packed_format.hpp"
#include "data/packed_verify.hpp"

namespace emb {

namespace {

std::string dims_text(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

void print_lengths(std::ostream& out, const char* what, const std::vector<int64_t>& offsets) {
  if (offsets.size() < 2) return;
  int64_t lo = INT64_MAX, hi = 0;
  for (size_t i = 1; i < offsets.size(); ++i) lo = std::min(lo, offsets[i] - offsets[i - 1]), hi = std::max(hi, offsets[i] - offsets[i - 1]);
  double mean = double(offsets.back()) / double(offsets.size() - 1);
  out << "  " << what << ": min " << lo << ", mean " << mean << ", max " << hi << "\n";
}

}  // namespace

void print_info(const std::string& path, std::ostream& out) {
  H5File f = H5File::open(path);
  PackedSummary s = verify_structure(f);
  out << path << ": " << packed::kFormat << ", family " << s.family << ", fps " << s.fps << "\n"
      << "  source: " << s.source << "\n  created_by: " << s.created_by << "\n"
      << "  episodes " << s.episodes << ", steps " << s.steps << ", tasks " << s.tasks << ", embodiments "
      << s.embodiments << ", state_dim " << s.state_dim << ", action_dim " << s.action_dim << "\n";
  print_lengths(out, "episode length (steps)", f.read_all<int64_t>(packed::kEpisodeOffsets));
  print_lengths(out, "instruction (tokens)", f.read_all<int64_t>(packed::kTaskTokenOffsets));
  for (const std::string& name : s.features) {
    std::string ds = str("/features/", name);
    out << "  " << ds << " " << dims_text(f.dims(ds)) << "\n";
    print_lengths(out, (name + " tokens per row").c_str(), f.read_all<int64_t>(ds + "_offsets"));
  }
  for (const std::string& v : s.latent_views) out << "  /latents/" << v << " " << dims_text(f.dims(str(packed::kLatents, "/", v))) << "\n";
  for (const std::string& v : s.video_views) out << "  /video/" << v << " " << dims_text(f.dims(str(packed::kVideo, "/", v))) << "\n";
}

}  // namespace emb
