#include "temp_output.hpp"

#include <filesystem>

#include "core/error.hpp"

namespace emb {

TempOutput::TempOutput(std::string out, bool owner) : out_(std::move(out)), temp_(out_ + ".tmp"), owner_(owner) {}

TempOutput::~TempOutput() {
  std::error_code ec;
  if (owner_ && !committed_) std::filesystem::remove(temp_, ec);
}

void TempOutput::commit() {
  EMB_ASSERT(owner_);
  std::error_code ec;
  std::filesystem::rename(temp_, out_, ec);
  EMB_CHECK(!ec, out_, ": cannot rename ", temp_, " into place: ", ec.message());
  committed_ = true;
}

}  // namespace emb
