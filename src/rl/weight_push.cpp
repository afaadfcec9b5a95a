#include "rl/weight_push.hpp"

#include <climits>
#include <cstring>

#include "comm/messages.hpp"
#include "core/dtype.hpp"
#include "core/error.hpp"
#include "rl/backoff.hpp"

namespace emb {
namespace {

constexpr size_t kHeaderBytes = sizeof(int64_t);

size_t message_bytes(int64_t n) { return kHeaderBytes + size_t(n) * sizeof(bf16); }

void check_size(int64_t n) {
  EMB_CHECK(n >= 0 && message_bytes(n) <= size_t(INT_MAX), "weight push of ", n,
            " parameters: one message carries at most ", (INT_MAX - kHeaderBytes) / sizeof(bf16));
}

}  // namespace

WeightPublisher::WeightPublisher(MPI_Comm comm, std::vector<int> generator_ranks, int tag) : comm_(comm), tag_(tag) {
  for (int rank : generator_ranks) generators_.push_back(Generator{rank, PendingSends{}, nullptr});
}

void WeightPublisher::publish(const float* params, int64_t n, int64_t version) {
  EMB_CHECK(version > last_version_, "weights version ", version, " published after version ", last_version_,
            ": versions must increase");
  check_size(n);
  last_version_ = version;
  Buffer message = free_buffer(message_bytes(n));
  std::memcpy(message->data(), &version, kHeaderBytes);
  auto* values = reinterpret_cast<bf16*>(message->data() + kHeaderBytes);
  for (int64_t i = 0; i < n; ++i) values[i] = to_bf16(params[i]);

  for (Generator& g : generators_) {
    g.in_flight.progress();
    if (g.waiting) ++merged_;  // replaced by this newer version before it started
    g.waiting = message;
    if (g.in_flight.size() == 0) start(g, std::move(g.waiting));
  }
}

void WeightPublisher::progress() {
  for (Generator& g : generators_) {
    g.in_flight.progress();
    if (g.in_flight.size() == 0 && g.waiting) start(g, std::move(g.waiting));
  }
}

bool WeightPublisher::idle() {
  progress();
  for (const Generator& g : generators_)
    if (g.in_flight.size() > 0 || g.waiting) return false;
  return true;
}

void WeightPublisher::flush(double timeout_s) {
  const Deadline deadline(timeout_s);
  Backoff backoff;
  while (!idle()) {
    const Generator* late = nullptr;
    for (const Generator& g : generators_)
      if (g.in_flight.size() > 0 || g.waiting) late = &g;
    EMB_CHECK(!deadline.passed(), "generator rank ", late->rank, " has not received weights version ", last_version_,
              " within ", timeout_s, " s");
    backoff.wait();
  }
}

WeightPublisher::Buffer WeightPublisher::free_buffer(size_t bytes) {
  for (Buffer& b : buffers_)
    if (b.use_count() == 1) {  // held by the pool alone: no send or waiting push uses it
      b->resize(bytes);
      return b;
    }
  buffers_.push_back(std::make_shared<std::vector<uint8_t>>(bytes));
  return buffers_.back();
}

void WeightPublisher::start(Generator& g, Buffer message) {
  g.in_flight.start(message->data(), int(message->size()), message, g.rank, tag_, comm_);
  ++started_;
}

std::vector<float> weights_as_pushed(const std::vector<float>& params) {
  std::vector<float> pushed(params.size());
  for (size_t i = 0; i < params.size(); ++i) pushed[i] = to_float(to_bf16(params[i]));
  return pushed;
}

WeightSubscriber::WeightSubscriber(MPI_Comm comm, int trainer_rank, int tag, int64_t n)
    : comm_(comm), trainer_rank_(trainer_rank), tag_(tag), n_(n), message_(message_bytes(n)) {
  check_size(n);
}

bool WeightSubscriber::poll(std::vector<float>& params, int64_t& version) {
  bool arrived = false;
  const size_t expected = message_.size();
  // Pushes arrive in publish order, so the last one received is the newest.
  while (receive_if_arrived(comm_, trainer_rank_, tag_, message_)) {
    EMB_CHECK(message_.size() == expected, "weight push from rank ", trainer_rank_, " has ", message_.size(),
              " bytes; a policy of ", n_, " parameters needs ", expected);
    arrived = true;
  }
  if (!arrived) return false;
  std::memcpy(&newest_, message_.data(), kHeaderBytes);
  const auto* values = reinterpret_cast<const bf16*>(message_.data() + kHeaderBytes);
  params.resize(size_t(n_));
  for (int64_t i = 0; i < n_; ++i) params[size_t(i)] = to_float(values[i]);
  version = newest_;
  return true;
}

void WeightSubscriber::wait_for(int64_t min_version, std::vector<float>& params, int64_t& version,
                                double timeout_s) {
  const Deadline deadline(timeout_s);
  Backoff backoff;
  for (;;) {
    poll(params, version);
    if (newest_ >= min_version) return;
    EMB_CHECK(!deadline.passed(), "no weights of version ", min_version, " or newer from trainer rank ",
              trainer_rank_, " within ", timeout_s, " s (newest received: ", newest_, ")");
    backoff.wait();
  }
}

}  // namespace emb
