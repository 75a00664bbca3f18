#include "support/safe_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace sb {

namespace {

Error file_error(const std::string& path, const std::string& message) {
  // No excerpt: the file may not be what it claims to be, and its content is not shown.
  return Error{Loc{path, 0, 0}, message, ""};
}

std::string human_bytes(size_t n) {
  if (n % (1024 * 1024) == 0) return std::to_string(n / (1024 * 1024)) + " MiB";
  if (n % 1024 == 0) return std::to_string(n / 1024) + " KiB";
  return std::to_string(n) + " bytes";
}

}  // namespace

Result<std::string> read_regular_file(const std::string& path, size_t max_bytes,
                                      const std::string& what) {
  // O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return file_error(path, "cannot read " + what + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return file_error(path, "cannot read " + what + ": " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    const char* kind = S_ISDIR(st.st_mode)    ? "a folder"
                       : S_ISFIFO(st.st_mode) ? "a FIFO"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "not a regular file";
    return file_error(path, "cannot read " + what + ": it is " + std::string(kind) +
                                ", not a regular file");
  }
  if (static_cast<unsigned long long>(st.st_size) > max_bytes) {
    ::close(fd);
    return file_error(path, what + " is larger than " + human_bytes(max_bytes));
  }
  // Back to blocking reads: a regular file never blocks, and O_NONBLOCK has no meaning for it.
  std::string out;
  out.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return file_error(path, "cannot read " + what + ": " + std::strerror(err));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    // The file may grow while it is read: the cap holds for what is read, not only for stat.
    if (out.size() > max_bytes) {
      ::close(fd);
      return file_error(path, what + " is larger than " + human_bytes(max_bytes));
    }
  }
  ::close(fd);
  return out;
}

namespace {

Error io_error(const std::string& path, const std::string& what, int err) {
  return Error{Loc{path, 0, 0}, what + ": " + std::strerror(err), ""};
}

}  // namespace

Status write_new_file(const std::string& path, const std::string& content) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return io_error(path, "cannot write the file", errno);
  auto fail = [&](int err) {
    ::close(fd);
    ::unlink(path.c_str());
    return io_error(path, "cannot write the file", err);
  };
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail(n < 0 ? errno : EIO);
    done += static_cast<size_t>(n);
  }
  // A full disk can show only here (delayed allocation) or at close.
  if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) return fail(errno);
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(path.c_str());
    return io_error(path, "cannot write the file", err);
  }
  return {};
}

Status write_file_atomic(const std::string& path, const std::string& content) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) {
    fs::create_directories(p.parent_path(), ec);
    if (ec) return Error{Loc{path, 0, 0}, "cannot create its folder: " + ec.message(), ""};
  }
  // This process's own temporary, if an earlier call of a process with the same pid left one.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  ::unlink(tmp.c_str());
  Status st = write_new_file(tmp, content);
  if (!st.ok()) return Error{Loc{path, 0, 0}, st.error().message, ""};  // named by its target
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return io_error(path, "cannot replace the file", err);
  }
  return {};
}

std::string escape_control(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace sb
