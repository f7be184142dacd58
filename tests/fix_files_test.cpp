// Auto-patch mode: the file writer's safety rules and the unified diff.
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/stat.h>

#include "fixes/fix_files.h"

namespace fs = std::filesystem;

namespace devlint {
namespace {

class FixFilesTest : public ::testing::Test {
protected:
  fs::path dir;
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("devlint-fix-files-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir);
  }
  void TearDown() override {
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::add);
    fs::remove_all(dir);
  }
  static void write(const fs::path &p, const std::string &text) {
    std::ofstream(p, std::ios::binary) << text;
  }
  static std::string read(const fs::path &p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  static FixedFile fixed(const fs::path &p, std::string original, std::string result) {
    FixedFile f;
    f.path = p.string();
    f.display_path = p.filename().string();
    f.original = std::move(original);
    f.fixed = std::move(result);
    return f;
  }
};

TEST_F(FixFilesTest, WritesAndKeepsMode) {
  fs::path p = dir / "m.py";
  write(p, "a + b\r\n");
  ::chmod(p.c_str(), 0640);
  EXPECT_EQ(write_fixed_file(fixed(p, "a + b\r\n", "a + b.to(a.device)\r\n")), "");
  EXPECT_EQ(read(p), "a + b.to(a.device)\r\n");
  struct stat info {};
  ::stat(p.c_str(), &info);
  EXPECT_EQ(info.st_mode & 07777, 0640u);
}

TEST_F(FixFilesTest, RefusesFileChangedOnDisk) {
  fs::path p = dir / "m.py";
  write(p, "edited meanwhile\n");
  std::string error = write_fixed_file(fixed(p, "a + b\n", "a + b.to(a.device)\n"));
  EXPECT_NE(error.find("changed on disk"), std::string::npos) << error;
  EXPECT_EQ(read(p), "edited meanwhile\n");
}

TEST_F(FixFilesTest, RefusesReadOnlyFile) {
  fs::path p = dir / "m.py";
  write(p, "a + b\n");
  ::chmod(p.c_str(), 0444);
  std::string error = write_fixed_file(fixed(p, "a + b\n", "a + b.to(a.device)\n"));
  EXPECT_NE(error.find("read-only"), std::string::npos) << error;
  EXPECT_EQ(read(p), "a + b\n");
}

TEST_F(FixFilesTest, FollowsSymlinkAndLeavesNoTemporaryFile) {
  fs::path target = dir / "real.py";
  fs::path link = dir / "link.py";
  write(target, "a + b\n");
  fs::create_symlink(target, link);
  EXPECT_EQ(write_fixed_file(fixed(link, "a + b\n", "a + b.to(a.device)\n")), "");
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(read(target), "a + b.to(a.device)\n");
  int entries = 0;
  for (const auto &e : fs::directory_iterator(dir)) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 2);
}

TEST(UnifiedDiff, HunksWithContextAndMissingFinalNewline) {
  FixedFile f;
  f.display_path = "pkg/m.py";
  f.original = "1\n2\n3\n4\n5\n6\n7\n8\n9\nx + y";
  f.fixed = "1\n2\n3\n4\n5\n6\n7\n8\n9\nx + y.to(x.device)";
  std::string diff = unified_diff(f);
  EXPECT_EQ(diff, "--- a/pkg/m.py\n+++ b/pkg/m.py\n@@ -7,4 +7,4 @@\n 7\n 8\n 9\n-x + y\n"
                  "\\ No newline at end of file\n+x + y.to(x.device)\n"
                  "\\ No newline at end of file\n");
  f.fixed = f.original;
  EXPECT_EQ(unified_diff(f), "");
}

} // namespace
} // namespace devlint
