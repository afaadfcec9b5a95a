#include "train/data_parallel.hpp"

#include <algorithm>
#include <cstring>

#include "core/error.hpp"

namespace emb {
namespace {
constexpr int kGatherSlots = 3;  // the unit computing, the one prefetched, one spare
constexpr int kGradSlots = 2;    // the unit in backward, the one being reduce-scattered
}  // namespace

DataParallel::DataParallel(const ShardLayout& layout, Comm& comm, PhaseTimers& timers)
    : layout_(layout), comm_(comm), timers_(timers), reduced_(size_t(layout.n_units()), false) {
  const auto n = size_t(layout.flat_total()), owned = size_t(layout.owned_total());
  int64_t max_unit = 0;
  for (int u = 0; u < layout.n_units(); ++u) max_unit = std::max(max_unit, layout.piece(u).unit_count);
  if (mode() != ShardMode::full) flat_params_.assign(n, 0.0f), flat_grads_.assign(n, 0.0f);
  if (mode() != ShardMode::none) owned_params_.assign(owned, 0.0f), owned_grads_.assign(owned, 0.0f);
  if (mode() == ShardMode::grads) param_ready_.resize(size_t(layout.n_units()));
  if (mode() == ShardMode::full) {
    reduce_tmp_.assign(owned, 0.0f);
    gather_slots_.resize(kGatherSlots);
    for (GatherSlot& s : gather_slots_) s.data.assign(size_t(max_unit), 0.0f);
    grad_slots_.assign(kGradSlots, std::vector<float>(size_t(max_unit), 0.0f));
    grad_slot_busy_.assign(kGradSlots, false);
  }
}

void DataParallel::wait(CommHandle& h) { timers_.add(Phase::comm_exposed, h.wait()); }

CommHandle DataParallel::track(CommHandle h) {
  step_ops_.push_back({h, PhaseTimers::Clock::now()});
  return h;
}

void DataParallel::load_params(const float* flat) {
  if (mode() != ShardMode::full) std::memcpy(flat_params_.data(), flat, flat_params_.size() * sizeof(float));
  if (mode() != ShardMode::none) layout_.gather_owned(flat, owned_params_.data());
  for (GatherSlot& s : gather_slots_) s.unit = -1;
}

std::vector<float> DataParallel::full_params() {
  if (mode() == ShardMode::grads)
    for (CommHandle& h : param_ready_) wait(h);
  if (mode() != ShardMode::full) return flat_params_;
  std::vector<float> flat(size_t(layout_.flat_total()));
  for (int u = 0; u < layout_.n_units(); ++u) {
    const OwnedPiece& p = layout_.piece(u);
    CommHandle h = comm_.all_gather(owned_params_.data() + p.owned_offset, flat.data() + p.unit_offset, p.unit_count,
                                    DType::f32);
    wait(h);
  }
  return flat;
}

void DataParallel::begin_step() {
  std::fill(flat_grads_.begin(), flat_grads_.end(), 0.0f);
  std::fill(owned_grads_.begin(), owned_grads_.end(), 0.0f);
  std::fill(reduced_.begin(), reduced_.end(), false);
}

void DataParallel::begin_micro_batch(bool last) {
  last_micro_batch_ = last;
  in_backward_ = false;
  expected_unit_ = 0;
  timers_.start(Phase::fwd);
}

void DataParallel::end_micro_batch() { timers_.stop(in_backward_ ? Phase::bwd : Phase::fwd); }

void DataParallel::run_empty_pass(bool last) {
  begin_micro_batch(last);
  const int n = layout_.n_units();
  for (int u = 0; u < n; ++u) unit_params(u, false);
  for (int u = n - 1; u >= 0; --u) {
    unit_params(u, true);
    unit_grads(u);
    unit_grads_ready(u);
  }
  end_micro_batch();
}

void DataParallel::check_order(int u, bool backward) {
  // run_empty_pass replays units ascending then descending; the model must visit them so,
  // or ranks without a batch would issue collectives in another order.
  if (backward && !in_backward_) {
    timers_.stop(Phase::fwd);
    timers_.start(Phase::bwd);
    in_backward_ = true;
    expected_unit_ = layout_.n_units() - 1;
  }
  EMB_CHECK(u == expected_unit_, "data parallel: the model visited unit ", u, " where unit ", expected_unit_,
            " was expected (units must run ascending in forward and descending in backward)");
  expected_unit_ += backward ? -1 : 1;
}

const float* DataParallel::unit_params(int u, bool backward) {
  check_order(u, backward);
  const OwnedPiece& p = layout_.piece(u);
  if (mode() == ShardMode::none) return flat_params_.data() + p.unit_offset;
  if (mode() == ShardMode::grads) {
    wait(param_ready_[size_t(u)]);
    return flat_params_.data() + p.unit_offset;
  }
  GatherSlot& slot = gather_unit(u, -1);
  int next = backward ? u - 1 : u + 1;
  if (next >= 0 && next < layout_.n_units()) prefetch(next, u);
  return slot.data.data();
}

DataParallel::GatherSlot& DataParallel::gather_unit(int u, int keep) {
  for (GatherSlot& s : gather_slots_)
    if (s.unit == u) {
      s.last_use = ++use_clock_;
      wait(s.handle);
      return s;
    }
  prefetch(u, keep);
  return gather_unit(u, keep);
}

void DataParallel::prefetch(int u, int keep) {
  GatherSlot* victim = nullptr;
  for (GatherSlot& s : gather_slots_) {
    if (s.unit == u) return;
    if (keep >= 0 && s.unit == keep) continue;
    if (!victim || s.unit == -1 || (victim->unit != -1 && s.last_use < victim->last_use)) victim = &s;
  }
  EMB_ASSERT(victim != nullptr);
  wait(victim->handle);  // never overwrite a buffer a gather is still writing
  const OwnedPiece& p = layout_.piece(u);
  victim->unit = u;
  victim->last_use = ++use_clock_;
  victim->handle = track(comm_.all_gather(owned_params_.data() + p.owned_offset, victim->data.data(), p.unit_count,
                                          DType::f32));
}

float* DataParallel::unit_grads(int u) {
  const OwnedPiece& p = layout_.piece(u);
  if (mode() != ShardMode::full) return flat_grads_.data() + p.unit_offset;
  auto free_slot = [&] { return std::find(grad_slot_busy_.begin(), grad_slot_busy_.end(), false); };
  while (free_slot() == grad_slot_busy_.end()) {
    complete_reduction(pending_.front());
    pending_.erase(pending_.begin());
  }
  auto slot = size_t(free_slot() - grad_slot_busy_.begin());
  grad_slot_busy_[slot] = true;
  std::fill_n(grad_slots_[slot].begin(), p.unit_count, 0.0f);
  current_grad_slot_ = int(slot);
  return grad_slots_[slot].data();
}

void DataParallel::unit_grads_ready(int u) {
  if (mode() == ShardMode::full) {
    issue_reduction(u, grad_slots_[size_t(current_grad_slot_)].data(), current_grad_slot_);
    return;
  }
  if (last_micro_batch_) issue_reduction(u, flat_grads_.data() + layout_.piece(u).unit_offset, -1);
}

void DataParallel::issue_reduction(int u, float* unit_grad, int grad_slot) {
  const OwnedPiece& p = layout_.piece(u);
  PendingReduce r;
  r.unit = u;
  r.grad_slot = grad_slot;
  if (mode() == ShardMode::none)
    r.handle = comm_.all_reduce(unit_grad, p.unit_count, DType::f32, ReduceOp::sum);
  else  // grads: once per step straight into the owned gradients; full: into a buffer, then added
    r.handle = comm_.reduce_scatter(unit_grad, (mode() == ShardMode::grads ? owned_grads_ : reduce_tmp_).data() +
                                                   p.owned_offset,
                                    p.unit_count, DType::f32, ReduceOp::sum);
  track(r.handle);
  reduced_[size_t(u)] = true;
  pending_.push_back(r);
}

void DataParallel::complete_reduction(PendingReduce& r) {
  wait(r.handle);
  if (mode() != ShardMode::full) return;
  const OwnedPiece& p = layout_.piece(r.unit);
  float* acc = owned_grads_.data() + p.owned_offset;
  const float* part = reduce_tmp_.data() + p.owned_offset;
  for (int64_t i = 0; i < p.count; ++i) acc[i] += part[i];
  grad_slot_busy_[size_t(r.grad_slot)] = false;
}

void DataParallel::finish_gradients() {
  if (mode() != ShardMode::full)
    for (int u = layout_.n_units() - 1; u >= 0; --u)
      if (!reduced_[size_t(u)]) issue_reduction(u, flat_grads_.data() + layout_.piece(u).unit_offset, -1);
  for (PendingReduce& r : pending_) complete_reduction(r);
  pending_.clear();
}

void DataParallel::publish_params() {
  if (mode() == ShardMode::grads)
    for (int u = 0; u < layout_.n_units(); ++u) {
      const OwnedPiece& p = layout_.piece(u);
      param_ready_[size_t(u)] = track(comm_.all_gather(owned_params_.data() + p.owned_offset,
                                                       flat_params_.data() + p.unit_offset, p.unit_count, DType::f32));
    }
  for (GatherSlot& s : gather_slots_) s.unit = -1;  // full: gathered copies are stale now
}

double DataParallel::take_comm_seconds() {
  // Collectives queue behind each other on the progress thread, so their issue-to-completion
  // spans overlap: the communication time is the length of the union of the spans.
  std::vector<std::pair<double, double>> spans;
  const auto origin = step_ops_.empty() ? PhaseTimers::Clock::now() : step_ops_.front().issued;
  for (IssuedOp& op : step_ops_) {
    double start = std::chrono::duration<double>(op.issued - origin).count();
    spans.emplace_back(start, start + op.handle.seconds());
  }
  step_ops_.clear();
  std::sort(spans.begin(), spans.end());
  double total = 0, covered_to = -1e300;
  for (auto [start, end] : spans) {
    if (end <= covered_to) continue;
    total += end - std::max(start, covered_to);
    covered_to = end;
  }
  return total;
}

}  // namespace emb
