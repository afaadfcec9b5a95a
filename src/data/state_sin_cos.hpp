// GR00T-N1.5's sin/cos state encoding (deck key data.state_encoding = sin_cos; DATA.md
// "Normalisation"): upstream data configs such as fourier_gr1_arms_only give the model each state
// sub-key K as [sin(K), cos(K)] in place of its min/max normalisation, the sub-keys in the
// config's order (Isaac-GR00T 4af2b622 gr00t/data/transform/state_action.py:591-606
// StateActionSinCosTransform, gr00t/experiment/data_config.py:150-205 FourierGr1ArmsOnlyDataConfig;
// ConcatTransform then joins the keys). Expressed as per-key transforms (data/key_transform.hpp):
// every state sub-key of the file, in its column order, sin/cos-encoded; the actions min/max per
// column as without it. data.upstream_config = fourier_gr1_arms_only does the same with the
// config's keys and order.
#pragma once
#include <vector>

#include "data/key_transform.hpp"
#include "data/modality_sub_keys.hpp"

namespace emb {

constexpr const char* kStateSinCosSelection = "data.state_encoding = sin_cos";

// The plan of data.state_encoding = sin_cos over a file's state sub-keys (modality_sub_keys).
KeyTransformPlan state_sin_cos_plan(const std::vector<ModalitySubKey>& state_keys);

}  // namespace emb
