#include "sim/task.hpp"

#include <cstdlib>

#include "core/error.hpp"

namespace emb {

const std::vector<TaskSpec>& all_tasks() {
  static const std::vector<TaskSpec> tasks = {
      {"reach", "reach.xml", 0, 12, 2, 40, 0.03, 0.05,
       {"move the arm to the red target", "reach the red ball", "put the tip of the arm on the red marker",
        "go to the red target"}},
      {"push", "push.xml", 1, 22, 2, 90, 0.02, 0.05,
       {"push the green block onto the red disc", "slide the block to the red goal",
        "move the green cube into the red circle", "push the cube to the target region"}},
      {"pick_place", "pick_place.xml", 2, 24, 4, 100, 0.025, 0.07,
       {"pick up the green block and hold it at the red ball", "lift the cube to the red target",
        "grasp the green block and carry it to the red marker", "pick the block and place it at the goal"}},
  };
  return tasks;
}

const TaskSpec& task_spec(const std::string& name) {
  std::string known;
  for (const TaskSpec& t : all_tasks()) {
    if (t.name == name) return t;
    known += (known.empty() ? "" : ", ") + t.name;
  }
  throw Error(str("unknown task '", name, "' (known tasks: ", known, ")"), kExitInput);
}

std::string default_mjcf_dir() {
  if (const char* dir = std::getenv("EMBSIM_MJCF_DIR")) return dir;
  return EMBSIM_MJCF_DIR;
}

}  // namespace emb
