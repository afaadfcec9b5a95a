// Every trainable tensor of a model: its MODEL.md name, shape, initialisation, weight-decay
// flag and unit. Parameters live in ONE flat fp32 buffer in registration order, grouped
// contiguously by unit (DESIGN.md "Parallelism": a unit is what ZeRO-3 gathers at once), so a
// unit is one [offset, offset + count) range. Building a registry allocates no parameters:
// --plan sizes dreamzero14b from it.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace emb {

// loaded: values a run reads from elsewhere (train.tune_visual's vision tower, from the backbone's
// checkpoint); init writes zeros there, and such tensors take no draw stream, so adding them
// leaves every other tensor's initial values as they were.
enum class ParamInit { normal, zeros, ones, loaded };

struct ParamInfo {
  std::string name;
  std::vector<int64_t> shape;
  int64_t offset = 0;  // into the flat buffer
  int64_t numel = 0;
  ParamInit init = ParamInit::normal;
  bool decay = true;  // AdamW weight decay (off for biases, norms, embeddings, modulations)
  int unit = 0;
  uint64_t draw_key = 0;  // its random draws' stream: its index among the tensors not loaded
};

struct UnitRange {
  std::string name;
  int64_t offset = 0, count = 0;
};

// A linear layer's tensors: W [in, out] (or [E, in, out]) and b [out] (or [E, out]).
struct LinearRef {
  int weight = -1, bias = -1;
  int in = 0, out = 0, n_emb = 0;  // n_emb > 0: per-embodiment slots
};

// A norm with affine parameters: weight (ones) and optionally bias (zeros).
struct NormRef {
  int weight = -1, bias = -1;
};

class ParamRegistry {
 public:
  // Opens a new unit; every tensor added afterwards belongs to it.
  void begin_unit(const std::string& name);
  int add(const std::string& name, std::vector<int64_t> shape, ParamInit init, bool decay);
  LinearRef add_linear(const std::string& name, int in, int out);
  LinearRef add_linear_emb(const std::string& name, int n_emb, int in, int out);
  NormRef add_layernorm(const std::string& name, int dim);  // `name.weight` (ones), `name.bias` (zeros)
  NormRef add_rmsnorm(const std::string& name, int dim);

  const std::vector<ParamInfo>& all() const { return params_; }
  const ParamInfo& operator[](int i) const { return params_[size_t(i)]; }
  int size() const { return int(params_.size()); }
  // Throws emb::Error for an unknown name.
  const ParamInfo& get(const std::string& name) const;
  bool contains(const std::string& name) const { return index_.count(name) != 0; }

  int64_t total() const { return total_; }
  int n_units() const { return int(units_.size()); }
  const UnitRange& unit(int u) const { return units_[size_t(u)]; }
  int64_t max_unit_count() const;

  // Writes every tensor's initial values: normal(std) draws keyed by (seed, init, draw_key) so a
  // tensor's values do not depend on any other tensor's size.
  void init(float* params, uint64_t seed, double std) const;
  // Writes the initial values of the flat elements [begin, end) to out[0, end - begin), bit
  // for bit what init() writes there: a ZeRO rank draws only the shard it keeps, and any rank
  // count starts from the same parameters. Throws emb::Error for a range outside the buffer.
  void init_range(float* out, int64_t begin, int64_t end, uint64_t seed, double std) const;
  // Random values at the scales of a trained network, for parity checks (--dump with
  // debug.random_params): linear weights N(0, 1/fan_in), biases N(0, 0.05²), norm weights
  // 1 + N(0, 0.1²), raw tensors (future tokens, position tables, modulation tables) N(0, 0.5²),
  // so that every term of the math has a value of its own (tests/upstream/make_tiny_checkpoint.py
  // draws its tensors by the same rules). Keyed by (seed, draw_key), as init().
  void init_random(float* params, uint64_t seed) const;

 private:
  std::vector<ParamInfo> params_;
  std::vector<UnitRange> units_;
  std::unordered_map<std::string, int> index_;
  int64_t total_ = 0;
  uint64_t drawn_ = 0;  // tensors registered so far that are not loaded
};

}  // namespace emb
