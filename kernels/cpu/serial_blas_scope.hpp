// cblas calls made from inside an OpenMP parallel region, one per thread: the pthread OpenBLAS
// would start its own OPENBLAS_NUM_THREADS workers for each of them, which then spin
// (exec_blas_async) against the OpenMP threads for the same cores — CLIP's attention on 2 cores
// spent about 30 % of its time there (make bench, dreamzero_encoders). While a scope lives,
// OpenBLAS runs single-threaded; the caller's setting comes back after. The values are the same:
// OpenBLAS splits a GEMM over blocks of C, never over the sum.
#pragma once
#include <cblas.h>

namespace emb::cpu {

class SerialBlasScope {
 public:
  SerialBlasScope() : saved_(openblas_get_num_threads()) {
    if (saved_ > 1) openblas_set_num_threads(1);
  }
  ~SerialBlasScope() {
    if (saved_ > 1) openblas_set_num_threads(saved_);
  }
  SerialBlasScope(const SerialBlasScope&) = delete;
  SerialBlasScope& operator=(const SerialBlasScope&) = delete;

 private:
  int saved_;
};

}  // namespace emb::cpu
