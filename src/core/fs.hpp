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
// mkdir -p; throws emb::Error naming the path on failure. Returns the shallowest directory
// it created ("" when `path` existed), for remove_empty_dirs.
std::string make_dirs(const std::string& path);
// Undoes make_dirs: removes `path` and its parents up to `top` (what make_dirs returned)
// while they are empty; a directory holding anything is kept with everything above it.
void remove_empty_dirs(const std::string& path, const std::string& top);
bool path_exists(const std::string& path);
// The whole content of a regular file; throws emb::Error naming the path.
std::string read_file_text(const std::string& path);

// What the system said about errno `err`, for an error line ("Permission denied", "Not a
// directory", "Too many levels of symbolic links"); permission adds where to look.
std::string system_reason(int err);
// Opens `path` for reading and throws emb::Error "PATH: cannot open: REASON" with what the
// system said when it cannot (a directory above it the user may not enter is "Permission
// denied", not "no such file"), or "PATH: not a regular file (a directory)" for a directory,
// FIFO or device (which a reader would block on or read forever). `what` names the file in
// the message ("the checkpoint"), empty for none. The path is shown clipped (clipped_path).
void check_readable_file(const std::string& path, const std::string& what = "");

}  // namespace emb
