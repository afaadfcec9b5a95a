#include "rl/roles/update_totals.hpp"

#include "comm/host_collectives.hpp"
#include "rl/roles/rl_learner.hpp"

namespace emb {

UpdateTotals update_totals(const LearnerStats& st, MPI_Comm trainers) {
  int64_t totals[7] = {st.env_steps,     st.episodes,    st.successes,     st.filtered,
                       st.dropped_stale, st.transitions, st.uniform_groups};
  sum_over_ranks(trainers, totals, 7);
  double reward = st.reward_sum;
  sum_over_ranks(trainers, &reward, 1);
  return {totals[0], totals[1], totals[2], totals[3], totals[4], totals[5], totals[6], reward};
}

void add_totals(LearnerStats& st, const UpdateTotals& t) {
  st.env_steps += t.env_steps, st.episodes += t.episodes, st.successes += t.successes;
  st.filtered += t.filtered, st.dropped_stale += t.dropped_stale, st.transitions += t.transitions;
  st.uniform_groups += t.uniform_groups, st.reward_sum += t.reward;
}

}  // namespace emb
