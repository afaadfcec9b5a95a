#include "temp_output.hpp"

#include <filesystem>

#include "core/error.hpp"

namespace emb {

TempOutput::TempOutput(std::string out) : out_(std::move(out)), temp_(out_ + ".tmp") {}

TempOutput::~TempOutput() {
  std::error_code ec;
  if (!committed_) std::filesystem::remove(temp_, ec);
}

void TempOutput::commit() {
  std::error_code ec;
  std::filesystem::rename(temp_, out_, ec);
  EMB_CHECK(!ec, out_, ": cannot rename ", temp_, " into place: ", ec.message());
  committed_ = true;
}

}  // namespace emb
