// Trainer → generators policy weight push (CLOSED_LOOP.md "Asynchrony": "the trainer pushes
// policy weights to generators without waiting (merge overlapping syncs)"). Weights travel
// as bf16, half the bytes of fp32; generators run inference, which bf16 weights serve.
//
// One message per push: the version (int64) followed by n bf16 values. A generator that is
// still receiving one push when the next is published gets only the newest of the versions
// published meanwhile: pushes never queue up behind a slow generator, and a generator never
// receives a version older than one it already has (versions must increase).
#pragma once
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "comm/pending_sends.hpp"

namespace emb {

class WeightPublisher {
 public:
  WeightPublisher(MPI_Comm comm, std::vector<int> generator_ranks, int tag);

  // Rounds params to bf16 and starts sending them to every generator that is free; for a
  // generator still receiving an older push, this version replaces any one waiting to start.
  // Never waits.
  void publish(const float* params, int64_t n, int64_t version);
  // Starts the waiting pushes whose predecessor has been received. The trainer calls it
  // between steps.
  void progress();
  // Waits until every generator has received the newest version.
  void flush(double timeout_s);
  // Whether every push has been received and none waits (what flush waits for), after progress().
  bool idle();

  // Per generator, every published version is either started or merged (replaced before it
  // started): pushes_started() + pushes_merged() = publishes × generators after flush.
  int64_t pushes_started() const { return started_; }
  int64_t pushes_merged() const { return merged_; }

 private:
  using Buffer = std::shared_ptr<std::vector<uint8_t>>;
  struct Generator {
    int rank;
    PendingSends in_flight;  // at most one push
    Buffer waiting;          // the newest version published while one was in flight
  };
  // A message buffer no push still uses, so the steady state allocates nothing.
  Buffer free_buffer(size_t bytes);
  void start(Generator& g, Buffer message);

  MPI_Comm comm_;
  int tag_;
  std::vector<Generator> generators_;
  std::vector<Buffer> buffers_;
  int64_t last_version_ = -1;
  int64_t started_ = 0, merged_ = 0;
};

// The weights a generator holds after a push of `params`: each value rounded to bf16, as the
// message carries it. A resumed run's generators start from these, not from the checkpoint's
// fp32 values, to serve what the uninterrupted run's generators served at that version.
std::vector<float> weights_as_pushed(const std::vector<float>& params);

class WeightSubscriber {
 public:
  WeightSubscriber(MPI_Comm comm, int trainer_rank, int tag, int64_t n);

  // Receives every push that has arrived and keeps the newest: returns true and sets params
  // (n fp32 values) and version when one arrived, false (both untouched) otherwise.
  bool poll(std::vector<float>& params, int64_t& version);
  // Waits (sleeping) until a version ≥ min_version has arrived (lockstep mode), receiving
  // as poll does; returns at once when poll already delivered one. Throws when none arrives
  // within timeout_s.
  void wait_for(int64_t min_version, std::vector<float>& params, int64_t& version, double timeout_s);

 private:
  MPI_Comm comm_;
  int trainer_rank_, tag_;
  int64_t n_;
  int64_t newest_ = -1;           // the newest version received, for the timeout message
  std::vector<uint8_t> message_;  // reused: one push at a time
};

}  // namespace emb
