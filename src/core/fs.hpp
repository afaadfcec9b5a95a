// Small filesystem helpers. Outputs are written to "<path>.tmp" and renamed when complete,
// so a reader (or a resumed run) never sees a half-written file.
#pragma once
#include <string>

namespace emb {

void write_file_atomic(const std::string& path, const std::string& content);
// mkdir -p; throws emb::Error naming the path on failure.
void make_dirs(const std::string& path);
bool path_exists(const std::string& path);

}  // namespace emb
