#pragma once
// Files Backplane writes for the user (the autotune cache; later FFT wisdom):
// read and replaced so that no data is ever destroyed (DESIGN.md §10).
//
// Note [User files]
// - A path holding a NUL byte is refused (the OS would read it truncated).
// - Reading: only a regular file (a FIFO, a device or a directory is refused
//   without blocking: the open is non-blocking and the type is checked on
//   the open descriptor), and at most `max_bytes` of it.
// - Replacing: the target must be absent or a regular file that `accept`
//   takes as ours (it throws otherwise); that is checked before anything is
//   created, so a refused path gets no lock file beside it. Then, under an
//   advisory lock (flock on "<path>.lock", created next to the file and left
//   there: removing it would let two savers lock different files), the
//   current content is read again, checked again and handed to `compose`,
//   which merges it with ours. The new text goes to a temporary file created exclusively
//   in the same directory under a random name (O_CREAT|O_EXCL|O_NOFOLLOW, so
//   a planted name or symlink is never followed or reused); every write,
//   the fsync and the close are checked; then it is renamed over the path.
//   On any failure the temporary file is removed and the old file is left
//   as it was. A symlink, a device or a FIFO at the path is refused.

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

namespace bp::user_file {

// Refuses an empty path or one holding a NUL byte (ValueError naming `op`).
void check_path(const std::string& path, const char* op);

// The content of the regular file at `path` (symlinks are followed), or
// nullopt when nothing exists there. Throws bp::Error naming `op` and the
// path when it is not a regular file, is larger than `max_bytes` or cannot
// be read.
std::optional<std::string> read_regular(const std::string& path, std::size_t max_bytes, const char* op);

// Replaces `path` with compose(current content, or nullopt when absent), as
// Note [User files] says. `accept(current)` throws to refuse a file that is
// not ours; nothing is created or written then.
using Accept = std::function<void(const std::string& current)>;
using Compose = std::function<std::string(const std::optional<std::string>& current)>;
void replace(const std::string& path, std::size_t max_bytes, const char* op, const Accept& accept,
             const Compose& compose);

}  // namespace bp::user_file
