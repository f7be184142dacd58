// The fix loop on files in a temporary directory (a directory is one package), and the unified
// diffs `--diff` prints.
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

#include "driver/fix_loop.h"
#include "fixes/unified_diff.h"
#include "test_support.h"

namespace fs = std::filesystem;

namespace devlint {
namespace {

class FixLoopTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "devlint-fix-loop-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// A split module (not in _no_split_modules) concatenating its input with a child's output.
const char *kConcatModel = "import torch\n"
                           "from torch import nn\n"
                           "\n"
                           "class Head(nn.Module):\n"
                           "    def __init__(self):\n"
                           "        super().__init__()\n"
                           "        self.proj = nn.Linear(4, 4)\n"
                           "\n"
                           "    def forward(self, x):\n"
                           "        h = self.proj(x)\n"
                           "        return torch.cat([h, torch.zeros(1, 4)], dim=0)\n";

std::string with_crlf(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (c == '\n')
      out += '\r';
    out += c;
  }
  return out;
}

TEST_F(FixLoopTest, KeepsCrlfAndAMissingTrailingNewline) {
  std::string original = with_crlf(kConcatModel);
  original.erase(original.size() - 2); // no newline at the end
  std::ofstream(dir_ / "modeling_head.py", std::ios::binary) << original;

  FixLoopResult result = fix_until_stable({dir_.string()}, {}, nullptr, {});

  ASSERT_EQ(result.files.size(), 1u);
  const std::string &fixed = result.files[0].fixed;
  EXPECT_NE(fixed.find("torch.zeros(1, 4, device=h.device)"), std::string::npos) << fixed;
  // Only the edit differs: every line still ends in CRLF, and the last line has no newline.
  std::string expected = original;
  expected.replace(expected.find("torch.zeros(1, 4)"), 17, "torch.zeros(1, 4, device=h.device)");
  EXPECT_EQ(fixed, expected);
  EXPECT_EQ(result.files[0].original, original);
  EXPECT_EQ(result.fixes_applied, 1u);
  EXPECT_TRUE(result.converged);
  EXPECT_TRUE(result.remaining.findings.empty());
  EXPECT_EQ(testing::read_file(dir_ / "modeling_head.py"), original)
      << "the loop must not write anything";
}

TEST_F(FixLoopTest, ReanalyzesWithSiblingFilesAndIsIdempotent) {
  // GLM-4V: visual.py's findings depend on _no_split_modules in its sibling modeling_chatglm.py.
  fs::path seed = fs::path(DEVLINT_FIXTURES_DIR) / "seeds" / "glm4v";
  fs::copy_file(seed / "visual.py", dir_ / "visual.py");
  fs::copy_file(seed / "modeling_chatglm.py", dir_ / "modeling_chatglm.py");

  FixLoopResult first = fix_until_stable({dir_.string()}, {}, nullptr, {});
  ASSERT_EQ(first.files.size(), 1u);
  EXPECT_EQ(fs::path(first.files[0].path).filename(), "visual.py");
  EXPECT_EQ(first.files[0].fixed, testing::read_file(seed / "visual.py.fixed"));
  EXPECT_EQ(first.files[0].fixes_by_code.at("DL004"), 3u);
  EXPECT_EQ(first.files[0].fixes_by_code.at("DL002"), 2u);
  for (const Finding &f : first.remaining.findings)
    EXPECT_FALSE(f.fix.has_value()) << f.code << " at line " << f.range.line << " still fixable";

  // Fixing the fixed text again changes nothing.
  std::ofstream(dir_ / "visual.py", std::ios::binary) << first.files[0].fixed;
  FixLoopResult second = fix_until_stable({dir_.string()}, {}, nullptr, {});
  EXPECT_TRUE(second.files.empty());
  EXPECT_EQ(second.fixes_applied, 0u);
  EXPECT_EQ(second.remaining.findings.size(), first.remaining.findings.size());
}

TEST(FixAllowed, FollowsApplicability) {
  Finding finding;
  EXPECT_FALSE(fix_allowed(finding, true));
  finding.fix = Fix{Applicability::Safe, "t", {{0, 1, "y"}}};
  EXPECT_TRUE(fix_allowed(finding, false));
  finding.fix->applicability = Applicability::Unsafe;
  EXPECT_FALSE(fix_allowed(finding, false));
  EXPECT_TRUE(fix_allowed(finding, true));
  finding.fix->applicability = Applicability::DisplayOnly;
  EXPECT_FALSE(fix_allowed(finding, true));
}

size_t hunks(const std::string &diff) {
  size_t count = 0;
  for (size_t at = diff.find("\n@@ "); at != std::string::npos; at = diff.find("\n@@ ", at + 1))
    ++count;
  return count;
}

TEST(UnifiedDiff, EqualTextsGiveNoDiff) { EXPECT_EQ(unified_diff("a\n", "a\n", "m.py"), ""); }

TEST(UnifiedDiff, OneChangedLineWithContext) {
  std::string before = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
  std::string after = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n";
  EXPECT_EQ(unified_diff(before, after, "pkg/m.py"), "--- a/pkg/m.py\n"
                                                     "+++ b/pkg/m.py\n"
                                                     "@@ -2,7 +2,7 @@\n"
                                                     " 2\n"
                                                     " 3\n"
                                                     " 4\n"
                                                     "-5\n"
                                                     "+five\n"
                                                     " 6\n"
                                                     " 7\n"
                                                     " 8\n");
}

TEST(UnifiedDiff, AnAbsolutePathHasNoPrefix) {
  std::string diff = unified_diff("a\n", "b\n", "/abs/pkg/m.py");
  EXPECT_EQ(diff.rfind("--- /abs/pkg/m.py\n+++ /abs/pkg/m.py\n@@ -1,1 +1,1 @@\n", 0), 0u) << diff;
}

TEST(UnifiedDiff, DistantChangesGetSeparateHunksAndCloseOnesMerge) {
  std::string before, far_after, near_after;
  for (int i = 1; i <= 20; ++i) {
    before += std::to_string(i) + "\n";
    far_after += (i == 2 || i == 18 ? "x" : std::to_string(i)) + "\n";
    near_after += (i == 5 || i == 11 ? "x" : std::to_string(i)) + "\n";
  }
  std::string far = unified_diff(before, far_after, "m.py");
  EXPECT_NE(far.find("@@ -1,5 +1,5 @@\n"), std::string::npos) << far;
  EXPECT_NE(far.find("@@ -15,6 +15,6 @@\n"), std::string::npos) << far;
  std::string near = unified_diff(before, near_after, "m.py");
  EXPECT_NE(near.find("@@ -2,13 +2,13 @@\n"), std::string::npos) << near;
  EXPECT_EQ(hunks(near), 1u) << near;
  EXPECT_EQ(hunks(far), 2u) << far;
}

TEST(UnifiedDiff, MarksAMissingNewlineAndKeepsCarriageReturns) {
  EXPECT_EQ(unified_diff("a\r\nb", "a\r\nc", "m.py"), "--- a/m.py\n"
                                                      "+++ b/m.py\n"
                                                      "@@ -1,2 +1,2 @@\n"
                                                      " a\r\n"
                                                      "-b\n"
                                                      "\\ No newline at end of file\n"
                                                      "+c\n"
                                                      "\\ No newline at end of file\n");
}

TEST(UnifiedDiff, InsertionAndDeletionAtTheEdges) {
  EXPECT_EQ(unified_diff("", "a\n", "m.py"), "--- a/m.py\n+++ b/m.py\n@@ -0,0 +1,1 @@\n+a\n");
  EXPECT_EQ(unified_diff("a\nb\n", "b\n", "m.py"),
            "--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,1 @@\n-a\n b\n");
}

TEST(UnifiedDiff, HunksWithContextAndMissingFinalNewline) {
  std::string original = "1\n2\n3\n4\n5\n6\n7\n8\n9\nx + y";
  std::string fixed = "1\n2\n3\n4\n5\n6\n7\n8\n9\nx + y.to(x.device)";
  EXPECT_EQ(unified_diff(original, fixed, "pkg/m.py"),
            "--- a/pkg/m.py\n+++ b/pkg/m.py\n@@ -7,4 +7,4 @@\n 7\n 8\n 9\n-x + y\n"
            "\\ No newline at end of file\n+x + y.to(x.device)\n"
            "\\ No newline at end of file\n");
}

TEST(UnifiedDiff, NamesWithSpacesEndInATab) {
  std::string diff = unified_diff("a\n", "b\n", "my models/m.py");
  EXPECT_EQ(diff.rfind("--- a/my models/m.py\t\n+++ b/my models/m.py\t\n", 0), 0u) << diff;
}

} // namespace
} // namespace devlint
