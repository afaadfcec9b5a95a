// The preset table of MODEL.md and the deck's [model] overrides on top of it.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "model/model_config.hpp"

namespace emb {

class Deck;

// The preset's values; throws (exit code 2) for an unknown name.
ModelConfig preset_config(const std::string& name);

// The preset named by model.preset with every non-zero [model] key applied, validated.
// Errors are one line naming the deck file and the offending key.
ModelConfig model_config_from_deck(const Deck& deck);

// Shape checks of a resolved config. Each message is "WHERE: model.KEY: what", WHERE given by
// `where` for the keys the check involves (names under [model], the checked one first): the
// deck line that set one of them (model_config_from_deck), or a fixed prefix.
using ModelKeyWhere = std::function<std::string(const std::vector<std::string>& keys)>;
void validate_model_config(const ModelConfig& cfg, const ModelKeyWhere& where);
void validate_model_config(const ModelConfig& cfg, const std::string& where);

}  // namespace emb
