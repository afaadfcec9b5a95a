#include "rl/roles/rl_messages.hpp"

#include "core/error.hpp"
#include "rl/byte_message.hpp"

namespace emb {

namespace {

void put(ByteWriter& w, const Observation& o) {
  w.put(o.embodiment), w.put_vector(o.state), w.put_vector(o.vl);
}
void get(ByteReader& r, Observation& o) {
  o.embodiment = r.get<int32_t>("embodiment"), o.state = r.get_vector<float>("state"), o.vl = r.get_vector<uint16_t>("vl");
}

void put(ByteWriter& w, const Transition& t) {
  put(w, t.obs);
  w.put(t.version), w.put(t.k_first), w.put(t.k_count), w.put(t.logp_behav), w.put_vector(t.chain);
  w.put(t.reward), w.put(t.done), w.put(t.success), w.put(t.steps);
}
void get(ByteReader& r, Transition& t) {
  get(r, t.obs);
  t.version = r.get<int64_t>("version"), t.k_first = r.get<int32_t>("k_first"), t.k_count = r.get<int32_t>("k_count");
  t.logp_behav = r.get<double>("logp"), t.chain = r.get_vector<float>("chain");
  t.reward = r.get<float>("reward"), t.done = r.get<uint8_t>("done"), t.success = r.get<uint8_t>("success");
  t.steps = r.get<int32_t>("steps");
}

}  // namespace

std::vector<uint8_t> encode(const ActionRequest& m) {
  ByteWriter w;
  w.put(m.env), w.put(m.episode), w.put(m.chunk), w.put(m.round);
  put(w, m.obs);
  return w.take();
}

std::vector<uint8_t> encode(const ActionReply& m) {
  ByteWriter w;
  w.put(m.env), w.put(m.version), w.put(m.k_first), w.put(m.k_count), w.put(m.logp);
  w.put_vector(m.chain), w.put_vector(m.actions);
  return w.take();
}

std::vector<uint8_t> encode(const Segment& m) {
  ByteWriter w;
  w.put(m.env), w.put(m.episode), w.put(m.diverged), w.put(uint64_t(m.transitions.size()));
  for (const Transition& t : m.transitions) put(w, t);
  w.put_vector(m.next_state);
  return w.take();
}

void decode(const std::vector<uint8_t>& bytes, ActionRequest& m) {
  ByteReader r(bytes);
  m.env = r.get<int32_t>("env"), m.episode = r.get<int64_t>("episode"), m.chunk = r.get<int32_t>("chunk");
  m.round = r.get<int32_t>("round");
  get(r, m.obs);
  EMB_CHECK(r.done(), "rl: an action request with trailing bytes");
}

void decode(const std::vector<uint8_t>& bytes, ActionReply& m) {
  ByteReader r(bytes);
  m.env = r.get<int32_t>("env"), m.version = r.get<int64_t>("version"), m.k_first = r.get<int32_t>("k_first");
  m.k_count = r.get<int32_t>("k_count"), m.logp = r.get<double>("logp");
  m.chain = r.get_vector<float>("chain");
  m.actions = r.get_vector<float>("actions");
  EMB_CHECK(r.done(), "rl: an action reply with trailing bytes");
}

void decode(const std::vector<uint8_t>& bytes, Segment& m) {
  ByteReader r(bytes);
  m.env = r.get<int32_t>("env"), m.episode = r.get<int64_t>("episode"), m.diverged = r.get<uint8_t>("diverged");
  m.transitions.resize(size_t(r.get<uint64_t>("transitions")));
  for (Transition& t : m.transitions) get(r, t);
  m.next_state = r.get_vector<float>("next_state");
  EMB_CHECK(r.done(), "rl: a segment with trailing bytes");
}

}  // namespace emb
