// An output file that appears only when complete: everything is written to "<out>.tmp",
// commit() renames it to <out>, and destruction without commit (an error) removes it.
// Of the ranks writing one file only the owner (rank 0) removes or renames it.
#pragma once
#include <string>

namespace emb {

class TempOutput {
 public:
  explicit TempOutput(std::string out, bool owner = true);
  ~TempOutput();
  TempOutput(const TempOutput&) = delete;
  TempOutput& operator=(const TempOutput&) = delete;
  const std::string& temp_path() const { return temp_; }
  void commit();

 private:
  std::string out_, temp_;
  bool owner_ = true;
  bool committed_ = false;
};

}  // namespace emb
