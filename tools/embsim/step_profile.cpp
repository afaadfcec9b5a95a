#include "step_profile.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "comm/agreement.hpp"
#include "comm/host_collectives.hpp"
#include "sim/expert.hpp"

namespace emb {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Nearest rank: the smallest sample at or above fraction q of the sorted samples.
double percentile(const std::vector<double>& sorted, double q) {
  const size_t rank = size_t(std::ceil(q * double(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

nlohmann::json summary_json(const TimingSummary& s) {
  return {{"count", s.count},
          {"mean_ms", s.mean_ms},
          {"p50_ms", s.p50_ms},
          {"p90_ms", s.p90_ms},
          {"p99_ms", s.p99_ms},
          {"max_ms", s.max_ms},
          {"lognormal_median_ms", s.p50_ms},
          {"lognormal_sigma", s.lognormal_sigma},
          {"straggler_fraction", s.straggler_fraction},
          {"straggler_factor", s.straggler_factor}};
}

}  // namespace

TimingSummary summarize_timings(std::vector<double> seconds) {
  EMB_CHECK(!seconds.empty(), "profile: no timings to summarize");
  std::sort(seconds.begin(), seconds.end());
  TimingSummary s;
  s.count = int64_t(seconds.size());
  double sum = 0;
  for (double t : seconds) sum += t;
  s.mean_ms = 1e3 * sum / double(s.count);
  s.p50_ms = 1e3 * percentile(seconds, 0.5), s.p90_ms = 1e3 * percentile(seconds, 0.9);
  s.p99_ms = 1e3 * percentile(seconds, 0.99), s.max_ms = 1e3 * seconds.back();
  const double p25 = percentile(seconds, 0.25), p75 = percentile(seconds, 0.75);
  s.lognormal_sigma = p25 > 0 ? std::log(p75 / p25) / 1.349 : 0.0;
  const double median = percentile(seconds, 0.5);
  int64_t stragglers = 0;
  double straggler_sum = 0;
  for (double t : seconds)
    if (t > 3 * median) stragglers += 1, straggler_sum += t;
  s.straggler_fraction = double(stragglers) / double(s.count);
  s.straggler_factor = stragglers > 0 ? straggler_sum / double(stragglers) / median : 0.0;
  return s;
}

StepProfile profile_steps(MPI_Comm comm, const StepProfileOptions& o) {
  const int rank = rank_in(comm);
  StepProfile p;
  run_agreed(comm, [&] {
    const TaskSpec& task = task_spec(o.task);
    EMB_CHECK(o.episodes >= 1, "profile: --episodes must be at least 1");
    EMB_CHECK(o.chunk_steps >= 1, "profile: --chunk-steps must be at least 1");
    if (rank != 0) return;
    auto model = load_task_model(task, o.mjcf_dir);
    Env env(task, model);
    Expert expert;
    StandInVlEncoder stand_in(o.observation.d_vl, o.observation.vl_grid);
    ObservationEncoder obs(o.observation, model.get(), &stand_in);
    std::vector<float> action(size_t(task.action_dim));
    std::vector<std::vector<uint8_t>> frames;
    std::vector<uint16_t> vl;
    std::vector<double> physics, render, features, step, chunk, reset;
    auto observe = [&](const std::string& instruction) {
      obs.render(env, frames);
      vl.clear();
      obs.features(frames, instruction, vl);
    };
    for (int64_t e = 0; e < o.episodes; ++e) {
      const std::string& instruction = task.instructions[size_t(e % int64_t(task.instructions.size()))];
      const Clock::time_point t0 = Clock::now();
      env.reset(o.seed, EpisodeSplit::collect, e);
      expert.reset();
      observe(instruction);  // the first observation, as a simulator sends it after a reset
      reset.push_back(seconds_between(t0, Clock::now()));
      double chunk_physics = 0;
      int chunk_steps = 0;
      while (!env.done()) {
        expert.act(env, action.data());
        const Clock::time_point a = Clock::now();
        env.step(action.data());
        const Clock::time_point b = Clock::now();
        obs.render(env, frames);
        const Clock::time_point c = Clock::now();
        vl.clear();
        obs.features(frames, instruction, vl);
        const Clock::time_point d = Clock::now();
        physics.push_back(seconds_between(a, b)), render.push_back(seconds_between(b, c));
        features.push_back(seconds_between(c, d)), step.push_back(seconds_between(a, d));
        chunk_physics += physics.back();
        if (++chunk_steps == o.chunk_steps) {
          chunk.push_back(chunk_physics + seconds_between(b, d));  // K steps' physics, the last one observed
          chunk_physics = 0, chunk_steps = 0;
        }
      }
      // An episode's last, partial chunk is not a chunk of K steps: it is left out.
    }
    EMB_CHECK(!chunk.empty(), "profile: ", o.task, ": no episode reached ", o.chunk_steps, " steps");
    p.task = task.name, p.episodes = o.episodes, p.steps = int64_t(step.size());
    p.views = int(o.observation.views.size()), p.chunk_steps = o.chunk_steps;
    p.physics = summarize_timings(physics), p.render = summarize_timings(render);
    p.features = summarize_timings(features), p.step = summarize_timings(step);
    p.chunk = summarize_timings(chunk), p.reset = summarize_timings(reset);
  });
  return p;
}

std::string profile_table(const StepProfile& p) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(3);
  out << "embsim profile: " << p.task << ": " << p.episodes << " episodes, " << p.steps << " control steps, "
      << p.views << " views, chunks of " << p.chunk_steps << " steps (times in ms)\n";
  out << "  " << std::left << std::setw(8) << "" << std::right;
  for (const char* h : {"mean", "p50", "p90", "p99", "max", "sigma", "strag", "factor"}) out << std::setw(9) << h;
  out << "\n";
  const std::pair<const char*, const TimingSummary*> rows[] = {
      {"physics", &p.physics}, {"render", &p.render}, {"features", &p.features},
      {"step", &p.step},       {"chunk", &p.chunk},   {"reset", &p.reset}};
  for (const auto& [name, s] : rows) {
    out << "  " << std::left << std::setw(8) << name << std::right;
    for (double v : {s->mean_ms, s->p50_ms, s->p90_ms, s->p99_ms, s->max_ms, s->lognormal_sigma,
                     s->straggler_fraction, s->straggler_factor})
      out << std::setw(9) << v;
    out << "\n";
  }
  return out.str();
}

nlohmann::json profile_json(const StepProfile& p) {
  return {{"task", p.task},
          {"episodes", p.episodes},
          {"steps", p.steps},
          {"views", p.views},
          {"chunk_steps", p.chunk_steps},
          {"physics", summary_json(p.physics)},
          {"render", summary_json(p.render)},
          {"features", summary_json(p.features)},
          {"step", summary_json(p.step)},
          {"chunk", summary_json(p.chunk)},
          {"reset", summary_json(p.reset)}};
}

}  // namespace emb
