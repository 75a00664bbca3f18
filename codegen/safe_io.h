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

#include "diag.h"

namespace sb {

// The whole content of `path`, a regular file of at most `max_bytes` bytes. `what` names the
// kind of file in messages ("spec file", "results file").
Result<std::string> read_regular_file(const std::string& path, size_t max_bytes,
                                      const std::string& what);

// `text` with every control byte (below 0x20 except tab and newline, and 0x7f) shown as \xNN,
// so that names from specs and results files cannot drive the terminal.
std::string escape_control(std::string_view text);

}  // namespace sb
