// Writing fixed files: atomic replacement, permissions, refusal when the file changed on disk or
// is read-only, symlinks. Every test works in its own temporary directory.
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "driver/fix_files.h"

namespace fs = std::filesystem;

namespace devlint {
namespace {

class FixFilesTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "devlint-fix-files-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string &name) const { return (dir_ / name).string(); }
  static void put(const std::string &file, const std::string &text) {
    std::ofstream(file, std::ios::binary) << text;
  }
  static std::string get(const std::string &file) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  // Everything in the directory except `keep`: leftovers of a temporary file would show here.
  std::vector<std::string> others(const std::vector<std::string> &keep) const {
    std::vector<std::string> out;
    for (const auto &entry : fs::directory_iterator(dir_)) {
      std::string name = entry.path().filename().string();
      if (std::find(keep.begin(), keep.end(), name) == keep.end())
        out.push_back(name);
    }
    return out;
  }
  fs::path dir_;
};

TEST_F(FixFilesTest, ReplacesTheFileAndKeepsItsMode) {
  std::string file = path("model.py");
  put(file, "a = b\n");
  ASSERT_EQ(chmod(file.c_str(), 0640), 0);
  struct stat before {};
  ASSERT_EQ(stat(file.c_str(), &before), 0);

  WriteResult result = write_fixed_file(file, "a = b\n", "a = b.to(x.device)\n");

  EXPECT_EQ(result.status, WriteStatus::Written) << result.message;
  EXPECT_EQ(get(file), "a = b.to(x.device)\n");
  struct stat after {};
  ASSERT_EQ(stat(file.c_str(), &after), 0);
  EXPECT_EQ(after.st_mode & 07777, 0640u);
  // Replaced by rename, not rewritten in place: readers never see a half-written file.
  EXPECT_NE(after.st_ino, before.st_ino);
  EXPECT_TRUE(others({"model.py"}).empty()) << "temporary file left behind";
}

TEST_F(FixFilesTest, KeepsBytesExactlyCrlfAndNoTrailingNewline) {
  std::string file = path("crlf.py");
  std::string original = "x = a\r\ny = b";
  std::string fixed = "x = a\r\ny = b.to(a.device)";
  put(file, original);
  EXPECT_EQ(write_fixed_file(file, original, fixed).status, WriteStatus::Written);
  EXPECT_EQ(get(file), fixed);
}

TEST_F(FixFilesTest, RefusesAFileChangedOnDisk) {
  std::string file = path("model.py");
  put(file, "a = b  # edited meanwhile\n");
  WriteResult result = write_fixed_file(file, "a = b\n", "a = b.to(x.device)\n");
  EXPECT_EQ(result.status, WriteStatus::ChangedOnDisk);
  EXPECT_NE(result.message.find("changed on disk"), std::string::npos) << result.message;
  EXPECT_EQ(get(file), "a = b  # edited meanwhile\n");
  EXPECT_TRUE(others({"model.py"}).empty());
}

TEST_F(FixFilesTest, AFileAlreadyHoldingTheFixIsLeftAlone) {
  std::string file = path("model.py");
  put(file, "a = b.to(x.device)\n");
  struct stat before {};
  ASSERT_EQ(stat(file.c_str(), &before), 0);
  EXPECT_EQ(write_fixed_file(file, "a = b\n", "a = b.to(x.device)\n").status,
            WriteStatus::AlreadyFixed);
  struct stat after {};
  ASSERT_EQ(stat(file.c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino);
}

TEST_F(FixFilesTest, RefusesAReadOnlyFile) {
  std::string file = path("model.py");
  put(file, "a = b\n");
  ASSERT_EQ(chmod(file.c_str(), 0444), 0);
  WriteResult result = write_fixed_file(file, "a = b\n", "a = b.to(x.device)\n");
  EXPECT_EQ(result.status, WriteStatus::ReadOnly);
  EXPECT_NE(result.message.find("read-only"), std::string::npos) << result.message;
  EXPECT_EQ(get(file), "a = b\n");
  struct stat after {};
  ASSERT_EQ(stat(file.c_str(), &after), 0);
  EXPECT_EQ(after.st_mode & 07777, 0444u);
  EXPECT_TRUE(others({"model.py"}).empty());
}

TEST_F(FixFilesTest, FollowsASymlinkAndKeepsTheLink) {
  std::string target = path("real.py");
  std::string link = path("link.py");
  put(target, "a = b\n");
  fs::create_symlink("real.py", link);
  WriteResult result = write_fixed_file(link, "a = b\n", "a = b.to(x.device)\n");
  EXPECT_EQ(result.status, WriteStatus::Written);
  EXPECT_NE(result.message.find("symlink"), std::string::npos) << result.message;
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(fs::read_symlink(link), "real.py");
  EXPECT_EQ(get(target), "a = b.to(x.device)\n");
  EXPECT_EQ(fs::canonical(result.written_path), fs::canonical(target));
}

// Issue 23, item 12: renaming a new file over one name of a hard-linked file split the links
// silently. It is written in place instead (as Ruff does): every name holds the fixes.
TEST_F(FixFilesTest, AHardLinkedFileIsWrittenInPlaceAndSaysSo) {
  std::string file = path("model.py");
  std::string other = path("other_name.py");
  put(file, "a = b\nlonger text that the fix makes shorter\n");
  ASSERT_EQ(link(file.c_str(), other.c_str()), 0);
  struct stat before {};
  ASSERT_EQ(stat(file.c_str(), &before), 0);

  WriteResult result =
      write_fixed_file(file, "a = b\nlonger text that the fix makes shorter\n", "a = c\n");

  EXPECT_EQ(result.status, WriteStatus::Written) << result.message;
  EXPECT_NE(result.message.find("2 hard links: written in place"), std::string::npos)
      << result.message;
  EXPECT_EQ(get(file), "a = c\n");
  EXPECT_EQ(get(other), "a = c\n");
  struct stat after {};
  ASSERT_EQ(stat(file.c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino);
  EXPECT_EQ(after.st_nlink, 2u);
  EXPECT_TRUE(others({"model.py", "other_name.py"}).empty());
}

TEST_F(FixFilesTest, AHardLinkedFileChangedOnDiskIsNotWritten) {
  std::string file = path("model.py");
  put(file, "a = b  # edited meanwhile\n");
  ASSERT_EQ(link(file.c_str(), path("other_name.py").c_str()), 0);
  WriteResult result = write_fixed_file(file, "a = b\n", "a = b.to(x.device)\n");
  EXPECT_EQ(result.status, WriteStatus::ChangedOnDisk) << result.message;
  EXPECT_EQ(get(file), "a = b  # edited meanwhile\n");
}

TEST_F(FixFilesTest, UnwritableDirectoryFailsWithoutTouchingTheFile) {
  if (geteuid() == 0)
    GTEST_SKIP() << "root may create files in any directory";
  std::string file = path("model.py");
  put(file, "a = b\n");
  fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec);
  WriteResult result = write_fixed_file(file, "a = b\n", "a = b.to(x.device)\n");
  fs::permissions(dir_, fs::perms::owner_all);
  EXPECT_EQ(result.status, WriteStatus::Failed);
  EXPECT_NE(result.message.find("temporary file"), std::string::npos) << result.message;
  EXPECT_EQ(get(file), "a = b\n");
}

TEST_F(FixFilesTest, MissingFileFails) {
  WriteResult result = write_fixed_file(path("gone.py"), "a\n", "b\n");
  EXPECT_EQ(result.status, WriteStatus::Failed);
  EXPECT_FALSE(fs::exists(path("gone.py")));
}

// A process appending to the file while --fix replaces it (issue 8's race_append.py): the
// append must never be lost silently. The hooks make the two windows deterministic.
namespace race {
int old_file = -1; // the file as it was before the rename, opened by the "other process"
void open_old(const std::string &target) { old_file = open(target.c_str(), O_WRONLY | O_APPEND); }
void append_to_old(const std::string &) {
  const char late[] = "# appended during the rename\n";
  ASSERT_EQ(write(old_file, late, sizeof late - 1), static_cast<ssize_t>(sizeof late - 1));
  close(old_file);
}
void append_by_name(const std::string &target) {
  int fd = open(target.c_str(), O_WRONLY | O_APPEND);
  const char early[] = "# appended before the rename\n";
  ASSERT_EQ(write(fd, early, sizeof early - 1), static_cast<ssize_t>(sizeof early - 1));
  close(fd);
}
} // namespace race

TEST_F(FixFilesTest, AnAppendJustBeforeTheRenameKeepsTheFile) {
  std::string file = path("model.py");
  put(file, "a = b\n");
  WriteHooks hooks;
  hooks.before_last_check = race::append_by_name;
  WriteResult result = write_fixed_file(file, "a = b\n", "a = b.to(x.device)\n", &hooks);
  EXPECT_EQ(result.status, WriteStatus::ChangedOnDisk);
  EXPECT_EQ(get(file), "a = b\n# appended before the rename\n");
  EXPECT_EQ(others({"model.py"}), std::vector<std::string>{});
}

TEST_F(FixFilesTest, AnAppendToTheReplacedFileIsPutBack) {
  std::string file = path("model.py");
  put(file, "a = b\n");
  WriteHooks hooks;
  hooks.before_last_check = race::open_old;
  hooks.after_rename = race::append_to_old;
  WriteResult result = write_fixed_file(file, "a = b\n", "a = b.to(x.device)\n", &hooks);
  EXPECT_EQ(result.status, WriteStatus::ChangedOnDisk) << result.message;
  EXPECT_NE(result.message.find("changed on disk"), std::string::npos);
  // The user's bytes, with the late append, and without the fixes.
  EXPECT_EQ(get(file), "a = b\n# appended during the rename\n");
  EXPECT_EQ(others({"model.py"}), std::vector<std::string>{});
}

} // namespace
} // namespace devlint
