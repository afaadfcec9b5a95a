// Recycles operation records so that issuing a collective allocates nothing in the steady
// state: a record is reused once no handle refers to it and its backend calls it idle.
// Used from the issuing thread only; the pool grows to the most operations held at once.
#pragma once
#include <memory>
#include <vector>

namespace emb {

template <class Op>
class OpPool {
 public:
  std::shared_ptr<Op> acquire() {
    for (auto& op : ops_)
      if (op.use_count() == 1 && op->idle()) return op;
    ops_.push_back(std::make_shared<Op>());
    return ops_.back();
  }

 private:
  std::vector<std::shared_ptr<Op>> ops_;
};

}  // namespace emb
