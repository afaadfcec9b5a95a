#include "data/packed_verify.hpp"

#include <zlib.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/half.hpp"
#include "data/packed_format.hpp"
#include "data/tokenizer.hpp"

namespace emb {

namespace {

int64_t product_after_first(const std::vector<int64_t>& d) {
  int64_t n = 1;
  for (size_t i = 1; i < d.size(); ++i) n *= d[i];
  return n;
}

void expect_rows(const H5File& f, const std::string& ds, const std::vector<int64_t>& dims, int64_t rows,
                 const char* what) {
  if (dims[0] != rows) f.fail(ds, str("expected ", rows, " rows (", what, "), found ", dims[0]));
}

// `n` values from `v`, rows of `row_elems` numbered from `first_row`.
template <class T>
void check_finite(const H5File& f, const std::string& ds, const T* v, size_t n, int64_t row_elems,
                  int64_t first_row = 0) {
  for (size_t i = 0; i < n; ++i) {
    bool finite;
    if constexpr (std::is_same_v<T, uint16_t>) {
      finite = ((v[i] >> 10) & 0x1f) != 0x1f;
    } else {
      finite = std::isfinite(v[i]);
    }
    if (!finite) f.fail(ds, str("non-finite value at row ", first_row + int64_t(i) / std::max<int64_t>(row_elems, 1)));
  }
}

template <class T>
void check_finite(const H5File& f, const std::string& ds, const std::vector<T>& v, int64_t row_elems) {
  check_finite(f, ds, v.data(), v.size(), row_elems);
}

std::string latent_offsets_name(const std::string& view) { return str(packed::kLatents, "/", view, "_offsets"); }

// How much of a file verify() reads: the structure (index arrays), also the values of the
// small arrays (per step at most a few bytes, or per task or embodiment), or every value.
enum class Depth { structure, small_values, all_values };

// Latents of one view: shape, offsets, and ceil(len/spl) frames per episode (clip_frames·len in
// the DreamZero layout).
void verify_latents(const H5File& f, const std::string& view, const std::vector<int64_t>& ep, bool values) {
  std::string ds = str(packed::kLatents, "/", view);
  std::vector<int64_t> d = f.expect(ds, Elem::f16, 4);
  double spl = f.attr_double(ds, packed::kStepsPerLatent);
  if (!(spl >= 1) || spl != std::floor(spl)) f.fail(ds, str("attribute steps_per_latent must be an integer >= 1"));
  std::string ods = latent_offsets_name(view);
  f.expect(ods, Elem::i64, 1);
  std::vector<int64_t> off = f.read_all<int64_t>(ods);
  int64_t episodes = int64_t(ep.size()) - 1;
  check_offsets(f, ods, off, episodes, d[0], true);
  // The DreamZero layout: F latent frames per step (the clip starting there).
  const int64_t clip_frames =
      f.has_attr(ds, packed::kClipFrames) ? std::stoll(f.attr_string(ds, packed::kClipFrames)) : 0;
  for (int64_t e = 0; e < episodes; ++e) {
    int64_t want = clip_frames > 0 ? clip_frames * (ep[e + 1] - ep[e]) : (ep[e + 1] - ep[e] + int64_t(spl) - 1) / int64_t(spl);
    if (off[e + 1] - off[e] != want)
      f.fail(ods, str("episode ", e, " has ", off[e + 1] - off[e], " latent frames, expected ", want));
  }
  if (values) check_finite(f, ds, f.read_all<uint16_t>(ds), product_after_first(d));
}

// A varlen feature array and its offsets over `rows` rows; returns the feature dim.
int64_t verify_features(const H5File& f, const std::string& ds, const std::string& ods, int64_t rows, bool values) {
  std::vector<int64_t> d = f.expect(ds, Elem::f16, 2);
  f.expect(ods, Elem::i64, 1);
  check_offsets(f, ods, f.read_all<int64_t>(ods), rows, d[0], false);
  if (values) check_finite(f, ds, f.read_all<uint16_t>(ds), d[1]);
  return d[1];
}

void verify_stats(const H5File& f, const std::string& field, int64_t dim) {
  for (const char* name : packed::kStatNames) {
    std::string ds = str("/stats/", field, "/", name);
    std::vector<int64_t> d = f.expect(ds, Elem::f32, 1);
    if (d[0] != dim) f.fail(ds, str("expected ", dim, " values, found ", d[0]));
    check_finite(f, ds, f.read_all<float>(ds), 1);
  }
}

// The root's attributes: format, family, fps and where the file came from.
void verify_root(const H5File& f, PackedSummary& s) {
  std::string format = f.attr_string("/", "format");
  if (format != packed::kFormat) f.fail("/", str("format attribute is ", quoted(format), ", expected '", packed::kFormat, "'"));
  s.family = f.attr_string("/", "family");
  if (s.family != "gr00t" && s.family != "wan") f.fail("/", str("family '", s.family, "' is not gr00t or wan"));
  s.fps = f.attr_double("/", "fps");
  s.source = f.has_attr("/", "source") ? f.attr_string("/", "source") : "";
  s.created_by = f.has_attr("/", "created_by") ? f.attr_string("/", "created_by") : "";
}

// State and action rows, the episodes over them, the tasks, and the tables with one row per
// episode, embodiment or step; returns the episode offsets.
std::vector<int64_t> verify_tables(const H5File& f, PackedSummary& s) {
  std::vector<int64_t> sd = f.expect(packed::kState, Elem::f32, 2);
  std::vector<int64_t> ad = f.expect(packed::kAction, Elem::f32, 2);
  s.steps = sd[0], s.state_dim = sd[1], s.action_dim = ad[1];
  expect_rows(f, packed::kAction, ad, s.steps, "one per step");
  s.episodes = f.expect(packed::kEpisodeOffsets, Elem::i64, 1)[0] - 1;
  if (s.episodes < 1) f.fail(packed::kEpisodeOffsets, "expected at least 2 entries (one episode)");
  std::vector<int64_t> ep = f.read_all<int64_t>(packed::kEpisodeOffsets);
  check_offsets(f, packed::kEpisodeOffsets, ep, s.episodes, s.steps, true);

  std::vector<std::string> text = f.read_strings(packed::kTaskText);
  s.tasks = int64_t(text.size());
  std::vector<int64_t> tok_dims = f.expect(packed::kTaskTokens, Elem::i32, 1);
  f.expect(packed::kTaskTokenOffsets, Elem::i64, 1);
  check_offsets(f, packed::kTaskTokenOffsets, f.read_all<int64_t>(packed::kTaskTokenOffsets), s.tasks, tok_dims[0],
                false);

  expect_rows(f, packed::kEpisodeTask, f.expect(packed::kEpisodeTask, Elem::i32, 1), s.episodes, "one per episode");
  expect_rows(f, packed::kEpisodeEmbodiment, f.expect(packed::kEpisodeEmbodiment, Elem::i32, 1), s.episodes,
              "one per episode");
  if (f.has(packed::kEmbodimentStateDim) || f.has(packed::kEmbodimentActionDim)) {
    std::vector<int64_t> d = f.expect(packed::kEmbodimentStateDim, Elem::i32, 1);
    expect_rows(f, packed::kEmbodimentActionDim, f.expect(packed::kEmbodimentActionDim, Elem::i32, 1), d[0],
                "one per embodiment");
    s.embodiments = d[0];
  }
  if (f.has(packed::kReward)) expect_rows(f, packed::kReward, f.expect(packed::kReward, Elem::f32, 1), s.steps, "one per step");
  if (f.has(packed::kDone)) expect_rows(f, packed::kDone, f.expect(packed::kDone, Elem::u8, 1), s.steps, "one per step");
  return ep;
}

// Latent and video views and the vl and txt features, and what the family requires of them.
void verify_views(const H5File& f, PackedSummary& s, const std::vector<int64_t>& ep, bool small_values, bool values) {
  for (const std::string& view : f.members(packed::kLatents)) {
    if (view.size() > 8 && view.compare(view.size() - 8, 8, "_offsets") == 0) continue;
    verify_latents(f, view, ep, values);
    s.latent_views.push_back(view);
  }
  for (const std::string& view : f.members(packed::kVideo)) {
    std::string ds = str(packed::kVideo, "/", view);
    std::vector<int64_t> d = f.expect(ds, Elem::u8, 4);
    expect_rows(f, ds, d, s.steps, "one frame per step");
    if (d[3] != 3) f.fail(ds, str("expected 3 channels (RGB), found ", d[3]));
    s.video_views.push_back(view);
  }
  if (f.has(packed::kVlFeatures)) {
    verify_features(f, packed::kVlFeatures, packed::kVlOffsets, s.steps, values);
    s.features.push_back("vl");
    // Features a backbone made say so completely (packed_format.hpp), so that training's check
    // of the digest and the recipe are never half there.
    if (f.has_attr(packed::kVlFeatures, packed::kBackboneDigest)) {
      for (const char* key : packed::kFeatureProvenance)
        if (!f.has_attr(packed::kVlFeatures, key))
          f.fail(packed::kVlFeatures, str("attribute '", key, "' missing beside backbone_digest"));
      const std::string digest = f.attr_string(packed::kVlFeatures, packed::kBackboneDigest);
      if (digest.size() != 16 || digest.find_first_not_of("0123456789abcdef") != std::string::npos)
        f.fail(packed::kVlFeatures, str("backbone_digest '", digest, "' is not 16 hex digits"));
      // The stored augmented variants: the rows of /features/vl, the same width.
      const std::string k_text = f.attr_string(packed::kVlFeatures, packed::kAugmentVariants);
      const int64_t variants = k_text.find_first_not_of("0123456789") == std::string::npos && !k_text.empty()
                                   ? std::stoll(k_text)
                                   : -1;
      if (variants < 0) f.fail(packed::kVlFeatures, str("augment '", k_text, "' is not a count"));
      const std::vector<int64_t> vl_dims = f.dims(packed::kVlFeatures);
      const std::vector<int64_t> vl_offsets = f.read_all<int64_t>(packed::kVlOffsets);
      for (int64_t k = 0; k < variants; ++k) {
        const std::string ds = str(packed::kVlAugmented, k);
        verify_features(f, ds, ds + "_offsets", s.steps, values);
        if (f.dims(ds) != vl_dims) f.fail(ds, "shape differs from /features/vl's");
        if (f.read_all<int64_t>(ds + "_offsets") != vl_offsets) f.fail(ds + "_offsets", "differ from /features/vl_offsets");
        s.features.push_back(str("vl_aug", k));
      }
    }
  }
  if (f.has(packed::kClipFeatures)) {  // the DreamZero layout's CLIP rows, per step
    verify_features(f, packed::kClipFeatures, packed::kClipOffsets, s.steps, values);
    s.features.push_back("clip");
  }
  if (f.has(packed::kTxtFeatures)) {
    verify_features(f, packed::kTxtFeatures, packed::kTxtOffsets, s.tasks, small_values);  // per task
    s.features.push_back("txt");
  }
  if (s.family == "gr00t" && !f.has(packed::kVlFeatures)) f.fail(packed::kVlFeatures, "missing (required for gr00t)");
  if (s.family == "wan") {
    if (s.latent_views.empty()) f.fail(packed::kLatents, "no latent view (required for wan)");
    if (!f.has(packed::kTxtFeatures)) f.fail(packed::kTxtFeatures, "missing (required for wan)");
  }
}

// Ids and per-embodiment widths index the model's tables: cheap (one value per episode or
// embodiment), so training checks them on open too, instead of crashing on them.
void verify_ids(const H5File& f, const PackedSummary& s) {
  std::vector<int32_t> tasks = f.read_all<int32_t>(packed::kEpisodeTask);
  for (size_t e = 0; e < tasks.size(); ++e)
    if (tasks[e] < 0 || tasks[e] >= s.tasks)
      f.fail(packed::kEpisodeTask, str("task id ", tasks[e], " at index ", e, " out of range [0, ", s.tasks, ")"));
  std::vector<int32_t> emb = f.read_all<int32_t>(packed::kEpisodeEmbodiment);
  for (size_t e = 0; e < emb.size(); ++e)
    if (emb[e] < 0 || (s.embodiments > 0 && emb[e] >= s.embodiments))
      f.fail(packed::kEpisodeEmbodiment, str("embodiment id ", emb[e], " at index ", e, " out of range"));
  if (s.embodiments == 0) return;
  std::vector<int32_t> sdim = f.read_all<int32_t>(packed::kEmbodimentStateDim);
  std::vector<int32_t> adim = f.read_all<int32_t>(packed::kEmbodimentActionDim);
  for (int64_t e = 0; e < s.embodiments; ++e) {
    if (sdim[e] < 1 || sdim[e] > s.state_dim)
      f.fail(packed::kEmbodimentStateDim, str("value ", sdim[e], " at index ", e, " not in [1, ", s.state_dim, "]"));
    if (adim[e] < 1 || adim[e] > s.action_dim)
      f.fail(packed::kEmbodimentActionDim, str("value ", adim[e], " at index ", e, " not in [1, ", s.action_dim, "]"));
  }
}

// State, action, latent and feature rows are the bulk of a file: training checks them as it
// reads them (first_non_finite); only a full verify (`values`) reads them all here. The small
// tables are always read: rewards, done flags, token ids, statistics.
void verify_values(const H5File& f, const PackedSummary& s, bool values) {
  if (values) {
    check_finite(f, packed::kState, f.read_all<float>(packed::kState), s.state_dim);
    check_finite(f, packed::kAction, f.read_all<float>(packed::kAction), s.action_dim);
  }
  if (f.has(packed::kReward)) check_finite(f, packed::kReward, f.read_all<float>(packed::kReward), 1);
  if (f.has(packed::kDone)) {
    std::vector<uint8_t> done = f.read_all<uint8_t>(packed::kDone);
    for (size_t i = 0; i < done.size(); ++i)
      if (done[i] > 1) f.fail(packed::kDone, str("value ", int(done[i]), " at row ", i, " is not 0 or 1"));
  }
  std::vector<int32_t> tokens = f.read_all<int32_t>(packed::kTaskTokens);
  for (size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] < 0 || tokens[i] >= kVocabSize)
      f.fail(packed::kTaskTokens, str("token id ", tokens[i], " at index ", i, " out of range [0, ", kVocabSize, ")"));
  verify_stats(f, "state", s.state_dim);
  verify_stats(f, "action", s.action_dim);
  if (f.has(packed::kReward)) verify_stats(f, "reward", 1);
  if (f.has(packed::kActionRelativeStats)) verify_stats(f, "action_relative", s.action_dim);
}

PackedSummary verify(const H5File& f, Depth depth) {
  const bool small_values = depth != Depth::structure, values = depth == Depth::all_values;
  PackedSummary s;
  verify_root(f, s);
  const std::vector<int64_t> ep = verify_tables(f, s);
  verify_views(f, s, ep, small_values, values);
  verify_ids(f, s);
  if (small_values) verify_values(f, s, values);
  return s;
}

}  // namespace

void check_offsets(const H5File& f, const std::string& ds, const std::vector<int64_t>& offsets, int64_t rows,
                   int64_t total, bool nonempty) {
  if (int64_t(offsets.size()) != rows + 1) f.fail(ds, str("expected ", rows + 1, " entries, found ", offsets.size()));
  if (offsets[0] != 0) f.fail(ds, str("first entry is ", offsets[0], ", expected 0"));
  for (size_t i = 1; i < offsets.size(); ++i)
    if (offsets[i] < offsets[i - 1] || (nonempty && offsets[i] == offsets[i - 1]))
      f.fail(ds, str("not monotonic at index ", i));
  if (offsets.back() != total) f.fail(ds, str("last entry is ", offsets.back(), ", expected ", total, " (row count)"));
}

std::vector<BulkArray> bulk_arrays(const H5File& f) {
  std::vector<BulkArray> out;
  for (const char* ds : {packed::kState, packed::kAction}) {
    const std::vector<int64_t> d = f.dims(ds);
    out.push_back({ds, Elem::f32, d[0], product_after_first(d)});
  }
  for (const char* group : {"/features", packed::kLatents}) {
    if (!f.has(group)) continue;
    for (const std::string& name : f.members(group)) {
      const std::string ds = str(group, "/", name);
      if (name.size() >= 8 && name.compare(name.size() - 8, 8, "_offsets") == 0) continue;
      const std::vector<int64_t> d = f.dims(ds);
      out.push_back({ds, Elem::f16, d[0], product_after_first(d)});
    }
  }
  return out;
}

uint32_t check_bulk_rows(const H5File& f, const BulkArray& a, int64_t begin, int64_t end, uint32_t crc) {
  const int64_t row_bytes = std::max<int64_t>(a.row_elems * int64_t(elem_size(a.elem)), 1);
  const int64_t block = std::max<int64_t>(1, (int64_t(16) << 20) / row_bytes);
  std::vector<unsigned char> buf;
  for (int64_t r = begin; r < end; r += block) {
    const int64_t n = std::min(block, end - r);
    RowRanges rows;
    rows.add(r, r + n);
    rows.finish();
    buf.resize(size_t(n * row_bytes));
    f.read_rows(a.name, a.elem, rows, buf.data());
    const size_t count = size_t(n * a.row_elems);
    if (a.elem == Elem::f16) {
      check_finite(f, a.name, reinterpret_cast<const uint16_t*>(buf.data()), count, a.row_elems, r);
    } else {
      check_finite(f, a.name, reinterpret_cast<const float*>(buf.data()), count, a.row_elems, r);
    }
    crc = uint32_t(crc32_z(crc, buf.data(), buf.size()));
  }
  return crc;
}

PackedSummary verify_structure(const H5File& f) { return verify(f, Depth::structure); }
PackedSummary verify_small_values(const H5File& f) { return verify(f, Depth::small_values); }
PackedSummary verify_packed(const H5File& f) { return verify(f, Depth::all_values); }

}  // namespace emb
