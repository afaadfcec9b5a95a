#include "core/run_trace.hpp"

#include <filesystem>

#include "core/error.hpp"

namespace emb {
namespace {

std::FILE* open_or_throw(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw Error(str(path, ": cannot create the timing file"));
  return f;
}

}  // namespace

RunTrace::RunTrace(const std::string& run_dir, int rank)
    : rank_(rank),
      steady0_(Clock::now()),
      wall0_us_(double(std::chrono::duration_cast<std::chrono::microseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count())) {
  std::filesystem::create_directories(run_dir + "/timings");
  std::filesystem::create_directories(run_dir + "/trace");
  timings_ = open_or_throw(str(run_dir, "/timings/rank", rank, ".csv"));
  trace_ = open_or_throw(str(run_dir, "/trace/rank", rank, ".json"));
  std::fprintf(timings_, "step,phase,seconds\n");
  std::fprintf(trace_, "[\n{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, \"args\": {\"name\": \"rank %d\"}}",
               rank, rank);
  const char* threads[] = {"phases", "units", "collectives"};
  for (int tid = 0; tid < 3; ++tid)
    std::fprintf(trace_, ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": %d, \"args\": {\"name\": \"%s\"}}",
                 rank, tid, threads[tid]);
  end_step();
}

RunTrace::~RunTrace() {
  std::fprintf(trace_, "\n]\n");
  std::fclose(trace_);
  std::fclose(timings_);
}

double RunTrace::wall_us(Clock::time_point t) const {
  return wall0_us_ + std::chrono::duration<double, std::micro>(t - steady0_).count();
}

void RunTrace::timing(int64_t step, const char* phase, double seconds) {
  std::fprintf(timings_, "%lld,%s,%.9g\n", static_cast<long long>(step), phase, seconds);
}

void RunTrace::end_step() {
  std::fflush(timings_);
  std::fflush(trace_);
}

void RunTrace::event(const char* name, const char* cat, int tid, Clock::time_point start, double dur_us,
                     const char* args) {
  std::fprintf(trace_, ",\n{\"name\": \"%s\", \"cat\": \"%s\", \"ph\": \"X\", \"pid\": %d, \"tid\": %d, \"ts\": %.3f, "
                       "\"dur\": %.3f, \"args\": {%s}}",
               name, cat, rank_, tid, wall_us(start), dur_us, args);
}

void RunTrace::phase(const char* name, Clock::time_point start, Clock::time_point end, int64_t step) {
  char args[32];
  std::snprintf(args, sizeof args, "\"step\": %lld", static_cast<long long>(step));
  event(name, "phase", 0, start, std::chrono::duration<double, std::micro>(end - start).count(), args);
}

void RunTrace::unit(int unit, bool backward, Clock::time_point start, Clock::time_point end) {
  char name[32], args[32];
  std::snprintf(name, sizeof name, "%s unit %d", backward ? "bwd" : "fwd", unit);
  std::snprintf(args, sizeof args, "\"unit\": %d", unit);
  event(name, "unit", 1, start, std::chrono::duration<double, std::micro>(end - start).count(), args);
}

void RunTrace::collective(const char* op, int bucket, int64_t bytes, Clock::time_point issued, double seconds) {
  char name[64], args[128];
  std::snprintf(name, sizeof name, "%s bucket %d", op, bucket);
  std::snprintf(args, sizeof args, "\"op\": \"%s\", \"bucket\": %d, \"bytes\": %lld", op, bucket,
                static_cast<long long>(bytes));
  event(name, "collective", 2, issued, seconds * 1e6, args);
}

void RunTrace::batch(int64_t step, int micro_batches, int64_t query_tokens, int64_t context_tokens,
                     int64_t real_tokens) {
  std::fprintf(trace_,
               ",\n{\"name\": \"batch\", \"cat\": \"batch\", \"ph\": \"i\", \"s\": \"t\", \"pid\": %d, \"tid\": 0, "
               "\"ts\": %.3f, \"args\": {\"step\": %lld, \"micro_batches\": %d, \"query_tokens\": %lld, "
               "\"context_tokens\": %lld, \"real_tokens\": %lld}}",
               rank_, wall_us(Clock::now()), static_cast<long long>(step), micro_batches,
               static_cast<long long>(query_tokens), static_cast<long long>(context_tokens),
               static_cast<long long>(real_tokens));
}

}  // namespace emb
