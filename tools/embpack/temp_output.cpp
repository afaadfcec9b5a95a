#include "temp_output.hpp"

#include <filesystem>

#include "comm/agreement.hpp"
#include "core/error.hpp"

namespace emb {

TempOutput::TempOutput(std::string out, MPI_Comm comm, bool owner)
    : out_(std::move(out)), temp_(out_ + ".tmp"), owner_(owner) {
  std::string error;
  try {
    if (owner_) lock_output();
  } catch (const std::exception& e) {
    error = e.what();
  }
  throw_if_any_rank_failed(comm, error, kExitInput);
}

void TempOutput::lock_output() {
  writer_lock_ = FileLock::sign_exclusive(out_ + ".lock");
  if (!writer_lock_.taken())
    throw Error(str(out_, ": another embpack is writing it (",
                    writer_lock_.holder().empty() ? "lock held" : writer_lock_.holder(),
                    "); wait for it to finish or choose another output"),
                kExitInput);
  replaced_lock_ = FileLock::on_existing(out_, true);
  if (!replaced_lock_.taken())
    throw Error(str(out_, ": a training run is reading it (it holds a shared lock); write another file and "
                          "switch the run's data.paths after it ends"),
                kExitInput);
}

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
