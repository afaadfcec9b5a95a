// Reading a frozen encoder's tensors from its released checkpoint (a WeightSource: safetensors
// or torch .pth) into an Ops backend, by the names upstream stores, after checking each one's
// presence and shape: a missing or misshaped tensor is one line naming the file, the tensor, the
// shape expected and what decides it (emb::Error, exit 2). Linear weights arrive as nn.Linear
// [out, in] and leave as the ops' packed W [in, out]; several can be set side by side (a fused QKV).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "encoders/common/backend_tensors.hpp"
#include "weights/weight_source.hpp"

namespace emb::encoders {

// How errors name a checkpoint's tensors: "<file>: <kind> <name> is missing (<reader> reads it;
// shape [..])", "<file>: <kind> <name> has shape [..], expected [..] (<shapes_from>)".
struct TensorOwner {
  std::string kind;         // "backbone tensor", "VAE tensor", ...
  std::string reader;       // "GR00T-N1.5's Eagle backbone"
  std::string shapes_from;  // "the Eagle config and backbone_cfg.select_layer"
};

// "[a, b, c]"
std::string shape_text(const std::vector<int64_t>& shape);

// A digest of the tensors of `source` whose names `take` accepts: FNV-1a 64 over each one's
// name, dtype, shape and stored bytes, in name order, as 16 hex digits. The identity of the
// weights that made a packed file's features (training compares it with its own); it reads every
// byte of those tensors once (a few seconds per GB).
std::string tensors_digest(const WeightSource& source, const std::function<bool(const std::string&)>& take);

// Throws the one-line error unless `source` holds `name` with `shape`.
void check_tensor(const WeightSource& source, const TensorOwner& owner, const std::string& name,
                  const std::vector<int64_t>& shape);

// The form linears() leaves its weights in: the backend's packed form (frozen weights, only
// multiplied by packed_linear_forward) or plain W [in, out] (weights a backward multiplies by
// their transpose: linear_forward / linear_backward).
enum class LinearForm { packed, plain };

class CheckpointReader {
 public:
  CheckpointReader(const WeightSource& source, BackendTensors& store, TensorOwner owner,
                   LinearForm form = LinearForm::packed);

  // Throws the one-line error unless the checkpoint holds `name` with `shape`.
  void check(const std::string& name, const std::vector<int64_t>& shape) const;
  // The tensor as stored (row-major, converted to fp32 on the host), checked against `shape`.
  std::vector<float> read(const std::string& name, const std::vector<int64_t>& shape) const;
  // A [n] vector as [1, n] in backend memory.
  View vector(const std::string& name, int64_t n) const;
  // Vectors of `names` side by side: [1, Σ n].
  View vectors(const std::vector<std::string>& names, const std::vector<int64_t>& ns) const;
  // nn.Linear weights [out, in] of `names`, transposed and set side by side as W [in, Σ out], in
  // the reader's LinearForm (packed: Ops::pack_linear).
  View linears(const std::vector<std::string>& names, int64_t in, const std::vector<int64_t>& outs) const;
  View linear(const std::string& name, int64_t in, int64_t out) const { return linears({name}, in, {out}); }
  // W [in, out] (host, row-major) in the backend's packed form.
  View packed(const std::vector<float>& W, int64_t in, int64_t out) const;
  // A convolution's weight [kt·S, Co] (host, conv3d_forward's row order) in the backend's packed
  // form (Ops::pack_conv3d).
  View packed_conv(const std::vector<float>& weight, int kt, int64_t rows, int64_t cols) const;
  // A [rows, cols] table read in slices of rows (a vocabulary's embedding without a second full
  // copy on the host).
  View table(const std::string& name, int64_t rows, int64_t cols) const;
  // Host values [rows, cols] into backend memory (tensors the loader rearranged itself).
  View upload(const std::vector<float>& values, int64_t rows, int64_t cols) const;

  const WeightSource& source() const { return source_; }

 private:
  const WeightSource& source_;
  BackendTensors& store_;
  TensorOwner owner_;
  LinearForm form_;
};

}  // namespace emb::encoders
