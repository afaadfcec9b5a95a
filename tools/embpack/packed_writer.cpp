#include "packed_writer.hpp"

#include "column_stats.hpp"
#include "core/error.hpp"
#include "data/h5_file.hpp"
#include "data/packed_format.hpp"
#include "data/packed_verify.hpp"
#include "data/tokenizer.hpp"
#include "temp_output.hpp"

namespace emb {

namespace {

void write_stats(H5File& f, const std::string& field, const std::vector<float>& rows, int64_t dim) {
  ColumnStats s = column_stats(rows, dim);
  const std::vector<float>* values[] = {&s.mean, &s.std, &s.min, &s.max, &s.q01, &s.q99};
  for (size_t i = 0; i < packed::kStatNames.size(); ++i)
    f.write(str("/stats/", field, "/", packed::kStatNames[i]), {dim}, values[i]->data());
}

void write_features(H5File& f, const std::string& name, const VarlenFeatures& v) {
  f.write(str("/features/", name), {v.offsets.back(), v.dim}, v.values.data());
  f.write(str("/features/", name, "_offsets"), {int64_t(v.offsets.size())}, v.offsets.data());
}

}  // namespace

void write_packed(const PackedData& d, const std::string& out, const std::string& created_by) {
  int64_t S = d.steps(), E = d.episodes();
  EMB_ASSERT(int64_t(d.state.size()) == S * d.state_dim && int64_t(d.action.size()) == S * d.action_dim);
  TempOutput temp(out);
  {
    H5File f = H5File::create(temp.temp_path());
    f.set_attr("/", "format", packed::kFormat);
    f.set_attr("/", "family", d.family);
    f.set_attr("/", "fps", d.fps);
    f.set_attr("/", "source", d.source);
    f.set_attr("/", "created_by", created_by);
    f.write(packed::kEpisodeOffsets, {E + 1}, d.episode_offsets.data());
    f.write(packed::kEpisodeTask, {E}, d.episode_task.data());
    f.write(packed::kEpisodeEmbodiment, {E}, d.episode_embodiment.data());
    if (!d.embodiment_state_dim.empty()) {
      int64_t n = int64_t(d.embodiment_state_dim.size());
      f.write(packed::kEmbodimentStateDim, {n}, d.embodiment_state_dim.data());
      f.write(packed::kEmbodimentActionDim, {n}, d.embodiment_action_dim.data());
    }
    f.write(packed::kState, {S, d.state_dim}, d.state.data());
    f.write(packed::kAction, {S, d.action_dim}, d.action.data());
    write_stats(f, "state", d.state, d.state_dim);
    write_stats(f, "action", d.action, d.action_dim);
    if (!d.reward.empty()) {
      f.write(packed::kReward, {S}, d.reward.data());
      write_stats(f, "reward", d.reward, 1);
    }
    if (!d.done.empty()) f.write(packed::kDone, {S}, d.done.data());

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

    for (const auto& [name, v] : d.features) write_features(f, name, v);
    for (const LatentView& l : d.latents) {
      std::string ds = str(packed::kLatents, "/", l.name);
      f.write(ds, {l.offsets.back(), l.height, l.width, l.channels}, l.values.data());
      f.set_attr(ds, packed::kStepsPerLatent, double(l.steps_per_latent));
      f.write(ds + "_offsets", {int64_t(l.offsets.size())}, l.offsets.data());
    }
    for (const VideoView& v : d.videos)
      f.write(str(packed::kVideo, "/", v.name), {S, v.height, v.width, 3}, v.frames.data());
  }
  verify_packed(H5File::open(temp.temp_path()));
  temp.commit();
}

}  // namespace emb
