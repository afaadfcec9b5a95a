#include "rl/channel.hpp"

#include <climits>
#include <memory>

#include "comm/messages.hpp"
#include "core/error.hpp"
#include "rl/backoff.hpp"

namespace emb {
namespace {

// Every credit is worth one message; a static buffer outlives any send of it.
const int kOneCredit = 1;

int credit_tag(int tag) { return tag + 1; }
int close_tag(int tag) { return tag + 2; }

void check_tags(MPI_Comm comm, int tag) {
  const int upper = tag_upper_bound(comm);
  EMB_CHECK(tag >= 0 && (upper < 0 || tag <= upper - 2), "channel tag ", tag, " outside 0..", upper >= 0 ? upper - 2 : 0,
            " (a channel uses tags tag, tag + 1 and tag + 2)");
}

template <class T>
bool receive_value_if_arrived(MPI_Comm comm, int source, int tag, T& value) {
  return receive_if_arrived(comm, source, tag, &value, sizeof(T));
}

}  // namespace

ChannelSender::ChannelSender(MPI_Comm comm, int dest, int tag, int capacity)
    : comm_(comm), dest_(dest), tag_(tag), capacity_(capacity) {
  EMB_CHECK(capacity >= 1, "channel ", tag, " to rank ", dest, ": capacity ", capacity, " must be at least 1");
  check_tags(comm, tag);
}

bool ChannelSender::try_send(std::vector<uint8_t>&& msg) {
  EMB_CHECK(!closed_, "channel ", tag_, " to rank ", dest_, ": send after close");
  EMB_CHECK(msg.size() <= size_t(INT_MAX), "channel ", tag_, " to rank ", dest_, ": message of ", msg.size(),
            " bytes exceeds MPI's ", INT_MAX);
  progress();
  if (in_flight() >= capacity_) return false;
  auto buffer = std::make_shared<const std::vector<uint8_t>>(std::move(msg));
  msg.clear();  // moved-from vectors are valid but unspecified; leave the caller an empty one
  sends_.start(buffer->data(), int(buffer->size()), buffer, dest_, tag_, comm_);
  ++sent_;
  return true;
}

void ChannelSender::send(std::vector<uint8_t> msg, double timeout_s) {
  const Deadline deadline(timeout_s);
  Backoff backoff;
  while (!try_send(std::move(msg))) {
    EMB_CHECK(!deadline.passed(), "no credit from rank ", dest_, " on channel ", tag_, " for ", timeout_s, " s");
    backoff.wait();
  }
}

void ChannelSender::progress() {
  sends_.progress();
  int credit = 0;
  while (receive_value_if_arrived(comm_, dest_, credit_tag(tag_), credit)) credited_ += credit;
}

void ChannelSender::flush(double timeout_s) {
  const Deadline deadline(timeout_s);
  Backoff backoff;
  for (progress(); in_flight() > 0 || sends_.size() > 0; progress()) {
    EMB_CHECK(!deadline.passed(), "rank ", dest_, " consumed ", credited_, " of ", sent_, " messages on channel ",
              tag_, " within ", timeout_s, " s");
    backoff.wait();
  }
}

void ChannelSender::close(double timeout_s) {
  EMB_CHECK(!closed_, "channel ", tag_, " to rank ", dest_, ": closed twice");
  closed_ = true;
  auto total = std::make_shared<const int64_t>(sent_);
  sends_.start(total.get(), int(sizeof(int64_t)), total, dest_, close_tag(tag_), comm_);
  flush(timeout_s);
}

ChannelReceiver::ChannelReceiver(MPI_Comm comm, int source, int tag) : comm_(comm), source_(source), tag_(tag) {
  check_tags(comm, tag);
}

bool ChannelReceiver::try_recv(std::vector<uint8_t>& msg) {
  credits_.progress();
  if (!receive_if_arrived(comm_, source_, tag_, msg)) return false;
  ++received_;
  credits_.start(&kOneCredit, int(sizeof(int)), nullptr, source_, credit_tag(tag_), comm_);
  return true;
}

std::vector<uint8_t> ChannelReceiver::recv(double timeout_s) {
  const Deadline deadline(timeout_s);
  Backoff backoff;
  std::vector<uint8_t> msg;
  while (!try_recv(msg)) {
    EMB_CHECK(!closed(), "channel ", tag_, " from rank ", source_, " is closed: all ", received_,
              " messages were received");
    EMB_CHECK(!deadline.passed(), "no message from rank ", source_, " on channel ", tag_, " for ", timeout_s, " s");
    backoff.wait();
  }
  return msg;
}

bool ChannelReceiver::closed() {
  if (total_ < 0) receive_value_if_arrived(comm_, source_, close_tag(tag_), total_);
  return total_ >= 0 && received_ == total_;
}

}  // namespace emb
