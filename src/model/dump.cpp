#include "model/dump.hpp"

#include <hdf5.h>

#include <cstdio>
#include <type_traits>
#include <vector>

#include "core/error.hpp"

namespace emb {
namespace {

const char* self_mask_name(const ModelConfig& cfg) {
  switch (cfg.self_mask) {
    case SelfMask::full: return "full";
    case SelfMask::block_causal: return "block_causal";
    case SelfMask::prefix: return "prefix";
    case SelfMask::family: break;
  }
  return cfg.family == Family::gr00t ? "full" : "block_causal";
}

// A serial HDF5 file being written; every failure is one emb::Error line naming the file.
class DumpWriter {
 public:
  // Creates `tmp_path`; messages name `path`, the file the user asked for.
  DumpWriter(const std::string& tmp_path, const std::string& path) : path_(path) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors are reported once, by us
    file_ = H5Fcreate(tmp_path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (file_ < 0) throw Error(str(path, ": cannot create the dump file (is the directory writable?)"));
  }
  ~DumpWriter() { close(); }
  void close() {
    if (file_ >= 0) H5Fclose(file_);
    file_ = -1;
  }

  void group(const char* name) {
    hid_t g = H5Gcreate2(file_, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    check(g >= 0, name);
    H5Gclose(g);
  }

  template <class T>
  void dataset(const std::string& name, const T* data, std::vector<hsize_t> dims) {
    const hid_t type = std::is_same<T, float>::value ? H5T_NATIVE_FLOAT : H5T_NATIVE_INT32;
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
    if (type == H5T_NATIVE_FLOAT) {
      const float f = float(value);
      ok = ok && H5Awrite(a, type, &f) >= 0;
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

void write_contents(DumpWriter& w, const Model& model, const float* params, const float* grads,
                    const PackedBatch& b, double loss) {
  const ModelConfig& c = model.config();
  const FlowDraws& d = model.last_draws();
  const TokenLayout& L = model.last_layout();
  const hsize_t T = hsize_t(b.n_tokens), Tc = hsize_t(b.n_context), B = hsize_t(b.n_samples);

  w.attr("loss", loss, H5T_NATIVE_FLOAT);
  w.attr("family", std::string(family_name(c.family)));
  w.attr("self_mask", std::string(self_mask_name(c)));
  w.attr("d_model", c.d_model), w.attr("n_heads", c.n_heads), w.attr("n_layers", c.n_layers), w.attr("d_ff", c.d_ff);
  w.attr("action_dim", c.action_dim);
  if (c.family == Family::gr00t) {
    w.attr("d_vl", c.d_ctx), w.attr("n_heads_vl", c.n_heads_vl), w.attr("n_layers_vl", c.n_layers_vl);
    w.attr("d_out", c.d_out), w.attr("d_hidden_enc", c.d_hidden_enc), w.attr("n_embodiments", c.n_embodiments);
    w.attr("state_dim", c.state_dim), w.attr("horizon", c.horizon), w.attr("n_future", c.n_future);
  } else {
    w.attr("d_txt", c.d_ctx), w.attr("patch_dim", c.patch_dim_in()), w.attr("patch_dim_out", c.patch_dim_out());
    w.attr("latent_channels", c.latent_channels), w.attr("out_channels", c.out_channels);
    w.attr("frames_per_block", c.frames_per_block), w.attr("actions_per_block", c.actions_per_block);
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

  w.group("batch");
  w.dataset("batch/seq", b.seq, {T});
  w.dataset("batch/blk", b.blk, {T});
  w.dataset("batch/grp", b.grp, {T});
  w.dataset("batch/kind", b.kind, {T});
  w.dataset("batch/pos", b.pos, {T, 3});
  w.dataset("batch/temb_t", d.temb_t, {T});
  w.dataset("batch/cseq", b.cseq, {Tc});
  w.dataset(c.family == Family::gr00t ? "batch/vl" : "batch/txt", b.context, {Tc, hsize_t(c.d_ctx)});
  if (c.family == Family::gr00t) {
    const hsize_t Hz = hsize_t(c.horizon), A = hsize_t(c.action_dim);
    w.dataset("batch/state", b.state, {B, hsize_t(c.state_dim)});
    w.dataset("batch/actions", b.actions, {B, Hz, A});
    w.dataset("batch/action_mask", b.action_mask, {B, Hz, A});
    w.dataset("batch/noise", d.noise, {B, Hz, A});
    w.dataset("batch/tau", d.tau, {B});
    w.dataset("batch/tq", d.tq, {B});
    w.dataset("batch/emb_id", b.emb_id, {B});
  } else {
    const hsize_t Tv = hsize_t(L.n_video), Ta = hsize_t(L.action.size());
    const hsize_t P = hsize_t(c.patch_dim_in()), A = hsize_t(c.action_dim);
    w.dataset("batch/video_x0", b.video_x0, {Tv, P});
    w.dataset("batch/video_noise", d.video_noise, {Tv, P});
    w.dataset("batch/act_x0", b.act_x0, {Ta, A});
    w.dataset("batch/act_noise", d.act_noise, {Ta, A});
    w.dataset("batch/sigma", d.sigma, {T});
  }
}

}  // namespace

void write_dump(const std::string& path, const Model& model, const float* params, const float* grads,
                const PackedBatch& batch, double loss) {
  const std::string tmp = path + ".tmp";
  try {
    DumpWriter w(tmp, path);
    write_contents(w, model, params, grads, batch, loss);
    w.close();
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw Error(str(path, ": cannot rename the finished dump into place"));
  }
}

}  // namespace emb
