#include "parallel/data_parallel.hpp"

#include <algorithm>
#include <limits>
#include <type_traits>

#include "core/activity.hpp"
#include "core/error.hpp"
#include "parallel/zero3_schedule.hpp"

namespace emb {

DataParallelBuffers DataParallelBuffers::of(const ShardLayout& layout, bool bf16_compute) {
  const ShardMode mode = layout.mode();
  const int64_t n = layout.flat_total(), owned = layout.owned_total(), max_bucket = layout.max_bucket_count();
  DataParallelBuffers b;
  if (mode == ShardMode::none || (mode == ShardMode::grads && !bf16_compute)) b.flat_params = n;
  if (mode != ShardMode::full) b.flat_grads = n;
  if (mode != ShardMode::none) b.owned = owned;
  if (mode != ShardMode::full && bf16_compute) b.flat_bf16 = n;
  if (mode != ShardMode::none && bf16_compute) b.owned_bf16 = owned;
  if (mode == ShardMode::full) {
    b.grad_slots = kGradSlots, b.grad_slot_full = max_bucket;
    for (int k = 0; k < layout.n_buckets(); ++k) b.grad_slot_shard = std::max(b.grad_slot_shard, layout.bucket(k).owned_count);
  }
  if (mode == ShardMode::full) b.gather_slots = kGatherSlots;
  if (mode == ShardMode::full && !bf16_compute) b.gather_slot = max_bucket;
  if (mode == ShardMode::full && bf16_compute) b.gather_staged = max_bucket;
  if (bf16_compute) b.widened = max_bucket;
  return b;
}

int64_t DataParallelBuffers::bytes() const {
  const int64_t f32 = int64_t(sizeof(float)), b16 = int64_t(sizeof(bf16));
  return f32 * (flat_params + flat_grads + 2 * owned) + b16 * (flat_bf16 + owned_bf16) +
         grad_slots * f32 * (grad_slot_full + grad_slot_shard) + gather_slots * (f32 * gather_slot + b16 * gather_staged) +
         f32 * widened;
}

DataParallel::DataParallel(const ShardLayout& layout, Comm& comm, Ops& ops, PhaseTimers& timers, bool overlap,
                           bool bf16_compute)
    : layout_(layout),
      comm_(comm),
      ops_(ops),
      timers_(timers),
      reduced_(size_t(layout.n_buckets()), false),
      overlap_(overlap),
      bf16_(bf16_compute) {
  const ActivityLabel allocating("data-parallel buffers (parameters, gradients, gather slots)");
  const DataParallelBuffers plan = DataParallelBuffers::of(layout, bf16_compute);
  // Zeroed buffers in backend memory (never copied from the host).
  auto zeroed = [&](auto& buffer, int64_t count) {
    buffer = std::remove_reference_t<decltype(buffer)>(ops_, count);
    ops_.zero(buffer.view());
  };
  if (plan.flat_params) zeroed(flat_params_, plan.flat_params);
  if (plan.flat_grads) zeroed(flat_grads_, plan.flat_grads);
  if (mode() != ShardMode::none) zeroed(owned_params_, plan.owned), zeroed(owned_grads_, plan.owned);
  if (mode() == ShardMode::grads) param_ready_.resize(size_t(layout.n_buckets()));
  if (plan.flat_bf16) flat_bf16_ = OpsBuffer<bf16>(ops_, plan.flat_bf16);
  if (mode() != ShardMode::none && bf16_) owned_bf16_ = OpsBuffer<bf16>(ops_, plan.owned_bf16);
  grad_slots_.resize(size_t(plan.grad_slots));
  for (GradSlot& g : grad_slots_) zeroed(g.full, plan.grad_slot_full), zeroed(g.shard, plan.grad_slot_shard);
  gather_slots_.resize(size_t(plan.gather_slots));
  for (GatherSlot& s : gather_slots_) {
    if (plan.gather_slot) zeroed(s.data, plan.gather_slot);
    if (plan.gather_staged) s.staged = OpsBuffer<bf16>(ops_, plan.gather_staged);
  }
  if (plan.widened) zeroed(widened_, plan.widened);
}

DataParallel::~DataParallel() {
  for (IssuedOp& op : step_ops_) op.handle.wait();
}

void DataParallel::order_after_compute() {
  if (!comm_.ordered_after_compute()) ops_.synchronize();
}

// Every consumer of a collective's result is a kernel on the compute stream (or an upload or
// download queued there).
void DataParallel::wait(CommHandle& h) { timers_.add_wait(Phase::comm_exposed, h.wait_on_compute_stream()); }

void DataParallel::wait(std::vector<CommHandle>& handles) {
  for (CommHandle& h : handles) wait(h);
}

void DataParallel::init_owned_params(const ParamRegistry& reg, uint64_t seed, double init_std) {
  // Without sharding a rank owns every bucket whole, so this fills the replicated parameters.
  std::vector<float> owned(size_t(layout_.owned_total()));
  for (int p = 0; p < layout_.n_pieces(); ++p) {
    const Piece& k = layout_.piece(p);
    const int64_t begin = k.offset + k.begin;
    reg.init_range(owned.data() + k.owned_offset, begin, begin + k.owned_count, seed, init_std);
  }
  load_owned_params(owned.data());  // grads: the replicated compute copy is gathered from the shards
}

// Once per update. none: the replicated masters straight into the compute copy, which every
// micro-batch of the step then reads as is (rounding per micro-batch would read and write the
// whole model again each time).
void DataParallel::round_owned_to_bf16() {
  if (!owned_bf16_.empty()) ops_.convert(owned_params_.view(), owned_bf16_.view());
  if (mode() == ShardMode::none && bf16_) ops_.convert(flat_params_.view(), flat_bf16_.view());
}

void DataParallel::load_owned_params(const float* owned) {
  ops_.upload(owned_params(), owned, size_t(layout_.owned_total()) * sizeof(float));
  publish(true);
}

void DataParallel::download_owned_params(float* owned) {
  ops_.download(owned, owned_params(), size_t(layout_.owned_total()) * sizeof(float));
}

void DataParallel::download_owned_grads(float* owned) {
  ops_.download(owned, owned_grads(), size_t(layout_.owned_total()) * sizeof(float));
}

std::vector<float> DataParallel::full_params() {
  std::vector<float> flat(size_t(layout_.flat_total()));
  if (mode() == ShardMode::none) {
    ops_.download(flat.data(), flat_params_.data(), flat.size() * sizeof(float));
    return flat;
  }
  for (std::vector<CommHandle>& h : param_ready_) wait(h);
  OpsBuffer<float> gathered(ops_, layout_.flat_total());
  order_after_compute();
  for (int p = 0; p < layout_.n_pieces(); ++p) {
    const Piece& k = layout_.piece(p);
    CommHandle h =
        comm_.all_gather(owned_params_.data() + k.owned_offset, gathered.data() + k.offset, k.count, DType::f32);
    wait(h);
  }
  ops_.download(flat.data(), gathered.data(), flat.size() * sizeof(float));
  return flat;
}

void DataParallel::begin_step() {
  if (!flat_grads_.empty()) ops_.zero(flat_grads_.view());
  if (!owned_grads_.empty()) ops_.zero(owned_grads_.view());
  std::fill(reduced_.begin(), reduced_.end(), false);
}

void DataParallel::inject_nan() {
  const OpsBuffer<float>& grads = mode() == ShardMode::full ? owned_grads_ : flat_grads_;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  if (!grads.empty()) ops_.upload(grads.data(), &nan, sizeof nan);
}

void DataParallel::begin_micro_batch(bool last) {
  last_micro_batch_ = last;
  in_backward_ = false;
  expected_unit_ = 0;
  timers_.start(Phase::fwd);
}

void DataParallel::end_micro_batch() {
  trace_unit_boundary(-1, false);
  timers_.stop(in_backward_ ? Phase::bwd : Phase::fwd);
}

// A unit's span in the trace runs from the model asking for its parameters to the next unit's
// request (or the micro-batch's end).
void DataParallel::trace_unit_boundary(int next_unit, bool backward) {
  timers_.mark_unit(next_unit, backward);
  RunTrace* trace = timers_.trace();
  if (!trace) return;
  const auto now = PhaseTimers::Clock::now();
  if (traced_unit_ >= 0) trace->unit(traced_unit_, traced_backward_, unit_started_, now);
  traced_unit_ = next_unit, traced_backward_ = backward, unit_started_ = now;
}

void DataParallel::run_empty_pass(bool last) {
  begin_micro_batch(last);
  const int n = layout_.n_units();
  const DType dtype = bf16_ ? DType::bf16 : DType::f32;  // nothing to widen: no unit computes here
  for (int u = 0; u < n; ++u) unit_params(u, false, dtype);
  for (int u = n - 1; u >= 0; --u) {
    unit_params(u, true, dtype);
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

const void* DataParallel::unit_params(int u, bool backward, DType dtype) {
  check_order(u, backward);
  trace_unit_boundary(u, backward);
  EMB_CHECK(dtype == DType::f32 || bf16_, "data parallel: unit ", u,
            " asked for bf16 parameters, but the compute copies are fp32 (model.precision = fp32)");
  const int b = layout_.bucket_of_unit(u);
  const Bucket& k = layout_.bucket(b);
  if (mode() == ShardMode::grads) wait(param_ready_[size_t(b)]);
  const int64_t at = layout_.unit_offset(u) - k.offset;
  const GatherSlot* slot = nullptr;
  if (mode() == ShardMode::full) {
    slot = &gather_bucket(b, -1);
    // Entering a bucket (its first unit in forward, its last in backward): fetch the next ones.
    if (u == (backward ? k.last_unit : k.first_unit))
      for (int d = 1; d <= kPrefetchDepth; ++d) {
        const int next = backward ? b - d : b + d;
        if (next >= 0 && next < layout_.n_buckets()) prefetch(next, b);
      }
  }
  if (!bf16_) return (slot ? slot->data.data() : flat_params_.data() + k.offset) + at;
  const View copy = bf16_copy(slot, b);
  if (dtype == DType::bf16) return static_cast<const bf16*>(copy.data) + at;
  if (widened_bucket_ != b) {
    ops_.convert(copy, widened_.view(0, k.count));
    widened_bucket_ = b;
  }
  return widened_.data() + at;
}

View DataParallel::bf16_copy(const GatherSlot* slot, int b) const {
  const Bucket& k = layout_.bucket(b);
  return slot ? slot->staged.view(0, k.count) : flat_bf16_.view(k.offset, k.count);
}

DataParallel::GatherSlot& DataParallel::gather_bucket(int b, int keep) {
  for (GatherSlot& s : gather_slots_)
    if (s.bucket == b) {
      s.last_use = ++use_clock_;
      wait(s.handles);
      return s;
    }
  prefetch(b, keep);
  return gather_bucket(b, keep);
}

void DataParallel::prefetch(int b, int keep) {
  GatherSlot* victim = nullptr;
  for (GatherSlot& s : gather_slots_) {
    if (s.bucket == b) {
      s.last_use = ++use_clock_;
      return;
    }
    if (keep >= 0 && s.bucket == keep) continue;
    if (!victim || s.bucket == -1 || (victim->bucket != -1 && s.last_use < victim->last_use)) victim = &s;
  }
  EMB_ASSERT(victim != nullptr);
  wait(victim->handles);  // never overwrite a buffer a gather is still writing
  victim->bucket = b;
  victim->last_use = ++use_clock_;
  fill_slot(*victim, b);
}

// ZeRO-3: gathers bucket b into `slot`, bf16 into its staging or fp32 into its data.
void DataParallel::fill_slot(GatherSlot& slot, int b) {
  order_after_compute();
  gather_pieces(b, bf16_ ? static_cast<void*>(slot.staged.data()) : slot.data.data(), slot.handles, true);
}

void DataParallel::gather_pieces(int b, void* bucket_copy, std::vector<CommHandle>& handles, bool frozen_too) {
  const Bucket& k = layout_.bucket(b);
  const int64_t element = bf16_ ? int64_t(sizeof(bf16)) : int64_t(sizeof(float));
  handles.clear();
  layout_.for_each_piece(b, frozen_too, [&](const Piece& piece) {
    void* to = static_cast<unsigned char*>(bucket_copy) + (piece.offset - k.offset) * element;
    handles.push_back(track("all_gather", b, piece.count * element, [&] {
      return bf16_ ? comm_.all_gather(owned_bf16_.data() + piece.owned_offset, to, piece.count, DType::bf16)
                   : comm_.all_gather(owned_params_.data() + piece.owned_offset, to, piece.count, DType::f32);
    }));
  });
}

float* DataParallel::unit_grads(int u) {
  const int b = layout_.bucket_of_unit(u);
  const Bucket& k = layout_.bucket(b);
  if (mode() != ShardMode::full) return flat_grads_.data() + layout_.unit_offset(u);
  if (u == k.last_unit) {  // the bucket's backward starts: give it a zeroed gradient buffer
    auto free_slot = [&] {
      return std::find_if(grad_slots_.begin(), grad_slots_.end(), [](const GradSlot& g) { return !g.busy; });
    };
    while (free_slot() == grad_slots_.end()) {
      complete_reduction(pending_.front());
      pending_.erase(pending_.begin());
    }
    current_grad_slot_ = int(free_slot() - grad_slots_.begin());
    GradSlot& slot = grad_slots_[size_t(current_grad_slot_)];
    slot.busy = true;
    ops_.zero(slot.full.view(0, k.count));
  }
  return grad_slots_[size_t(current_grad_slot_)].full.data() + (layout_.unit_offset(u) - k.offset);
}

void DataParallel::unit_grads_ready(int u) {
  const int b = layout_.bucket_of_unit(u);
  const Bucket& k = layout_.bucket(b);
  if (u != k.first_unit) return;  // the bucket's gradients are complete after its first unit
  if (mode() == ShardMode::full)
    issue_reduction(b, grad_slots_[size_t(current_grad_slot_)].full.data(), current_grad_slot_);
  else if (last_micro_batch_)
    issue_reduction(b, flat_grads_.data() + k.offset, -1);
}

void DataParallel::issue_reduction(int b, float* bucket_grad, int grad_slot) {
  const Bucket& k = layout_.bucket(b);
  if (k.frozen) {  // frozen parameters: their gradients are never communicated nor used
    reduced_[size_t(b)] = true;
    if (grad_slot >= 0) grad_slots_[size_t(grad_slot)].busy = false;
    return;
  }
  PendingReduce r;
  r.bucket = b;
  r.grad_slot = grad_slot;
  order_after_compute();
  // The trained pieces only: a frozen piece's gradients are never used.
  layout_.for_each_piece(b, false, [&](const Piece& piece) {
    float* piece_grad = bucket_grad + (piece.offset - k.offset);
    if (mode() == ShardMode::none) {
      r.handles.push_back(track("all_reduce", b, piece.count * 4, [&] {
        return comm_.all_reduce(piece_grad, piece.count, DType::f32, ReduceOp::sum);
      }));
      return;
    }
    // grads: once per step straight into the owned gradients; full: into the slot, then added
    float* shard = mode() == ShardMode::grads
                       ? owned_grads_.data() + piece.owned_offset
                       : grad_slots_[size_t(grad_slot)].shard.data() + (piece.owned_offset - k.owned_offset);
    r.handles.push_back(track("reduce_scatter", b, piece.count * 4, [&] {
      return comm_.reduce_scatter(piece_grad, shard, piece.count, DType::f32, ReduceOp::sum);
    }));
  });
  reduced_[size_t(b)] = true;
  pending_.push_back(r);
}

void DataParallel::complete_reduction(PendingReduce& r) {
  wait(r.handles);
  if (mode() != ShardMode::full) return;
  const Bucket& k = layout_.bucket(r.bucket);
  GradSlot& slot = grad_slots_[size_t(r.grad_slot)];
  layout_.for_each_piece(r.bucket, false, [&](const Piece& piece) {  // a frozen piece was not reduced
    const View acc = owned_grads_.view(piece.owned_offset, piece.owned_count);
    ops_.add(acc, slot.shard.view(piece.owned_offset - k.owned_offset, piece.owned_count), acc);
  });
  slot.busy = false;
}

void DataParallel::finish_gradients() {
  if (mode() != ShardMode::full)
    for (int b = layout_.n_buckets() - 1; b >= 0; --b)
      if (!reduced_[size_t(b)]) issue_reduction(b, flat_grads_.data() + layout_.bucket(b).offset, -1);
  for (PendingReduce& r : pending_) complete_reduction(r);
  pending_.clear();
}

void DataParallel::publish_params() { publish(false); }

void DataParallel::publish(bool frozen_too) {
  round_owned_to_bf16();
  if (mode() == ShardMode::grads) order_after_compute();
  if (mode() == ShardMode::grads)
    for (int b = 0; b < layout_.n_buckets(); ++b) {
      const int64_t at = layout_.bucket(b).offset;
      gather_pieces(b, bf16_ ? static_cast<void*>(flat_bf16_.data() + at) : flat_params_.data() + at,
                    param_ready_[size_t(b)], frozen_too);
    }
  for (GatherSlot& s : gather_slots_) s.bucket = -1;  // compute copies are stale now
  widened_bucket_ = -1;
  // The next forward starts with bucket 0: gather the first buckets behind the step's tail.
  if (mode() == ShardMode::full)
    for (int b = 0; b < std::min(kPrefetchDepth, layout_.n_buckets()); ++b) prefetch(b, -1);
}

double DataParallel::take_comm_seconds() {
  // Collectives queue behind each other on the progress thread, so their issue-to-completion
  // spans overlap: the communication time is the length of the union of the spans.
  std::vector<std::pair<double, double>> spans;
  const auto origin = step_ops_.empty() ? PhaseTimers::Clock::now() : step_ops_.front().issued;
  for (IssuedOp& op : step_ops_) {
    double start = std::chrono::duration<double>(op.issued - origin).count();
    spans.emplace_back(start, start + op.handle.seconds());
    if (RunTrace* trace = timers_.trace()) trace->collective(op.op, op.bucket, op.bytes, op.issued, op.handle.seconds());
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
