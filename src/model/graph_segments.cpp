#include "model/graph_segments.hpp"

#include <utility>

namespace emb {

bool GraphSegments::start(std::vector<int64_t> key) {
  if (!ops_ || !ops_->begin_graph()) return false;
  key_ = std::move(key);
  key_.push_back(0);
  active_ = capturing_ = true;
  return true;
}

void GraphSegments::pause() {
  if (!capturing_) return;
  capturing_ = false;
  ops_->end_graph(key_);
  ++key_.back();
}

void GraphSegments::resume() {
  if (!active_ || capturing_) return;
  ops_->begin_graph();
  capturing_ = true;
}

void GraphSegments::abandon() {
  if (capturing_) ops_->abandon_graph();
  active_ = capturing_ = false;
}

}  // namespace emb
