#include "data/state_sin_cos.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "core/error.hpp"
#include "data/packed_format.hpp"

namespace emb {

std::vector<int64_t> state_key_widths(const H5File& f) {
  const int64_t width = f.dims(packed::kState).at(1);
  if (!f.has_attr("/", packed::kModality)) return {width};
  const auto fail = [&](const std::string& why) { throw Error(f.where("/", "modality attribute: " + why), kExitInput); };
  nlohmann::json m;
  try {
    m = nlohmann::json::parse(f.attr_string("/", packed::kModality));
  } catch (const nlohmann::json::exception& e) {
    fail(str("not JSON (", e.what(), ")"));
  }
  if (!m.contains("state") || m["state"].empty()) return {width};
  std::vector<std::pair<int64_t, int64_t>> keys;  // (start, end), by column
  for (const auto& [name, slice] : m["state"].items())
    keys.emplace_back(slice.at("start").get<int64_t>(), slice.at("end").get<int64_t>());
  std::sort(keys.begin(), keys.end());
  std::vector<int64_t> widths;
  int64_t at = 0;
  for (const auto& [start, end] : keys) {
    if (start != at || end <= start)
      fail(str("its state sub-keys do not tile the state's columns (a sub-key at [", start, ", ", end, ") after column ",
               at, ")"));
    widths.push_back(end - start);
    at = end;
  }
  if (at != width) fail(str("its state sub-keys cover ", at, " columns, /steps/state has ", width));
  return widths;
}

void encode_state_sin_cos(const std::vector<int64_t>& widths, float* rows, int64_t n_rows, int64_t stride) {
  const int64_t width = std::accumulate(widths.begin(), widths.end(), int64_t(0));
  EMB_CHECK(2 * width <= stride, "sin/cos state encoding: ", 2 * width, " columns of rows of ", stride);
  std::vector<float> state(static_cast<size_t>(width));
  for (int64_t r = 0; r < n_rows; ++r) {
    float* row = rows + r * stride;
    std::copy(row, row + width, state.begin());
    int64_t in = 0, out = 0;
    for (int64_t w : widths) {
      for (int64_t j = 0; j < w; ++j) row[out + j] = std::sin(state[size_t(in + j)]);
      for (int64_t j = 0; j < w; ++j) row[out + w + j] = std::cos(state[size_t(in + j)]);
      in += w, out += 2 * w;
    }
  }
}

}  // namespace emb
