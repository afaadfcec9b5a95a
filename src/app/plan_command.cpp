#include <filesystem>

#include "app/commands.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "plan/plan_output.hpp"
#include "plan/run_plan.hpp"

namespace emb {

std::string plan_report(const RunConfig& cfg, int world_size) {
  const RunPlan p = plan_run(cfg, world_size);
  const std::string& json_path = cfg.plan.json;
  std::filesystem::create_directories(std::filesystem::path(json_path).parent_path());
  write_file_atomic(json_path, plan_json(p.hw, p.as_deck, p.ranked).dump(2) + "\n");
  return plan_text(p.memory) + prediction_text(p.hw, p.as_deck, p.ranked, 10) + str("JSON: ", json_path, "\n");
}

}  // namespace emb
