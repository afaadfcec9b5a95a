// Small filesystem helpers. Outputs are written to "<path>.tmp" and renamed when complete,
// so a reader (or a resumed run) never sees a half-written file.
#pragma once
#include <string>

namespace emb {

void write_file_atomic(const std::string& path, const std::string& content);
// Publishes `tmp` as `path` so that it survives a power loss: the file's data are flushed
// to storage (fsync) before the rename, and the directory (holding the new name) after it.
void publish_durably(const std::string& tmp, const std::string& path);
// write_file_atomic through publish_durably (small files a restart relies on: `latest`).
void write_file_durable(const std::string& path, const std::string& content);
// mkdir -p; throws emb::Error naming the path on failure.
void make_dirs(const std::string& path);
bool path_exists(const std::string& path);
// The whole content of a regular file; throws emb::Error naming the path.
std::string read_file_text(const std::string& path);

}  // namespace emb
