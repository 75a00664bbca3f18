// Bounded, non-blocking reads of user-named files, and terminal-safe display of untrusted text.
//
// Every file a user names (a spec, a results file) is read through read_regular_file(): it is
// opened without blocking, refused unless it is a regular file (a FIFO, a device, a socket or a
// folder gets an error, never a hang or an endless read), and refused above `max_bytes` before
// anything is read into memory. Errors are user errors located at the file.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "support/diag.h"

namespace sb {

// The whole content of `path`, a regular file of at most `max_bytes` bytes. `what` names the
// kind of file in messages ("spec file", "results file").
Result<std::string> read_regular_file(const std::string& path, size_t max_bytes,
                                      const std::string& what);

// Writes `content` to the new file `path` (O_EXCL: never over an existing file), all of it,
// synced to disk, mode 0644 less the umask. On failure the partial file is removed and the error,
// located at `path`, gives the system's reason.
Status write_new_file(const std::string& path, const std::string& content);

// Replaces (or creates) `path` atomically: the content goes to the temporary
// "<path>.tmp.<pid>" in the same folder through write_new_file(), which is then renamed over
// `path`; readers see the old file or the new one, never a part. Creates parent folders. Errors
// are located at `path` and give the system's reason.
Status write_file_atomic(const std::string& path, const std::string& content);

// `text` with every control byte (below 0x20 except tab and newline, and 0x7f) shown as \xNN,
// so that names from specs and results files cannot drive the terminal.
std::string escape_control(std::string_view text);

}  // namespace sb
