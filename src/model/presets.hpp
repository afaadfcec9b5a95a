// The preset table of MODEL.md and the shape checks of a resolved ModelConfig (the deck's
// [model] overrides are applied by app/run_config_from_deck.cpp).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "config/model_config.hpp"

namespace emb {

// The preset's values; throws (exit code 2) for an unknown name.
ModelConfig preset_config(const std::string& name);

// Shape checks of a resolved config. Each message is "WHERE: model.KEY: what", WHERE given by
// `where` for the keys the check involves (names under [model], the checked one first): the
// deck line that set one of them (run_config_from_deck), or a fixed prefix.
using ModelKeyWhere = std::function<std::string(const std::vector<std::string>& keys)>;
void validate_model_config(const ModelConfig& cfg, const ModelKeyWhere& where);
void validate_model_config(const ModelConfig& cfg, const std::string& where);

}  // namespace emb
