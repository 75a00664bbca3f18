// Unit tests of the bounded file reader and the control-byte escaping (codegen/support/safe_io.h).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "support/safe_io.h"

namespace sb {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("sb-safe-io-" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d / name;
}

TEST(SafeIo, ReadsARegularFileWhole) {
  fs::path p = scratch("a.txt");
  std::ofstream(p) << "hello\nworld\n";
  auto r = read_regular_file(p.string(), 1024, "spec file");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value(), "hello\nworld\n");
}

TEST(SafeIo, RefusesAFileAboveTheCapWithoutReadingIt) {
  fs::path p = scratch("big.txt");
  std::ofstream(p) << std::string(2049, 'x');
  auto r = read_regular_file(p.string(), 2048, "results file");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "results file is larger than 2 KiB");
  EXPECT_EQ(r.error().loc.file, p.string());
}

TEST(SafeIo, RefusesAFifoWithoutBlocking) {
  fs::path p = scratch("fifo");
  fs::remove(p);
  ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
  auto r = read_regular_file(p.string(), 1024, "spec file");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("a FIFO, not a regular file"), std::string::npos)
      << r.error().message;
}

TEST(SafeIo, RefusesDevicesAndFolders) {
  auto dev = read_regular_file("/dev/zero", 1024, "spec file");
  ASSERT_FALSE(dev.ok());
  EXPECT_NE(dev.error().message.find("character device"), std::string::npos);
  auto dir = read_regular_file(fs::temp_directory_path().string(), 1024, "spec file");
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.error().message.find("a folder"), std::string::npos);
}

TEST(SafeIo, NamesTheMissingFile) {
  auto r = read_regular_file("/nonexistent/x.yaml", 1024, "spec file");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "cannot read spec file: No such file or directory");
  EXPECT_TRUE(r.error().excerpt.empty());
}

TEST(SafeIo, WriteFileAtomicReplacesWholeAndLeavesNoTemporary) {
  fs::path p = scratch("sub") / "out.txt";
  fs::remove_all(p.parent_path());
  ASSERT_TRUE(write_file_atomic(p.string(), "one\n").ok());  // creates the folder
  ASSERT_TRUE(write_file_atomic(p.string(), "two\n").ok());
  auto r = read_regular_file(p.string(), 1024, "file");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value(), "two\n");
  for (const auto& e : fs::directory_iterator(p.parent_path()))
    EXPECT_EQ(e.path().filename(), "out.txt") << "left behind: " << e.path();
}

TEST(SafeIo, WriteErrorsNameTheTargetAndTheReason) {
  fs::path file = scratch("plain");
  std::ofstream(file) << "a file, not a folder\n";
  const std::string target = (file / "x.json").string();
  Status st = write_file_atomic(target, "{}");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().loc.file, target);
  EXPECT_NE(st.error().message.find("Not a directory"), std::string::npos) << st.error().message;
  // write_new_file never writes over an existing file.
  Status again = write_new_file(file.string(), "x");
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().message.find("File exists"), std::string::npos);
}

TEST(SafeIo, EscapesControlBytesButKeepsTabsNewlinesAndUtf8) {
  EXPECT_EQ(escape_control("a\x1b[31mb\x07"), "a\\x1b[31mb\\x07");
  EXPECT_EQ(escape_control("x\ty\nz\x7f"), "x\ty\nz\\x7f");
  EXPECT_EQ(escape_control("\xc3\xa9t\xc3\xa9"), "\xc3\xa9t\xc3\xa9");
}

}  // namespace
}  // namespace sb
