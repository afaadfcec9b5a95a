// An output file that appears only when complete: everything is written to "<out>.tmp",
// commit() renames it to <out>, and destruction without commit (an error) removes it.
#pragma once
#include <string>

namespace emb {

class TempOutput {
 public:
  explicit TempOutput(std::string out);
  ~TempOutput();
  TempOutput(const TempOutput&) = delete;
  TempOutput& operator=(const TempOutput&) = delete;
  const std::string& temp_path() const { return temp_; }
  void commit();

 private:
  std::string out_, temp_;
  bool committed_ = false;
};

}  // namespace emb
