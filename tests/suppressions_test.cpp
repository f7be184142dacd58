// Suppression comments (findings/suppressions.cpp) and DL900, on the tiny model's DL001.
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

#include "findings/suppressions.h"
#include "fixes/suppression_fix.h"
#include "test_support.h"

namespace devlint {
namespace {

std::string tiny_model() {
  std::ifstream in(DEVLINT_TESTS_DATA_DIR "/modeling_tiny.py");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::string kSite = "presents = torch.cat((presents, kv_cache), dim=0)";

std::string with_comment(const std::string &comment, bool own_line_at_top = false) {
  std::string text = tiny_model();
  if (own_line_at_top)
    return comment + "\n" + text;
  size_t at = text.find(kSite);
  return text.insert(at + kSite.size(), "  " + comment);
}

std::vector<std::string> codes(const std::vector<Finding> &findings) {
  std::vector<std::string> out;
  for (const Finding &f : findings)
    out.push_back(f.code);
  return out;
}

CheckOptions reporting_unused() {
  CheckOptions options;
  options.report_unused_suppressions = true;
  return options;
}

TEST(Suppressions, TheFixtureHasOneFinding) {
  EXPECT_EQ(codes(testing::check_text(tiny_model())), std::vector<std::string>{"DL001"});
}

TEST(Suppressions, LineFormsSilenceTheirCode) {
  for (const char *comment : {"# noqa: DL001", "# noqa", "# NOQA:DL001", "# noqa: E501, DL001",
                              "# devlint: ignore[DL001]", "# devlint: ignore[cross-device-concat]",
                              "# devlint: ignore", "# type: ignore  # noqa: DL001"})
    EXPECT_TRUE(testing::check_text(with_comment(comment)).empty()) << comment;
}

TEST(Suppressions, OtherCodesAndStringsDoNotSilence) {
  EXPECT_EQ(codes(testing::check_text(with_comment("# noqa: DL002"))),
            std::vector<std::string>{"DL001"});
  EXPECT_EQ(codes(testing::check_text(with_comment("# devlint: ignore[DL0]"))),
            std::vector<std::string>{"DL001"});
  // A `# noqa` inside a string literal is not a comment.
  std::string text = tiny_model();
  text.insert(text.find(kSite) + kSite.size(), "; s = '# noqa'");
  EXPECT_EQ(codes(testing::check_text(text)), std::vector<std::string>{"DL001"});
}

TEST(Suppressions, FileLevelForms) {
  for (const char *comment :
       {"# devlint: noqa", "# devlint: noqa: DL001", "# devlint: ignore-file[DL001, DL002]"})
    EXPECT_TRUE(testing::check_text(with_comment(comment, true)).empty()) << comment;
  EXPECT_FALSE(testing::check_text(with_comment("# devlint: noqa: DL002", true)).empty());
  // After code on the same line, the file-level form does nothing (most likely a typo).
  EXPECT_FALSE(testing::check_text(with_comment("# devlint: noqa")).empty());
}

TEST(Suppressions, CppNolint) {
  auto file = testing::source("a = b;  // NOLINT(devlint-DL001, bugprone-foo)\n"
                              "// NOLINTNEXTLINE(devlint-cross-device-concat)\n"
                              "c = d;\n"
                              "e = f;  // NOLINT(bugprone-foo)\n",
                              "kernel.cpp");
  std::vector<Suppression> found = parse_suppressions(*file);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].line, 1u);
  EXPECT_EQ(found[0].codes, std::vector<std::string>{"DL001"});
  EXPECT_EQ(found[1].scope, Suppression::Scope::NextLine);
  EXPECT_EQ(found[1].line, 3u);
}

// clang-tidy reads `NOLINT` in block comments too; a bare devlint code (`DL008`) is devlint's.
TEST(Suppressions, CppNolintInBlockCommentsAndBareCodes) {
  auto file = testing::source("a = b;  /* NOLINT(DL008) */\n"
                              "/* NOLINTNEXTLINE(devlint-DL001) */\n"
                              "c = d;\n"
                              "e = f;  /* NOLINT */\n"
                              "g = h;  // NOLINT(DL002, bugprone-foo)\n"
                              "/* a comment that spans\n   lines, no directive */\n",
                              "kernel.cpp");
  std::vector<Suppression> found = parse_suppressions(*file);
  ASSERT_EQ(found.size(), 4u);
  EXPECT_EQ(found[0].line, 1u);
  EXPECT_EQ(found[0].codes, std::vector<std::string>{"DL008"});
  EXPECT_EQ(found[1].scope, Suppression::Scope::NextLine);
  EXPECT_EQ(found[1].line, 3u);
  EXPECT_EQ(found[2].line, 4u);
  EXPECT_TRUE(found[2].codes.empty());
  EXPECT_EQ(found[3].codes, std::vector<std::string>{"DL002"});
  // An unused one in a block comment of its own goes whole, and with its line when alone there.
  SuppressionComment first{found[0].comment, found[0].comment_begin, found[0].comment_end};
  Fix fix = suppression_removal_fix(*file, first);
  ASSERT_EQ(fix.edits.size(), 1u);
  std::string text = file->text;
  text.replace(fix.edits[0].begin, fix.edits[0].end - fix.edits[0].begin, fix.edits[0].replacement);
  EXPECT_EQ(text.substr(0, text.find('\n')), "a = b;");
  SuppressionComment second{found[1].comment, found[1].comment_begin, found[1].comment_end};
  fix = suppression_removal_fix(*file, second);
  text = file->text;
  text.replace(fix.edits[0].begin, fix.edits[0].end - fix.edits[0].begin, fix.edits[0].replacement);
  EXPECT_EQ(text.substr(text.find('\n') + 1, 7), "c = d;\n");
}

TEST(Suppressions, UnusedOnesAreReportedOnlyWhenAsked) {
  std::string text = with_comment("# noqa: DL001");
  text.replace(text.find("import torch\n"), 13, "import torch  # noqa: DL002, E402\n");
  EXPECT_TRUE(testing::check_text(text).empty());
  std::vector<Finding> findings = testing::check_text(text, reporting_unused());
  ASSERT_EQ(codes(findings), std::vector<std::string>{"DL900"});
  EXPECT_EQ(findings[0].range.line, 4u);
  EXPECT_NE(findings[0].message.find("unused: `DL002`"), std::string::npos);
  // E402 belongs to another tool, so the directive stays and there is no fix.
  EXPECT_FALSE(findings[0].fix);

  // A directive with only unused codes is removed by its fix.
  std::string lone = tiny_model();
  lone.replace(lone.find("import torch\n"), 13, "import torch  # devlint: ignore[DL003]\n");
  findings = testing::check_text(lone, reporting_unused());
  ASSERT_EQ(codes(findings), (std::vector<std::string>{"DL001", "DL900"}));
  ASSERT_TRUE(findings[1].fix);
  const TextEdit &edit = findings[1].fix->edits[0];
  std::string fixed = lone;
  fixed.replace(edit.begin, edit.end - edit.begin, edit.replacement);
  EXPECT_EQ(fixed, tiny_model());
}

TEST(Suppressions, UnknownAndDisabledCodesAreNamed) {
  CheckOptions options = reporting_unused();
  options.selection.ignore = {"DL002"};
  std::vector<Finding> findings =
      testing::check_text(with_comment("# noqa: DL001, DL002, DL777"), options);
  ASSERT_EQ(codes(findings), std::vector<std::string>{"DL900"});
  EXPECT_NE(findings[0].message.find("not enabled: `DL002`"), std::string::npos);
  EXPECT_NE(findings[0].message.find("unknown: `DL777`"), std::string::npos);
  // Ignoring DL900 turns the report off.
  options.selection.ignore = {"DL9"};
  EXPECT_TRUE(testing::check_text(with_comment("# noqa: DL001, DL002"), options).empty());
}

TEST(Suppressions, PerFileIgnores) {
  CheckOptions options;
  options.per_file_ignores = {{"test.py", {"DL0"}}};
  EXPECT_TRUE(testing::check_text(tiny_model(), options).empty());
  options.per_file_ignores = {{"other_*.py", {"DL0"}}};
  EXPECT_FALSE(testing::check_text(tiny_model(), options).empty());
}

TEST(Suppressions, UnfixableWithholdsTheFix) {
  CheckOptions options;
  options.unfixable = {"DL001"};
  options.unfixable_source = "pyproject.toml";
  std::vector<Finding> findings = testing::check_text(tiny_model(), options);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_FALSE(findings[0].fix);
  EXPECT_NE(findings[0].no_fix_reason.find("unfixable"), std::string::npos);
}

} // namespace
} // namespace devlint
