// NVTX ranges for Nsight Systems (profiling/README.md): every phase and every model unit of a
// step appears as a named range on the rank's timeline, beside the CUDA kernels and NCCL
// calls. Built with the real CUDA toolchain (EMBTRAIN_NVTX, set with EMBTRAIN_WITH_CUDA) through
// CUDA's header-only NVTX3, whose calls cost a branch until a tool (nsys) injects itself;
// compiled to nothing otherwise (CPU builds, the CUDA emulation).
#pragma once
#include <cstdint>

#ifdef EMBTRAIN_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace emb::nvtx {

#ifdef EMBTRAIN_NVTX
constexpr bool kEnabled = true;
#else
constexpr bool kEnabled = false;  // callers skip building range names
#endif

// One open range, ended when the next starts or at end(). Start/end ranges (not push/pop)
// because the step's phases do not nest strictly (fwd stops when bwd starts, around an open
// comm_exposed).
class Span {
 public:
  Span() = default;
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;
  ~Span() { end(); }

#ifdef EMBTRAIN_NVTX
  void start(const char* name) {
    end();
    id_ = nvtxRangeStartA(name);
    open_ = true;
  }
  void end() {
    if (open_) nvtxRangeEnd(id_);
    open_ = false;
  }

 private:
  nvtxRangeId_t id_ = 0;
  bool open_ = false;
#else
  void start(const char*) {}
  void end() {}
#endif
};

}  // namespace emb::nvtx
