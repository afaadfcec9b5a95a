#include "data/sampler.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/rng.hpp"

namespace emb {

std::vector<int64_t> philox_permutation(int64_t n, uint64_t seed, uint64_t a, uint64_t b) {
  std::vector<int64_t> p(size_t(std::max<int64_t>(n, 0)));
  for (int64_t i = 0; i < n; ++i) p[i] = i;
  CounterRng rng(seed, RngStream::sampler, a, b);
  for (int64_t i = n - 1; i > 0; --i) {
    uint64_t r = (uint64_t(rng.bits(2 * uint64_t(i))) << 32) | rng.bits(2 * uint64_t(i) + 1);
    std::swap(p[i], p[int64_t(r % uint64_t(i + 1))]);
  }
  return p;
}

Sampler::Sampler(std::vector<int64_t> chunk_sizes, int64_t chunks_per_buffer, uint64_t seed)
    : chunk_size_(std::move(chunk_sizes)), chunks_per_buffer_(std::max<int64_t>(1, chunks_per_buffer)), seed_(seed) {
  chunk_begin_.push_back(0);
  for (int64_t s : chunk_size_) chunk_begin_.push_back(chunk_begin_.back() + s);
  EMB_CHECK(size() > 0, "sampler: the dataset has no samples");
}

const Sampler::Epoch& Sampler::epoch(int64_t e) {
  auto it = epochs_.find(e);
  if (it != epochs_.end()) return it->second;
  if (epochs_.size() >= 2) epochs_.erase(epochs_.begin());
  Epoch ep;
  ep.chunk_order = philox_permutation(chunks(), seed_, uint64_t(e), 0);
  ep.buffer_begin.push_back(0);
  for (int64_t i = 0; i < chunks(); i += chunks_per_buffer_) {
    int64_t n = 0;
    for (int64_t j = i; j < std::min(chunks(), i + chunks_per_buffer_); ++j) n += chunk_size_[ep.chunk_order[j]];
    ep.buffer_begin.push_back(ep.buffer_begin.back() + n);
  }
  return epochs_.emplace(e, std::move(ep)).first->second;
}

std::vector<int64_t> Sampler::buffer_chunks(int64_t e, int64_t b) {
  const Epoch& ep = epoch(e);
  int64_t first = b * chunks_per_buffer_, last = std::min(chunks(), first + chunks_per_buffer_);
  return std::vector<int64_t>(ep.chunk_order.begin() + first, ep.chunk_order.begin() + last);
}

std::pair<int64_t, int64_t> Sampler::buffer_positions(int64_t e, int64_t b) {
  const Epoch& ep = epoch(e);
  return {ep.buffer_begin[size_t(b)], ep.buffer_begin[size_t(b) + 1]};
}

const Sampler::Buffer& Sampler::buffer(int64_t e, int64_t b) {
  auto key = std::make_pair(e, b);
  auto it = buffers_.find(key);
  if (it != buffers_.end()) return it->second;
  if (buffers_.size() >= 4) buffers_.erase(buffers_.begin());
  Buffer buf;
  for (int64_t c : buffer_chunks(e, b))
    for (int64_t i = 0; i < chunk_size_[c]; ++i) buf.samples.push_back(chunk_begin_[c] + i);
  std::vector<int64_t> perm = philox_permutation(int64_t(buf.samples.size()), seed_, uint64_t(e), uint64_t(b) + 1);
  std::vector<int64_t> shuffled(buf.samples.size());
  for (size_t i = 0; i < perm.size(); ++i) shuffled[i] = buf.samples[size_t(perm[i])];
  buf.samples = std::move(shuffled);
  return buffers_.emplace(key, std::move(buf)).first->second;
}

int64_t Sampler::buffer_of(int64_t e, int64_t pos) {
  const Epoch& ep = epoch(e);
  EMB_ASSERT(pos >= 0 && pos < size());
  return int64_t(std::upper_bound(ep.buffer_begin.begin(), ep.buffer_begin.end(), pos) - ep.buffer_begin.begin()) - 1;
}

Position Sampler::at(int64_t e, int64_t pos) {
  int64_t b = buffer_of(e, pos);
  int64_t local = pos - epoch(e).buffer_begin[b];
  return Position{e, pos, buffer(e, b).samples[size_t(local)]};
}

std::vector<Position> Sampler::step(const SamplerState& state, int64_t global_batch, int rank, int ranks) {
  std::vector<Position> out;
  for (int64_t j = rank; j < global_batch; j += ranks) {
    int64_t pos = state.cursor + j, e = state.epoch;
    e += pos / size(), pos %= size();
    out.push_back(at(e, pos));
  }
  return out;
}

SamplerState Sampler::advance(const SamplerState& state, int64_t global_batch) const {
  int64_t pos = state.cursor + global_batch;
  return SamplerState{state.epoch + pos / size(), pos % size()};
}

}  // namespace emb
