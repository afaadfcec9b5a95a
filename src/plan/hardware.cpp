#include "plan/hardware.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace emb {
namespace {

std::string resolve(const std::string& name_or_path) {
  const bool is_path = name_or_path.find('/') != std::string::npos ||
                       (name_or_path.size() > 5 && name_or_path.substr(name_or_path.size() - 5) == ".json");
  return is_path ? name_or_path : std::string(EMBTRAIN_HW_DIR) + "/" + name_or_path + ".json";
}

// Reads figure `key` ("a.b"): {"value": v, "source": "..."} with a non-empty source.
class FigureReader {
 public:
  FigureReader(const nlohmann::json& j, const std::string& path) : j_(j), path_(path) {}
  double operator()(const std::string& key) const {
    const nlohmann::json* node = &j_;
    size_t begin = 0;
    while (true) {
      const size_t dot = key.find('.', begin);
      const std::string part = key.substr(begin, dot == std::string::npos ? std::string::npos : dot - begin);
      if (!node->is_object() || !node->contains(part))
        throw Error(str(path_, ": hardware figure ", key, " is missing"), kExitInput);
      node = &(*node)[part];
      if (dot == std::string::npos) break;
      begin = dot + 1;
    }
    if (!node->is_object() || !node->contains("value") || !(*node)["value"].is_number())
      throw Error(str(path_, ": hardware figure ", key, " needs {\"value\": number, \"source\": text}"), kExitInput);
    if (!node->contains("source") || !(*node)["source"].is_string() || (*node)["source"].get<std::string>().empty())
      throw Error(str(path_, ": hardware figure ", key, " has no source"), kExitInput);
    return (*node)["value"].get<double>();
  }

 private:
  const nlohmann::json& j_;
  std::string path_;
};

// fixed_costs: every figure present, the GPU's launch figures both or neither; the noise draws'
// figure where measured (probes before session 25 have none: 0).
FixedCosts read_fixed_costs(const nlohmann::json& j, const FigureReader& f, const std::string& path) {
  FixedCosts c;
  if (!j.contains("fixed_costs")) return c;
  c.op_call_s = f("fixed_costs.op_call_s");
  c.allocation_s = f("fixed_costs.allocation_s");
  c.sync_s = f("fixed_costs.sync_s");
  const nlohmann::json& fc = j["fixed_costs"];
  if (fc.contains("noise_draw_s")) c.noise_draw_s = f("fixed_costs.noise_draw_s");
  if (fc.contains("kernel_launch_s") != fc.contains("graph_kernel_launch_s"))
    throw Error(str(path, ": fixed_costs needs kernel_launch_s and graph_kernel_launch_s together (a GPU) or neither"),
                kExitInput);
  if (fc.contains("kernel_launch_s")) {
    c.kernel_launch_s = f("fixed_costs.kernel_launch_s");
    c.graph_kernel_launch_s = f("fixed_costs.graph_kernel_launch_s");
  }
  if (c.op_call_s < 0 || c.allocation_s < 0 || c.sync_s < 0 || c.noise_draw_s < 0 || c.kernel_launch_s < 0 ||
      c.graph_kernel_launch_s < 0)
    throw Error(str(path, ": fixed_costs figures must not be negative"), kExitInput);
  return c;
}

// A table of figures keyed by a positive number (`table` under `parent`: {"<key>": figure,
// ...}), positive values, ascending by key; empty where the file has none.
std::vector<std::pair<double, double>> read_keyed_table(const nlohmann::json& parent, const std::string& prefix,
                                                        const std::string& table, const std::string& key_means,
                                                        const FigureReader& f, const std::string& path) {
  std::vector<std::pair<double, double>> out;
  if (!parent.contains(table)) return out;
  const std::string name = prefix + table;
  for (const auto& [key, figure] : parent[table].items()) {
    double k = 0;
    try {
      k = std::stod(key);
    } catch (const std::exception&) {
      throw Error(str(path, ": ", name, " key '", key, "' is not ", key_means), kExitInput);
    }
    const double value = f(name + "." + key);
    if (k < 1 || value <= 0)
      throw Error(str(path, ": ", name, ".", key, " needs ", key_means, " >= 1 and a positive figure"), kExitInput);
    out.emplace_back(k, value);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The table's value at x, linear in log2(x) between its keys, held at its ends.
double interpolate_log2(const std::vector<std::pair<double, double>>& t, double x) {
  if (x <= t.front().first) return t.front().second;
  if (x >= t.back().first) return t.back().second;
  size_t k = 1;
  while (t[k].first < x) ++k;
  const double a = std::log2(t[k - 1].first), b = std::log2(t[k].first), u = (std::log2(x) - a) / (b - a);
  return t[k - 1].second + u * (t[k].second - t[k - 1].second);
}

// The rate of the smallest size in `by_size` that holds the buffer (the largest size's beyond it);
// `otherwise` without a table.
double rate_for_size(const std::vector<std::pair<double, double>>& by_size, double otherwise, double full_bytes) {
  if (by_size.empty()) return otherwise;
  const auto holds =
      std::find_if(by_size.begin(), by_size.end(), [&](const auto& size_rate) { return size_rate.first >= full_bytes; });
  return holds == by_size.end() ? by_size.back().second : holds->second;
}

}  // namespace

double gemm_efficiency(const Hardware& hw, double width) {
  return hw.gemm_width_efficiency.empty() ? 1 : interpolate_log2(hw.gemm_width_efficiency, width);
}

double attention_forward_fraction(const Hardware& hw, double head_dim) {
  const auto& t = hw.attention_forward_fraction_by_head_dim;
  return t.empty() ? hw.attention_forward_fraction : interpolate_log2(t, head_dim);
}

double linear_efficiency(const Hardware& hw, double narrow, double width) {
  const auto& t = hw.gemm_narrow_efficiency;
  if (t.empty() || narrow >= width || narrow > t.back().first) return gemm_efficiency(hw, width);
  return interpolate_log2(t, narrow);
}

double reduce_rate(const Hardware& hw, double full_bytes) {
  return rate_for_size(hw.reduce_bytes_per_s_by_size, hw.reduce_bytes_per_s, full_bytes);
}

double time_sharing_reduce_rate(const Hardware& hw, double full_bytes) {
  return rate_for_size(hw.time_sharing_reduce_bytes_per_s_by_size, 0, full_bytes);
}

double device_share(const Hardware& hw, int ranks) {
  return hw.ranks_share_node ? std::min(1.0, double(hw.devices_per_node) / ranks) : 1.0;
}

bool ranks_time_share_cores(const Hardware& hw, int ranks) {
  return hw.ranks_share_node && ranks > hw.devices_per_node;
}

double ranks_a_core(const Hardware& hw, int ranks) { return 1 / device_share(hw, ranks); }

bool time_sharing_link_measured(const Hardware& hw) { return hw.time_sharing_link.bytes_per_s > 0; }

CommCoreCost comm_core_cost(const Hardware& hw, int ranks) {
  if (ranks_time_share_cores(hw, ranks) && hw.time_sharing_core_seconds_per_byte > 0)
    return {hw.time_sharing_core_seconds_per_byte, hw.time_sharing_core_seconds_per_call};
  return {hw.comm_core_seconds_per_byte, hw.comm_core_seconds_per_call};
}

double peak_flops_per_rank(const Hardware& hw, bool bf16, int ranks) {
  return (bf16 ? hw.peak_bf16 : hw.peak_fp32) * device_share(hw, ranks);
}

// "a, b, c": each of `items` by `name`, for a refusal that lists what a file may name.
template <class Items, class Name>
std::string listed(const Items& items, Name name) {
  std::string names;
  for (const auto& item : items) names += str(names.empty() ? "" : ", ", name(item));
  return names;
}

// activation_element_seconds {"gelu_tanh": {"forward": figure, "backward": figure}, ...}: the
// activations hwprobe names, each pass not negative.
std::map<Activation, Hardware::ActivationCost> read_activation_costs(const nlohmann::json& j, const FigureReader& f,
                                                                     const std::string& path) {
  std::map<Activation, Hardware::ActivationCost> costs;
  if (!j.contains("activation_element_seconds")) return costs;
  const auto* const end = std::end(kFusedActivations);
  for (const auto& [name, figures] : j["activation_element_seconds"].items()) {
    const auto* it = std::find_if(std::begin(kFusedActivations), end, [&](Activation a) { return name == activation_name(a); });
    if (it == end)
      throw Error(str(path, ": activation_element_seconds has \"", name, "\"; the activations are ",
                      listed(kFusedActivations, activation_name)),
                  kExitInput);
    const std::string key = "activation_element_seconds." + name;
    Hardware::ActivationCost& c = costs[*it];
    c.forward_s = f(key + ".forward"), c.backward_s = f(key + ".backward");
    if (c.forward_s < 0 || c.backward_s < 0)
      throw Error(str(path, ": ", key, " needs forward and backward seconds not negative"), kExitInput);
  }
  return costs;
}

// elementwise_element_seconds {"rope_forward": figure, ...} or elementwise_row_seconds: `key`'s ops,
// each one kArithmeticElementwiseOps names, each figure not negative.
std::map<std::string, double> read_elementwise_costs(const nlohmann::json& j, const FigureReader& f,
                                                     const std::string& path, const std::string& key) {
  std::map<std::string, double> costs;
  if (!j.contains(key)) return costs;
  for (const auto& [name, figure] : j[key].items()) {
    if (std::find(std::begin(kArithmeticElementwiseOps), std::end(kArithmeticElementwiseOps), name) ==
        std::end(kArithmeticElementwiseOps))
      throw Error(str(path, ": ", key, " has \"", name, "\"; the ops are ",
                      listed(kArithmeticElementwiseOps, [](const char* op) { return op; })),
                  kExitInput);
    const double seconds = f(key + "." + name);
    if (seconds < 0) throw Error(str(path, ": ", key, ".", name, " is negative"), kExitInput);
    costs[name] = seconds;
  }
  return costs;
}

Hardware load_hardware(const std::string& name_or_path) {
  Hardware h;
  h.path = resolve(name_or_path);
  std::ifstream in(h.path);
  if (!in) throw Error(str(h.path, ": cannot open the hardware file (plan.hardware = ", name_or_path, ")"), kExitInput);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw Error(str(h.path, ": not valid JSON: ", e.what()), kExitInput);
  }
  const FigureReader f(j, h.path);
  h.name = j.value("name", name_or_path);
  h.devices_per_node = int(f("devices_per_node"));
  h.ranks_share_node = j.value("ranks_share_node", false);
  h.activations_in_compute_precision = j.value("activations_in_compute_precision", true);
  h.comm_overlaps_compute = j.value("comm_overlaps_compute", true);
  h.gemm_rate_on_cached_weights = j.value("gemm_rate_on_cached_weights", false);
  if (j.contains("rank_imbalance")) h.rank_imbalance = f("rank_imbalance");
  if (j.contains("rank_imbalance_ranks")) h.rank_imbalance_ranks = int(f("rank_imbalance_ranks"));
  if (j.contains("scheduler_slice_seconds"))
    throw Error(str(h.path, ": scheduler_slice_seconds is an older hwprobe's figure; the planner reads first_turn_seconds: "
                            "measure the imbalance again (mpirun -np RANKS hwprobe --imbalance)"),
                kExitInput);
  if (j.contains("first_turn_seconds")) h.first_turn_s = f("first_turn_seconds");
  if (j.contains("turn_seconds")) h.turn_s = f("turn_seconds");
  if (j.contains("first_turn_spread_seconds")) h.first_turn_spread_s = f("first_turn_spread_seconds");
  if (h.first_turn_s > 0 && !j.contains("turn_seconds"))
    throw Error(str(h.path, ": first_turn_seconds without turn_seconds is an older hwprobe's (its first turn held a "
                            "later one where more than 2 ranks share a core): measure the imbalance again (mpirun -np "
                            "RANKS hwprobe --imbalance)"),
                kExitInput);
  if (j.contains("spare_core_speedup")) h.spare_core_speedup = f("spare_core_speedup");
  if (j.contains("memory_spare_core_speedup")) h.memory_spare_core_speedup = f("memory_spare_core_speedup");
  h.peak_fp32 = f("peak_flops.fp32"), h.peak_bf16 = f("peak_flops.bf16");
  h.gemm_fp32 = f("gemm_flops.fp32"), h.gemm_bf16 = f("gemm_flops.bf16");
  if (j.contains("gemm_flops") && j["gemm_flops"].contains("fp8")) h.gemm_fp8 = f("gemm_flops.fp8");
  h.attention_fp32 = f("attention_flops.fp32"), h.attention_bf16 = f("attention_flops.bf16");
  if (j.contains("attention_forward_fraction")) h.attention_forward_fraction = f("attention_forward_fraction");
  if (j.contains("attention_pair_head_seconds")) h.attention_pair_head_s = f("attention_pair_head_seconds");
  if (j.contains("attention_masked_tile_ratio")) h.attention_masked_tile_ratio = f("attention_masked_tile_ratio");
  if (j.contains("attention_tile_rows")) h.attention_tile_rows = f("attention_tile_rows");
  if (j.contains("attention_tile_keys")) h.attention_tile_keys = f("attention_tile_keys");
  if (h.attention_tile_rows < 0 || h.attention_tile_keys < 0)
    throw Error(str(h.path, ": attention_tile_rows is ", h.attention_tile_rows, " and attention_tile_keys ",
                    h.attention_tile_keys, ", expected rows and keys not negative (hwprobe measures them)"),
                kExitInput);
  if (j.contains("dropout_element_seconds")) h.dropout_element_s = f("dropout_element_seconds");
  if (j.contains("optimizer_element_seconds")) h.optimizer_element_s = f("optimizer_element_seconds");
  h.activation_element_s = read_activation_costs(j, f, h.path);
  h.elementwise_element_s = read_elementwise_costs(j, f, h.path, "elementwise_element_seconds");
  h.elementwise_row_s = read_elementwise_costs(j, f, h.path, "elementwise_row_seconds");
  for (const auto& [op, seconds] : h.elementwise_row_s)
    if (!h.elementwise_element_s.count(op))
      throw Error(str(h.path, ": elementwise_row_seconds has \"", op, "\" but elementwise_element_seconds has not: "
                      "measure both (hwprobe)"),
                  kExitInput);
  if (j.contains("last_level_cache_bytes")) h.last_level_cache_bytes = f("last_level_cache_bytes");
  h.memory_bytes_per_s = f("memory.bytes_per_s");
  h.memory_bytes = f("memory.bytes");
  h.reserved_bytes = f("memory.reserved_bytes");
  if (j["memory"].contains("blas_workspace_bytes")) h.blas_workspace_bytes = f("memory.blas_workspace_bytes");
  if (j["memory"].contains("comm_library_bytes")) h.comm_library_bytes = f("memory.comm_library_bytes");
  h.intra_node = {f("intra_node.bytes_per_s"), f("intra_node.latency_s")};
  if (j["intra_node"].contains("reduce_bytes_per_s")) h.reduce_bytes_per_s = f("intra_node.reduce_bytes_per_s");
  if (j["intra_node"].contains("core_seconds_per_byte")) h.comm_core_seconds_per_byte = f("intra_node.core_seconds_per_byte");
  if (j["intra_node"].contains("core_seconds_per_call")) h.comm_core_seconds_per_call = f("intra_node.core_seconds_per_call");
  h.reduce_bytes_per_s_by_size =
      read_keyed_table(j["intra_node"], "intra_node.", "reduce_bytes_per_s_by_size", "a buffer's bytes", f, h.path);
  if (j.contains("time_sharing_link")) {
    h.time_sharing_link = {f("time_sharing_link.bytes_per_s"), f("time_sharing_link.latency_s")};
    h.time_sharing_reduce_bytes_per_s_by_size = read_keyed_table(
        j["time_sharing_link"], "time_sharing_link.", "reduce_bytes_per_s_by_size", "a buffer's bytes", f, h.path);
    if (j["time_sharing_link"].contains("core_seconds_per_byte"))
      h.time_sharing_core_seconds_per_byte = f("time_sharing_link.core_seconds_per_byte");
    if (j["time_sharing_link"].contains("core_seconds_per_call"))
      h.time_sharing_core_seconds_per_call = f("time_sharing_link.core_seconds_per_call");
    if (h.rank_imbalance_ranks <= h.devices_per_node)
      throw Error(str(h.path, ": time_sharing_link holds collectives of ranks time-sharing cores, but rank_imbalance_ranks (",
                      h.rank_imbalance_ranks, ") is not more than devices_per_node (", h.devices_per_node,
                      "): measure it at that count (mpirun -np RANKS hwprobe --imbalance, RANKS above the cores)"),
                  kExitInput);
    if (h.time_sharing_link.bytes_per_s <= 0 || h.time_sharing_link.latency_s < 0 ||
        h.time_sharing_reduce_bytes_per_s_by_size.empty() || h.time_sharing_core_seconds_per_byte < 0 ||
        h.time_sharing_core_seconds_per_call < 0)
      throw Error(str(h.path, ": time_sharing_link needs a positive bytes_per_s, a latency_s, a core_seconds_per_byte "
                              "and core_seconds_per_call not negative and a reduce_bytes_per_s_by_size table"),
                  kExitInput);
  }
  h.gemm_width_efficiency = read_keyed_table(j, "", "gemm_width_efficiency", "a model width", f, h.path);
  h.attention_forward_fraction_by_head_dim =
      read_keyed_table(j, "", "attention_forward_fraction_by_head_dim", "a head dim", f, h.path);
  bool fractions = h.attention_forward_fraction > 0 && h.attention_forward_fraction <= 1;
  for (const auto& dim_fraction : h.attention_forward_fraction_by_head_dim) fractions &= dim_fraction.second <= 1;
  if (!fractions)
    throw Error(str(h.path, ": attention_forward_fraction and attention_forward_fraction_by_head_dim need shares in (0, 1]"),
                kExitInput);
  h.gemm_narrow_efficiency = read_keyed_table(j, "", "gemm_narrow_efficiency", "a linear's narrower dimension", f, h.path);
  if (j.contains("gemm_call_rows")) h.gemm_call_rows = f("gemm_call_rows");
  if (h.gemm_call_rows < 0)
    throw Error(
        str(h.path, ": gemm_call_rows is ", h.gemm_call_rows, ", expected rows not negative (hwprobe measures it)"),
        kExitInput);
  if (j.contains("inter_node")) {
    h.inter_node = {f("inter_node.bytes_per_s"), f("inter_node.latency_s")};
    h.nics_per_node = int(f("inter_node.nics_per_node"));
  }
  h.storage_read_per_node = f("storage.read_bytes_per_s_per_node");
  h.checkpoint_write_per_node = f("storage.write_bytes_per_s_per_node");
  h.checkpoint_write_total = f("storage.write_bytes_per_s_total");
  h.fixed = read_fixed_costs(j, f, h.path);
  if (h.devices_per_node < 1 || h.gemm_fp32 <= 0 || h.gemm_bf16 <= 0 || h.attention_fp32 <= 0 ||
      h.attention_bf16 <= 0 || h.memory_bytes_per_s <= 0 || h.intra_node.bytes_per_s <= 0)
    throw Error(str(h.path, ": devices_per_node, the FLOP rates and the bandwidths must be positive"), kExitInput);
  if (h.first_turn_s < 0 || h.first_turn_spread_s < 0 || h.turn_s < 0)
    throw Error(str(h.path, ": first_turn_seconds, first_turn_spread_seconds and turn_seconds must not be negative"),
                kExitInput);
  if (h.comm_core_seconds_per_byte < 0 || h.comm_core_seconds_per_call < 0)
    throw Error(str(h.path, ": intra_node.core_seconds_per_byte and core_seconds_per_call must not be negative"),
                kExitInput);
  return h;
}

}  // namespace emb
