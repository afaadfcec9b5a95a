// GR00T-N1.5's sin/cos state encoding (deck key data.state_encoding = sin_cos; DATA.md
// "Normalisation"): upstream data configs such as fourier_gr1_arms_only give the model each state
// sub-key K as [sin(K), cos(K)] in place of its min/max normalisation, the sub-keys in the
// config's order (Isaac-GR00T 4af2b622 gr00t/data/transform/state_action.py
// StateActionSinCosTransform, gr00t/experiment/data_config.py FourierGr1ArmsOnlyDataConfig;
// ConcatTransform then joins the keys). The encoded state is twice as wide as the file's.
#pragma once
#include <cstdint>
#include <vector>

#include "data/h5_file.hpp"

namespace emb {

// The widths of a packed file's state sub-keys in column order, from its modality attribute
// (embpack lerobot: GR00T's meta/modality.json, or --state-keys' selection and order); one
// sub-key of the whole state where the file has none. Throws emb::Error (exit 2) naming the file
// when the sub-keys do not tile the state's columns.
std::vector<int64_t> state_key_widths(const H5File& f);

// Rows of `stride` floats whose first Σ widths columns are a state: each row made the encoded
// state, [sin(K1), cos(K1), sin(K2), cos(K2), ...], over its first 2·Σ widths (<= stride) columns.
void encode_state_sin_cos(const std::vector<int64_t>& widths, float* rows, int64_t n_rows, int64_t stride);

}  // namespace emb
