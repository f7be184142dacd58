// The files devlint keeps for the user (model/private_files.h) and what it prints from files
// (printable): a planted link is replaced, never written through or read; a folder others may
// write to is refused; control characters and bytes that are not UTF-8 are shown, not sent.
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/private_files.h"
#include "model/text.h"

namespace devlint {
namespace {
namespace fs = std::filesystem;

class PrivateFilesTest : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/devlint-private-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir = pattern;
    victim = dir / "victim.txt";
    std::ofstream(victim) << "precious";
  }
  void TearDown() override { fs::remove_all(dir); }
  std::string contents(const fs::path &p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  fs::path dir, victim;
};

TEST_F(PrivateFilesTest, WriteReplacesALinkInsteadOfFollowingIt) {
  fs::path target = dir / "entry.json";
  fs::create_symlink(victim, target);
  EXPECT_EQ(write_file_replacing(target.string(), "new"), "");
  EXPECT_EQ(contents(victim), "precious");
  EXPECT_FALSE(fs::is_symlink(target));
  EXPECT_EQ(contents(target), "new");
  struct stat info;
  ASSERT_EQ(stat(target.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  // Nothing is left beside it.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 2);
}

TEST_F(PrivateFilesTest, ReadsOnlyPlainFiles) {
  fs::create_symlink(victim, dir / "link");
  EXPECT_FALSE(read_plain_file((dir / "link").string(), 1 << 20));
  ASSERT_EQ(mkfifo((dir / "fifo").c_str(), 0600), 0);
  EXPECT_FALSE(read_plain_file((dir / "fifo").string(), 1 << 20)); // no wait for a writer
  EXPECT_FALSE(read_plain_file(victim.string(), 3));               // over the cap
  EXPECT_EQ(read_plain_file(victim.string(), 1 << 20), std::optional<std::string>("precious"));
  EXPECT_TRUE(is_own_plain_file(victim.string()));
  EXPECT_FALSE(is_own_plain_file((dir / "link").string()));
}

TEST_F(PrivateFilesTest, TemporaryFilesAreNew) {
  std::string a = make_temporary_file((dir / "x.pch").string());
  std::string b = make_temporary_file((dir / "x.pch").string());
  ASSERT_FALSE(a.empty());
  EXPECT_NE(a, b);
  EXPECT_TRUE(is_own_plain_file(a));
}

TEST_F(PrivateFilesTest, PrivateDirectories) {
  fs::path made = dir / "a" / "b";
  EXPECT_EQ(make_private_directory(made.string()), "");
  struct stat info;
  ASSERT_EQ(stat(made.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700u);
  ASSERT_EQ(stat((dir / "a").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700u); // parents too

  fs::path shared = dir / "shared";
  fs::create_directory(shared);
  chmod(shared.c_str(), 0777);
  EXPECT_NE(make_private_directory(shared.string()).find("may be written by other users"),
            std::string::npos);

  fs::create_directory_symlink(made, dir / "linked");
  EXPECT_NE(make_private_directory((dir / "linked").string()).find("is a symbolic link"),
            std::string::npos);
  EXPECT_EQ(make_private_directory((dir / "linked").string(), LinkPolicy::FollowOwn), "");
  EXPECT_NE(make_private_directory(victim.string()).find("not a directory"), std::string::npos);
  if (geteuid() != 0) { // a folder of root's
    EXPECT_NE(make_private_directory("/usr").find("belongs to another user"), std::string::npos);
  }
}

TEST(Printable, ShowsControlCharactersAndInvalidBytes) {
  EXPECT_EQ(printable("plain text\tand tab"), "plain text\tand tab");
  EXPECT_EQ(printable("\x1b]0;title\x07\x1b[2J"), "␛]0;title␇␛[2J");
  EXPECT_EQ(printable("a\nb\rc\x7f"), "a␊b␍c␡");
  EXPECT_EQ(printable("modeling_\xff.py"), "modeling_\\xff.py");
  EXPECT_EQ(printable("\xc2\x9b"
                      "31m"),
            "\\u{9b}31m"); // C1 CSI
  EXPECT_EQ(printable("caf\xc3\xa9 \xe2\x86\x92"), "caf\xc3\xa9 \xe2\x86\x92");
}

} // namespace
} // namespace devlint
