// Fix safety as a property (driver/fix_safety.h, driver/fix_loop.h): the local checks on one pass,
// and the loop dropping, with the rule named, a fix that breaks the parse, turns a comment into
// code, adds a finding or does not converge. The loop runs on a scripted analyzer, so each way a
// rule's fix could go wrong is tested whether or not a current rule has that bug.
#include <functional>
#include <gtest/gtest.h>

#include "cli/fix_mode.h"
#include "driver/fix_loop.h"
#include "driver/fix_safety.h"
#include "frontend/python/python_tokens.h"

namespace devlint {
namespace {

std::string apply_edits(const std::string &text, const std::vector<TextEdit> &edits) {
  std::string out;
  uint32_t cursor = 0;
  for (const TextEdit &e : edits) {
    out.append(text, cursor, e.begin - cursor);
    out += e.replacement;
    cursor = e.end;
  }
  return out + text.substr(cursor);
}

std::optional<std::string> problem(const std::string &text, const std::vector<TextEdit> &edits) {
  return fix_pass_problem(text, apply_edits(text, edits), edits);
}

TEST(ByteClasses, CommentsStringsAndInterpolations) {
  std::string text = "x = f\"a{b}\"  # c\n";
  PythonTokens tokens = classify_python_bytes(text);
  EXPECT_EQ(tokens.syntax_errors, 0u);
  auto at = [&](const char *needle) { return tokens.classes[text.find(needle)]; };
  EXPECT_EQ(at("x"), ByteClass::Code);
  EXPECT_EQ(at("a{"), ByteClass::String);
  EXPECT_EQ(at("b}"), ByteClass::Code) << "an f-string interpolation is code";
  EXPECT_EQ(at("# c"), ByteClass::Comment);
  EXPECT_EQ(at("\n"), ByteClass::Code);
  EXPECT_GT(classify_python_bytes("def f(:\n").syntax_errors, 0u);
}

TEST(ByteClasses, IntendedClassesOfAReplacement) {
  std::vector<ByteClass> classes = lex_python_fragment(".to(\"cuda\")  # moved");
  EXPECT_EQ(classes[0], ByteClass::Code);
  EXPECT_EQ(classes[4], ByteClass::String);
  EXPECT_EQ(classes[10], ByteClass::Code);
  EXPECT_EQ(classes.back(), ByteClass::Comment);
  EXPECT_EQ(lex_python_fragment("f'x'")[0], ByteClass::String) << "a prefix belongs to its string";
}

TEST(FixPassProblem, AcceptsACodeInsertion) {
  std::string text = "h = a + b  # residual\n";
  TextEdit move{9, 9, ".to(a.device)"};
  EXPECT_EQ(problem(text, {move}), std::nullopt);
}

TEST(FixPassProblem, RemovingAWholeCommentIsFine) {
  std::string text = "h = a + b  # noqa: DL002\nx = 1\n";
  EXPECT_EQ(problem(text, {{9, 24, ""}}), std::nullopt);
}

TEST(FixPassProblem, CommentTextTurnedIntoCodeIsCaughtEvenThoughItParses) {
  // Removing only the directive leaves `(checked)` after `b`: a call, which parses.
  std::string text = "h = a + b  # noqa: DL002 (checked)\n";
  uint32_t begin = 9, end = static_cast<uint32_t>(text.find(" (checked)"));
  std::string fixed = apply_edits(text, {{begin, end, ""}});
  ASSERT_EQ(classify_python_bytes("def f(a, b):\n    " + fixed).syntax_errors, 0u) << fixed;
  auto why = problem(text, {{begin, end, ""}});
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("comment into code"), std::string::npos) << *why;

  // The same with a statement after a semicolon.
  std::string print = "h = 1  # noqa: DL001; print(h)\n";
  auto why_print = problem(print, {{5, static_cast<uint32_t>(print.find(";")), ""}});
  ASSERT_TRUE(why_print.has_value());
  EXPECT_NE(why_print->find("comment into code"), std::string::npos) << *why_print;
}

TEST(FixPassProblem, ASyntaxErrorIsCaught) {
  std::string text = "y = x + 1\n";
  auto why = problem(text, {{5, 5, "("}});
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("syntax error"), std::string::npos) << *why;
}

TEST(FixPassProblem, AnInsertionThatLandsInACommentOrStringIsCaught) {
  std::string text = "y = x  # see x\ns = \"x\"\n";
  uint32_t comment_x = static_cast<uint32_t>(text.find("x\n"));
  auto in_comment = problem(text, {{comment_x + 1, comment_x + 1, ".to(y.device)"}});
  ASSERT_TRUE(in_comment.has_value());
  EXPECT_NE(in_comment->find("read as comment, not code"), std::string::npos) << *in_comment;
  uint32_t string_x = static_cast<uint32_t>(text.find("x\"")) + 1;
  auto in_string = problem(text, {{string_x, string_x, ".to(y.device)"}});
  ASSERT_TRUE(in_string.has_value());
  EXPECT_NE(in_string->find("read as string, not code"), std::string::npos) << *in_string;
}

TEST(FixPassProblem, CodeTurnedIntoACommentIsCaught) {
  // An edit that opens a comment swallows the rest of the line.
  std::string text = "y = x + z\n";
  auto why = problem(text, {{5, 5, " # "}});
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("comment"), std::string::npos) << *why;
}

TEST(FixPassProblem, BytesOutsideTheEditsMustBeUnchanged) {
  std::string text = "y = x + 1\n";
  std::vector<TextEdit> edits{{4, 5, "x.to(d)"}};
  std::string fixed = apply_edits(text, edits);
  fixed.back() = ' ';
  auto why = fix_pass_problem(text, fixed, edits);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("outside its edits"), std::string::npos) << *why;
  EXPECT_TRUE(fix_pass_problem(text, text + "#", edits).has_value());
  std::vector<TextEdit> overlapping{{4, 6, ""}, {5, 6, ""}};
  EXPECT_TRUE(fix_pass_problem(text, text, overlapping).has_value()) << "overlapping edits";
}

TEST(OffsetBeforeEdits, MapsAroundInsertionsAndDeletions) {
  std::vector<TextEdit> edits{{2, 2, "abc"}, {5, 7, ""}};
  EXPECT_EQ(offset_before_edits(1, edits), 1u);
  EXPECT_EQ(offset_before_edits(3, edits), 2u) << "inside an insertion: the edit's start";
  EXPECT_EQ(offset_before_edits(5, edits), 2u);
  EXPECT_EQ(offset_before_edits(6, edits), 3u);
  EXPECT_EQ(offset_before_edits(8, edits), 7u) << "after the deletion";
}

// A scripted analysis of one file: `rules` maps the current text to the findings to report.
struct ScriptedFinding {
  std::string code;
  uint32_t begin, end; // flagged range
  std::vector<TextEdit> edits;
};
using Script = std::function<std::vector<ScriptedFinding>(const std::string &text)>;

AnalyzeTexts scripted(const std::string &original, Script script) {
  return [original, script](const SourceTexts *texts, const std::string *) {
    CheckResult result;
    auto file = std::make_unique<SourceFile>();
    file->path = file->display_path = "m.py";
    file->text = texts ? texts->at("m.py") : original;
    file->index_lines();
    for (const ScriptedFinding &s : script(file->text)) {
      Finding f;
      f.code = s.code;
      f.rule_name = "rule-" + s.code;
      f.file = file.get();
      f.range.begin = s.begin;
      f.range.end = s.end;
      f.range.line = 1;
      if (!s.edits.empty())
        f.fix = Fix{Applicability::Safe, "fix it", s.edits};
      result.findings.push_back(std::move(f));
    }
    result.files.push_back(std::move(file));
    result.files_checked = 1;
    return result;
  };
}

uint32_t at(const std::string &text, const char *needle) {
  size_t pos = text.find(needle);
  EXPECT_NE(pos, std::string::npos) << needle;
  return static_cast<uint32_t>(pos);
}

TEST(FixLoopSafety, AGoodFixIsAppliedOnce) {
  std::string text = "h = a + b\n";
  FixLoopResult run =
      fix_until_stable(scripted(text,
                                [](const std::string &t) {
                                  std::vector<ScriptedFinding> out;
                                  if (t.find(".to(") == std::string::npos)
                                    out.push_back({"DL002", 4, 9, {{9, 9, ".to(a.device)"}}});
                                  return out;
                                }),
                       {});
  EXPECT_TRUE(run.dropped.empty());
  ASSERT_EQ(run.files.size(), 1u);
  EXPECT_EQ(run.files[0].fixed, "h = a + b.to(a.device)\n");
  EXPECT_TRUE(run.converged);
}

TEST(FixLoopSafety, AFixTurningACommentIntoCodeIsDroppedAndTheFileKept) {
  std::string text = "h = a + b  # noqa: DL002 (checked)\n";
  uint32_t begin = at(text, "  #"), end = at(text, " (checked)");
  FixLoopResult run =
      fix_until_stable(scripted(text,
                                [&](const std::string &t) {
                                  std::vector<ScriptedFinding> out;
                                  if (t.find("noqa") != std::string::npos)
                                    out.push_back({"DL900", begin + 2, end, {{begin, end, ""}}});
                                  return out;
                                }),
                       {});
  EXPECT_TRUE(run.files.empty()) << run.files[0].fixed;
  ASSERT_EQ(run.dropped.size(), 1u);
  EXPECT_EQ(run.dropped[0].code, "DL900");
  EXPECT_EQ(run.dropped[0].rule_name, "rule-DL900");
  EXPECT_NE(run.dropped[0].reason.find("comment into code"), std::string::npos);
  ASSERT_EQ(run.remaining.findings.size(), 1u);
  EXPECT_FALSE(run.remaining.findings[0].fix) << "a dropped fix is no longer offered";
  EXPECT_NE(run.remaining.findings[0].no_fix_reason.find("withheld"), std::string::npos);
}

TEST(FixLoopSafety, OnlyTheBreakingFixIsDroppedTheOtherApplies) {
  std::string text = "y = x + 1\nz = w + 2\n";
  FixLoopResult run =
      fix_until_stable(scripted(text,
                                [&](const std::string &t) {
                                  std::vector<ScriptedFinding> out;
                                  uint32_t second = at(t, "z");
                                  if (t.find("(x)") == std::string::npos)
                                    out.push_back({"DL002", 4, 5, {{4, 5, "(x)"}}});
                                  if (t.find("z = w + 2") != std::string::npos)
                                    out.push_back({"DL005",
                                                   second,
                                                   second + 9,
                                                   {{second + 4, second + 4, "("}}}); // unbalanced
                                  return out;
                                }),
                       {});
  ASSERT_EQ(run.files.size(), 1u);
  EXPECT_EQ(run.files[0].fixed, "y = (x) + 1\nz = w + 2\n");
  ASSERT_EQ(run.dropped.size(), 1u);
  EXPECT_EQ(run.dropped[0].code, "DL005");
  EXPECT_NE(run.dropped[0].reason.find("syntax error"), std::string::npos);
}

TEST(FixLoopSafety, AFixThatAddsAFindingIsDropped) {
  std::string text = "y = x + 1\nq = p\n";
  FixLoopResult run = fix_until_stable(
      scripted(text,
               [&](const std::string &t) {
                 std::vector<ScriptedFinding> out;
                 if (t.find("x.to(") == std::string::npos)
                   out.push_back({"DL002", 4, 9, {{5, 5, ".to(d)"}}});
                 else // the fix makes another site fail
                   out.push_back({"DL006", static_cast<uint32_t>(t.find("q")), 0, {}});
                 return out;
               }),
      {});
  EXPECT_TRUE(run.files.empty());
  ASSERT_EQ(run.dropped.size(), 1u);
  EXPECT_EQ(run.dropped[0].code, "DL002");
  EXPECT_NE(run.dropped[0].reason.find("add a finding: DL006"), std::string::npos)
      << run.dropped[0].reason;
  ASSERT_EQ(run.remaining.findings.size(), 1u);
  EXPECT_EQ(run.remaining.findings[0].code, "DL002") << "what is reported is the unfixed file";
}

TEST(FixLoopSafety, AFixThatNeverConvergesIsDroppedAndTheFileLeftAsItWas) {
  std::string text = "y = x\n";
  // Every pass proposes one more `.to(d)`: it never settles.
  FixLoopResult run = fix_until_stable(
      scripted(text,
               [](const std::string &t) {
                 std::vector<ScriptedFinding> out;
                 out.push_back({"DL001",
                                4,
                                5,
                                {{static_cast<uint32_t>(t.size() - 1),
                                  static_cast<uint32_t>(t.size() - 1), ".to(d)"}}});
                 return out;
               }),
      {});
  EXPECT_FALSE(run.converged);
  EXPECT_TRUE(run.files.empty()) << "a file that did not converge is not written";
  EXPECT_EQ(run.fixes_applied, 0u);
  ASSERT_EQ(run.dropped.size(), 1u);
  EXPECT_EQ(run.dropped[0].code, "DL001");
  EXPECT_NE(run.dropped[0].reason.find("still changing"), std::string::npos);
}

TEST(FixModeExitCode, ADroppedFixMakesTheRunFail) {
  FixModeOutcome outcome;
  CheckResult reported;
  FixFlags flags;
  flags.fix = true;
  EXPECT_EQ(fix_mode_exit_code(outcome, reported, flags, false), 0);
  outcome.fixes_dropped = true;
  EXPECT_EQ(fix_mode_exit_code(outcome, reported, flags, false), 2);
  EXPECT_EQ(fix_mode_exit_code(outcome, reported, flags, true), 2)
      << "--exit-zero does not hide it";
}

} // namespace
} // namespace devlint
