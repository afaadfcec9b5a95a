#include "model/dump.hpp"

#include <hdf5.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <type_traits>
#include <vector>

#include "core/error.hpp"
#include "kernels/dropout_keep.hpp"
#include "kernels/op_types.hpp"
#include "model/self_mask.hpp"

namespace emb {
namespace {

// A serial HDF5 file being written (created, or reopened to append); every failure is one
// emb::Error line naming the file.
class DumpWriter {
 public:
  // Opens `tmp_path` (created when `create`); messages name `path`, the file the user asked for.
  DumpWriter(const std::string& tmp_path, const std::string& path, bool create) : path_(path) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors are reported once, by us
    file_ = create ? H5Fcreate(tmp_path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)
                   : H5Fopen(tmp_path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    if (file_ < 0)
      throw Error(str(path, create ? ": cannot create the dump file (is the directory writable?)"
                                   : ": cannot reopen the dump file to add this rank's micro-batches (is the "
                                     "directory shared by the ranks?)"));
  }
  ~DumpWriter() { close(); }
  void close() {
    if (file_ >= 0) H5Fclose(file_);
    file_ = -1;
  }

  void group(const std::string& name) {
    hid_t g = H5Gcreate2(file_, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    check(g >= 0, name);
    H5Gclose(g);
  }

  template <class T>
  void dataset(const std::string& name, const T* data, std::vector<hsize_t> dims) {
    const hid_t type = std::is_same<T, float>::value     ? H5T_NATIVE_FLOAT
                       : std::is_same<T, double>::value  ? H5T_NATIVE_DOUBLE
                       : std::is_same<T, int64_t>::value ? H5T_NATIVE_INT64
                       : std::is_same<T, uint8_t>::value ? H5T_NATIVE_UINT8
                                                         : H5T_NATIVE_INT32;
    static_assert(std::is_same<T, float>::value || std::is_same<T, double>::value || std::is_same<T, int64_t>::value ||
                  std::is_same<T, uint8_t>::value || std::is_same<T, int32_t>::value);
    hid_t space = H5Screate_simple(int(dims.size()), dims.data(), nullptr);
    hid_t set = H5Dcreate2(file_, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    bool ok = set >= 0;
    hsize_t n = 1;
    for (hsize_t d : dims) n *= d;
    if (ok && n > 0) ok = H5Dwrite(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0;
    if (set >= 0) H5Dclose(set);
    H5Sclose(space);
    check(ok, name);
  }
  template <class T>
  void dataset(const std::string& name, const std::vector<T>& v, std::vector<hsize_t> dims) {
    dataset(name, v.data(), std::move(dims));
  }

  void attr(const char* name, double value, hid_t type) {
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(file_, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    bool ok = a >= 0;
    if (type == H5T_NATIVE_INT64) {
      const int64_t i = int64_t(value);
      ok = ok && H5Awrite(a, type, &i) >= 0;
    } else if (type == H5T_NATIVE_INT32) {
      const int32_t i = int32_t(value);
      ok = ok && H5Awrite(a, type, &i) >= 0;
    } else {
      ok = ok && H5Awrite(a, type, &value) >= 0;
    }
    if (a >= 0) H5Aclose(a);
    H5Sclose(space);
    check(ok, name);
  }
  void attr(const char* name, int value) { attr(name, double(value), H5T_NATIVE_INT32); }
  void attr(const char* name, const std::string& value) {
    hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, value.size() + 1);
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(file_, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    const bool ok = a >= 0 && H5Awrite(a, type, value.c_str()) >= 0;
    if (a >= 0) H5Aclose(a);
    H5Sclose(space);
    H5Tclose(type);
    check(ok, name);
  }

 private:
  void check(bool ok, const std::string& what) const {
    if (!ok) throw Error(str(path_, ":/", what, ": cannot write"));
  }
  std::string path_;
  hid_t file_ = -1;
};

std::string temporary(const std::string& path) { return path + ".tmp"; }

void write_header(DumpWriter& w, const Model& model, const float* params, const float* grads, const DumpStep& step) {
  const ModelConfig& c = model.config();
  w.attr("loss", step.loss, H5T_NATIVE_DOUBLE);
  w.attr("family", std::string(family_name(c.family)));
  w.attr("self_mask", std::string(attn_mask_name(dit_self_mask(c))));
  w.attr("seed", double(step.seed), H5T_NATIVE_INT64);
  w.attr("step", double(step.step), H5T_NATIVE_INT64);
  w.attr("ranks", step.ranks), w.attr("micro_batches", step.micro_batches);
  w.dataset("loss_denominators", step.denominators, {hsize_t(step.denominators.size())});
  w.attr("d_model", c.d_model), w.attr("n_heads", c.n_heads), w.attr("n_layers", c.n_layers), w.attr("d_ff", c.d_ff);
  w.attr("action_dim", c.action_dim);
  if (c.family == Family::gr00t) {
    w.attr("d_vl", c.d_ctx), w.attr("n_heads_vl", c.n_heads_vl), w.attr("n_layers_vl", c.n_layers_vl);
    w.attr("d_out", c.d_out), w.attr("d_hidden_enc", c.d_hidden_enc), w.attr("n_embodiments", c.n_embodiments);
    w.attr("state_dim", c.state_dim), w.attr("horizon", c.horizon), w.attr("n_future", c.n_future);
    w.attr("max_seq_len", c.max_seq_len);
    w.attr("dropout", c.dropout, H5T_NATIVE_DOUBLE), w.attr("dropout_vl", c.dropout_vl, H5T_NATIVE_DOUBLE);
    if (c.online_backbone) w.attr("backbone_dir", c.backbone_dir), w.attr("tune_visual", int(c.tune_visual));
  } else {
    w.attr("d_txt", c.d_ctx), w.attr("patch_dim", c.patch_dim_in()), w.attr("patch_dim_out", c.patch_dim_out());
    w.attr("latent_channels", c.latent_channels), w.attr("out_channels", c.out_channels);
    w.attr("frames_per_block", c.frames_per_block), w.attr("actions_per_block", c.actions_per_block);
    w.attr("first_frame_block", int(c.first_frame_block)), w.attr("states_per_block", c.states_per_block);
    w.attr("state_dim", c.state_dim), w.attr("max_chunk_size", c.max_chunk), w.attr("d_hidden_enc", c.d_hidden_enc);
    w.attr("latent_height", c.latent_height), w.attr("latent_width", c.latent_width), w.attr("text_len", c.text_len);
    w.attr("cond_channels", c.cond_channels), w.attr("embed_patch_dim", c.embed_patch_dim());
    w.attr("clip_tokens", c.clip_tokens), w.attr("d_clip", c.d_clip);
    w.attr("shift", c.shift, H5T_NATIVE_DOUBLE);
    w.attr("action_loss_weight", c.action_loss_weight, H5T_NATIVE_DOUBLE);
  }

  w.group("params");
  w.group("grads");
  for (const ParamInfo& p : model.params().all()) {
    const std::vector<hsize_t> dims(p.shape.begin(), p.shape.end());
    w.dataset("params/" + p.name, params + p.offset, dims);
    w.dataset("grads/" + p.name, grads + p.offset, dims);
  }
  w.group("micro_batch");
}

// The keep-masks of every dropout site of every sample of `b` (uint8 [tokens, width] in the
// sample's token order, under dropout/<slot>/<site>): kernels/dropout_keep.hpp's rule, as the
// backends drew them.
void write_dropout_masks(DumpWriter& w, const std::string& g, const Model& model, const PackedBatch& b,
                         const DumpStep& step) {
  const std::vector<Model::DropoutSite> sites = model.dropout_sites();
  if (sites.empty()) return;
  w.group(g + "dropout");
  for (int s = 0; s < b.n_samples; ++s) {
    const std::string sample = str(g, "dropout/", s);
    w.group(sample);
    const int64_t query = std::count(b.seq.begin(), b.seq.end(), s), context = std::count(b.cseq.begin(), b.cseq.end(), s);
    for (const Model::DropoutSite& site : sites) {
      const DropoutConfig cfg{site.p, step.seed, step.step, site.id};
      const uint32_t threshold = dropout_threshold(site.p);
      const int64_t rows = site.context ? context : query;
      std::vector<uint8_t> keep(size_t(rows * site.width));
      for (size_t e = 0; e < keep.size(); ++e) keep[e] = dropout_keep(cfg, threshold, b.sample_id[size_t(s)], e);
      w.dataset(sample + "/" + site.name, keep, {hsize_t(rows), hsize_t(site.width)});
    }
  }
}

// video_x0's rows as upstream's patch embedding reads them (UPSTREAM.md, the dump of the wan
// family): per patch pixel the C latents then the Cy I2V y channels of video_cond.
std::vector<float> latents_with_conditioning(const ModelConfig& c, const PackedBatch& b) {
  if (c.cond_channels == 0) return b.video_x0;
  const size_t C = size_t(c.latent_channels), Cy = size_t(c.cond_channels), pix = size_t(c.patch_pixels());
  const size_t rows = b.video_x0.size() / (C * pix);
  std::vector<float> out;
  out.reserve(rows * pix * (C + Cy));
  for (size_t r = 0; r < rows; ++r)
    for (size_t p = 0; p < pix; ++p) {
      const float* x = b.video_x0.data() + (r * pix + p) * C;
      const float* y = b.video_cond.data() + (r * pix + p) * Cy;
      out.insert(out.end(), x, x + C);
      out.insert(out.end(), y, y + Cy);
    }
  return out;
}

void write_micro_batch(DumpWriter& w, const Model& model, const DumpStep& step, int k, const DumpMicroBatch& mb) {
  const ModelConfig& c = model.config();
  const PackedBatch& b = mb.batch;
  const FlowDraws& d = mb.draws;
  const TokenLayout& L = mb.layout;
  const hsize_t T = hsize_t(b.n_tokens), Tc = hsize_t(b.n_context), B = hsize_t(b.n_samples);
  const std::string g = str("micro_batch/", k, "/");
  w.group(g);
  w.dataset(g + "rank", &mb.rank, {1});
  w.dataset(g + "seq", b.seq, {T});
  w.dataset(g + "blk", b.blk, {T});
  w.dataset(g + "grp", b.grp, {T});
  w.dataset(g + "kind", b.kind, {T});
  w.dataset(g + "pos", b.pos, {T, 3});
  w.dataset(g + "temb_t", d.temb_t, {T});
  w.dataset(g + "cseq", b.cseq, {Tc});
  w.dataset(g + "sample_id", b.sample_id, {B});
  w.dataset(g + (c.family == Family::gr00t ? "vl" : "txt"), b.context, {Tc, hsize_t(c.d_ctx)});
  if (c.family == Family::gr00t) {
    const hsize_t Hz = hsize_t(c.horizon), A = hsize_t(c.action_dim);
    w.dataset(g + "state", b.state, {B, hsize_t(c.state_dim)});
    w.dataset(g + "actions", b.actions, {B, Hz, A});
    w.dataset(g + "action_mask", b.action_mask, {B, Hz, A});
    w.dataset(g + "noise", d.noise, {B, Hz, A});
    w.dataset(g + "tau", d.tau, {B});
    w.dataset(g + "tq", d.tq, {B});
    w.dataset(g + "emb_id", b.emb_id, {B});
    write_dropout_masks(w, g, model, b, step);
    if (!mb.frames.empty()) {  // model.backbone = online: the backbone's inputs
      const hsize_t S = hsize_t(mb.frame_size), images = hsize_t(mb.frames.size()) / (S * S * 3);
      w.dataset(g + "prompt", b.prompt, {Tc});
      w.dataset(g + "frames", mb.frames, {images, S, S, 3});
    }
  } else {
    const hsize_t Tv = hsize_t(L.n_video), Ta = hsize_t(L.action.size());
    const hsize_t P = hsize_t(c.patch_dim_in()), A = hsize_t(c.action_dim);
    w.dataset(g + "video_x0", latents_with_conditioning(c, b), {Tv, hsize_t(c.embed_patch_dim())});
    w.dataset(g + "video_noise", d.video_noise, {Tv, P});
    w.dataset(g + "act_x0", b.act_x0, {Ta, A});
    w.dataset(g + "act_noise", d.act_noise, {Ta, A});
    if (c.states_per_block > 0) w.dataset(g + "state", b.state, {hsize_t(L.state.size()), hsize_t(c.state_dim)});
    if (c.clip_tokens > 0) w.dataset(g + "clip", b.clip, {B, hsize_t(c.clip_tokens), hsize_t(c.d_clip)});
    if (!b.act_mask.empty()) w.dataset(g + "action_mask", b.act_mask, {Ta, A});
    if (!b.has_real_action.empty()) w.dataset(g + "has_real_action", b.has_real_action, {B});
    w.dataset(g + "sigma", d.sigma, {T});
    w.dataset(g + "temb_t_lo", d.temb_t_lo, {T});
    w.dataset(g + "loss_weight", d.loss_weight, {T});
  }
}

// Runs `write` on the file; any failure removes the temporary (the dump is abandoned).
template <class Write>
void write_part(const std::string& path, bool create, Write&& write) {
  try {
    DumpWriter w(temporary(path), path, create);
    write(w);
    w.close();
  } catch (...) {
    abandon_dump(path);
    throw;
  }
}

}  // namespace

DumpMicroBatch dumped_micro_batch(const Model& model, const PackedBatch& batch, int rank) {
  DumpMicroBatch mb;
  mb.rank = rank, mb.batch = batch, mb.draws = model.last_draws(), mb.layout = model.last_layout();
  return mb;
}

void begin_dump(const std::string& path, const Model& model, const float* params, const float* grads,
                const DumpStep& step) {
  write_part(path, true, [&](DumpWriter& w) { write_header(w, model, params, grads, step); });
}

void append_dump(const std::string& path, const Model& model, const DumpStep& step, int first,
                 const std::vector<DumpMicroBatch>& mbs) {
  write_part(path, false, [&](DumpWriter& w) {
    for (size_t i = 0; i < mbs.size(); ++i) write_micro_batch(w, model, step, first + int(i), mbs[i]);
  });
}

void finish_dump(const std::string& path) {
  if (std::rename(temporary(path).c_str(), path.c_str()) != 0) {
    abandon_dump(path);
    throw Error(str(path, ": cannot rename the finished dump into place"));
  }
}

void abandon_dump(const std::string& path) { std::remove(temporary(path).c_str()); }

}  // namespace emb
