// Diagnostics: the two kinds of error in specbench.
//
// User mistakes (a bad spec, a bad flag) travel as `Error` values inside `Result<T>`; the driver
// prints them with file:line:col and a caret excerpt and exits with code 2.
// Internal bugs fail SB_ASSERT, which names the source file and line and aborts.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace sb {

// A position in a user-visible source file. line and col are 1-based; 0 means "unknown".
struct Loc {
  std::string file;
  int line = 0;
  int col = 0;
};

// A user-facing error. `excerpt` is the source line the error points into (may be empty).
struct Error {
  Loc loc;
  std::string message;
  std::string excerpt;
};

// Formats "file:line:col: error: message", then the excerpt and a caret under `col`.
std::string format_error(const Error& e);

// Reads line `line` (1-based) of `file`; returns "" when unavailable. Used to fill Error::excerpt.
std::string source_line(const std::string& file, int line);

// Builds an Error at `loc` with the excerpt read from disk.
Error make_error(const Loc& loc, std::string message);

// A value or a user error. Deliberately small: ok(), value(), error().
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Error error) : v_(std::move(error)) {}
  bool ok() const { return v_.index() == 0; }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Result<void>: empty on success.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : e_(std::move(error)) {}
  bool ok() const { return !e_.has_value(); }
  const Error& error() const { return *e_; }

 private:
  std::optional<Error> e_;
};

[[noreturn]] void assert_fail(const char* expr, const char* file, int line, const std::string& msg);

}  // namespace sb

// Checked assertion for internal invariants; active in every build type.
#define SB_ASSERT(cond, msg)                                                     \
  do {                                                                           \
    if (!(cond)) ::sb::assert_fail(#cond, __FILE__, __LINE__, std::string(msg)); \
  } while (0)

// Propagates a failed Status/Result from the current function.
#define SB_TRY(expr)                                         \
  do {                                                       \
    auto sb_try_status_ = (expr);                            \
    if (!sb_try_status_.ok()) return sb_try_status_.error(); \
  } while (0)
