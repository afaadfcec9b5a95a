// A bounded, ordered stream of byte messages from one rank to another (simulator ↔
// generator traffic of CLOSED_LOOP.md "Asynchrony"), over non-blocking point-to-point MPI.
//
// Flow control by credits: the sender may have at most `capacity` messages in flight (sent,
// not yet consumed); the receiver returns one credit per consumed message. A fast producer
// therefore waits for a slow consumer instead of piling messages into MPI's unexpected queue.
// Messages arrive in the order sent (MPI's non-overtaking rule on one source, tag and comm).
//
// A channel uses tags tag (messages), tag + 1 (credits) and tag + 2 (close) between its two
// ranks on `comm`: no other traffic between them may use those tags while the communicator
// lives. MPI errors are fatal (the communicator's default handler).
//
// Shutdown: the sender calls close(), which tells the receiver how many messages there were
// and waits until the receiver consumed them all; the receiver reads until closed() is true.
// After that nothing of the channel is pending at either end and both may be destroyed. A
// channel destroyed without close() (a rank stopping on an error) never blocks: see
// PendingSends.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "comm/pending_sends.hpp"

namespace emb {

class ChannelSender {
 public:
  ChannelSender(MPI_Comm comm, int dest, int tag, int capacity);

  // Starts sending `msg` unless `capacity` messages are in flight. Moves from `msg` only
  // when it returns true, so a refused message can be offered again.
  bool try_send(std::vector<uint8_t>&& msg);
  // Waits (sleeping) for a credit; throws "no credit from rank R on channel TAG for X s".
  void send(std::vector<uint8_t> msg, double timeout_s);
  // Completes finished sends and takes in returned credits. try_send and send call it; a
  // rank that only computes calls it now and then so large messages keep moving.
  void progress();
  // Waits until every message sent has been consumed.
  void flush(double timeout_s);
  // Tells the receiver no more messages come, then flushes. No send may follow.
  void close(double timeout_s);

  int in_flight() const { return int(sent_ - credited_); }
  int64_t sent() const { return sent_; }

 private:
  MPI_Comm comm_;
  int dest_, tag_, capacity_;
  int64_t sent_ = 0, credited_ = 0;
  bool closed_ = false;
  PendingSends sends_;  // messages and the close notice, until MPI is done with them
};

class ChannelReceiver {
 public:
  // The capacity is the sender's alone: the receiver returns a credit for every message.
  ChannelReceiver(MPI_Comm comm, int source, int tag);

  // Receives the next message if one has arrived and returns its credit.
  bool try_recv(std::vector<uint8_t>& msg);
  // Waits (sleeping) for the next message; throws when none comes within timeout_s or the
  // sender closed the channel and every message was consumed.
  std::vector<uint8_t> recv(double timeout_s);
  // True once the sender closed the channel and every message it sent was consumed.
  bool closed();

  int64_t received() const { return received_; }

 private:
  MPI_Comm comm_;
  int source_, tag_;
  int64_t received_ = 0;
  int64_t total_ = -1;  // messages the sender sent in all, once it closed the channel
  PendingSends credits_;
};

}  // namespace emb
