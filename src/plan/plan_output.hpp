// The --plan answer: how long (step, epoch), how fast (samples/s per device, MFU), how much
// memory (per device, fits or not) and which settings (the ranked configurations), as a
// table for people and JSON for scripts (regression/plan_anchors.sh reads it).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "plan/backbone_cost.hpp"
#include "plan/encoder_cost.hpp"
#include "plan/step_model.hpp"

namespace emb {

nlohmann::json prediction_json(const StepPrediction& s);
nlohmann::json plan_json(const Hardware& hw, const StepPrediction& deck, const std::vector<StepPrediction>& ranked);
// `top`: rows of the ranked table.
std::string prediction_text(const Hardware& hw, const StepPrediction& deck, const std::vector<StepPrediction>& ranked,
                            size_t top);

// gr00t: the frozen backbone's cost per sample beside the head's (the deck's prediction `s`), and
// what it makes of throughput and epoch with features made offline (embpack features, once) or
// online (in every step, as upstream's fine-tuning runs it).
std::string backbone_text(const Hardware& hw, const BackboneCost& b, const StepPrediction& s);
nlohmann::json backbone_json(const BackboneCost& b, const StepPrediction& s);
// wan: DreamZero's frozen encoders' cost per sample beside the DiT's, the same two ways.
std::string encoders_text(const Hardware& hw, const EncoderSample& sample, const EncoderCost& e,
                          const StepPrediction& s);
nlohmann::json encoders_json(const EncoderSample& sample, const EncoderCost& e, const StepPrediction& s);

}  // namespace emb
