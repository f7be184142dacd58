// Issue 8's defects, one regression test each: input that once crashed, aborted or was silently
// misread (see ../shared/repro in the project's notes for the original reproducers).
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>

#include "driver/python_environment.h"
#include "findings/suppressions.h"
#include "frontend/python/python_frontend.h"
#include "model/module_model.h"
#include "model/utf8.h"
#include "render/renderer.h"
#include "test_support.h"

namespace devlint {
namespace {

std::string tiny_model() {
  std::ifstream in(DEVLINT_TESTS_DATA_DIR "/modeling_tiny.py");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string replace_all(std::string text, const std::string &from, const std::string &to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

std::vector<std::string> where(const std::vector<Finding> &findings) {
  std::vector<std::string> out;
  for (const Finding &f : findings)
    out.push_back(f.code + "@" + std::to_string(f.range.line) + ":" +
                  std::to_string(f.range.column));
  return out;
}

// --- strict UTF-8 ---------------------------------------------------------------------------

TEST(Utf8, RejectsOverlongSurrogatesAndOutOfRange) {
  EXPECT_TRUE(valid_utf8("plain ascii"));
  EXPECT_TRUE(valid_utf8("\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80")); // é € 😀
  EXPECT_FALSE(valid_utf8("\xC0\xAF"));                            // overlong '/'
  EXPECT_FALSE(valid_utf8("\xE0\x80\xAF"));                        // overlong, three bytes
  EXPECT_FALSE(valid_utf8("\xF0\x80\x80\xAF"));                    // overlong, four bytes
  EXPECT_FALSE(valid_utf8("\xED\xA0\x80"));                        // surrogate U+D800
  EXPECT_FALSE(valid_utf8("\xF4\x90\x80\x80"));                    // past U+10FFFF
  EXPECT_FALSE(valid_utf8("\xC3"));                                // truncated
  EXPECT_FALSE(valid_utf8("\xFF"));
  EXPECT_EQ(to_valid_utf8("a\xC0\xAF"
                          "b"),
            "a\xEF\xBF\xBD\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(first_invalid_utf8("ab\xED\xA0\x80"), 2u);
}

TEST(Utf8, AnOverlongSequenceInAFileIsNotChecked) {
  std::string path = ::testing::TempDir() + "devlint_overlong.py";
  std::ofstream(path, std::ios::binary)
      << "import torch\nx = torch.zeros(1).to(\"cuda:0\xC0\xAF\")\n";
  Diagnostic d;
  EXPECT_EQ(read_source_file(path, 1 << 20, d), nullptr);
  EXPECT_EQ(d.severity, Severity::Error);
  EXPECT_NE(d.message.find("UTF-8"), std::string::npos) << d.message;
  EXPECT_EQ(d.line, 2u);
  std::remove(path.c_str());
}

// Machine-readable formats never abort, whatever bytes a file name holds.
TEST(Utf8, EveryFormatRendersANonUtf8FileName) {
  auto file = testing::source(tiny_model(), "models/modeling_\xFF\xC0\xAF.py");
  std::vector<Finding> findings = check_package({file.get()}, {file.get()}, CheckOptions{});
  ASSERT_FALSE(findings.empty());
  for (OutputFormat format :
       {OutputFormat::Json, OutputFormat::JsonLines, OutputFormat::Sarif, OutputFormat::Gitlab,
        OutputFormat::Junit, OutputFormat::Github, OutputFormat::Full, OutputFormat::Concise}) {
    std::ostringstream out;
    ASSERT_NO_THROW(render(format, out, findings, RenderOptions{}));
    std::string text = out.str();
    if (format == OutputFormat::Json || format == OutputFormat::Sarif ||
        format == OutputFormat::Gitlab) {
      EXPECT_TRUE(valid_utf8(text));
      EXPECT_TRUE(nlohmann::json::accept(text));
    }
    if (format == OutputFormat::Junit) {
      EXPECT_TRUE(valid_utf8(text)) << "JUnit XML must be UTF-8";
    }
  }
}

// --- suppression comments ---------------------------------------------------------------------

TEST(SuppressionScanner, ThousandsOfCodesDoNotOverflowTheStack) {
  std::string codes;
  for (int i = 0; i < 6000; ++i)
    codes += (i ? ", DL" : "DL") + std::to_string(100 + i % 800);
  auto file = testing::source("import torch\nx = 1  # noqa: " + codes + "\n");
  std::vector<Suppression> found = parse_suppressions(*file);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].codes.size(), 6000u);
}

TEST(SuppressionScanner, AnUnterminatedIgnoreBracketIsMalformed) {
  auto file = testing::source("import torch\nx = 1  # devlint: ignore[DL001" +
                              std::string(40000, 'x') + "\n");
  std::vector<Suppression> found = parse_suppressions(*file);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_FALSE(found[0].malformed.empty());
}

TEST(SuppressionScanner, MalformedDirectivesSilenceNothingAndAreReported) {
  const std::string site = "presents = torch.cat((presents, kv_cache), dim=0)";
  for (const char *comment : {"# noqa:", "# noqa: ,,,", "# devlint: ignore[DL001",
                              "# devlint: ignore[]", "# devlint: ignore:"}) {
    std::string text = tiny_model();
    text.insert(text.find(site) + site.size(), std::string("  ") + comment);
    auto file = testing::source(text);
    std::vector<Diagnostic> diagnostics;
    std::vector<Finding> findings =
        check_package({file.get()}, {file.get()}, CheckOptions{}, &diagnostics);
    EXPECT_EQ(where(findings), std::vector<std::string>{"DL001@31:28"}) << comment;
    bool reported = false;
    for (const Diagnostic &d : diagnostics)
      reported |= d.message.find("malformed suppression") != std::string::npos && d.line == 31;
    EXPECT_TRUE(reported) << comment;
  }
}

// --- DL900's fix keeps comment text a comment ------------------------------------------------

std::string fix_unused_suppressions(const std::string &text) {
  auto file = testing::source(text);
  CheckOptions options;
  options.report_unused_suppressions = true;
  std::string fixed = text;
  std::vector<Finding> findings = check_package({file.get()}, {file.get()}, options);
  // Apply from the end so offsets stay valid.
  for (auto f = findings.rbegin(); f != findings.rend(); ++f)
    if (f->code == "DL900" && f->fix)
      for (auto e = f->fix->edits.rbegin(); e != f->fix->edits.rend(); ++e)
        fixed.replace(e->begin, e->end - e->begin, e->replacement);
  return fixed;
}

TEST(UnusedSuppressionFix, NeverTurnsCommentTextIntoCode) {
  EXPECT_EQ(fix_unused_suppressions("import torch\nh = a + b  # noqa: DL002 (checked)\n"),
            "import torch\nh = a + b  # (checked)\n");
  EXPECT_EQ(fix_unused_suppressions("import torch\nx = 1  # noqa: DL001; print(\"run\")\n"),
            "import torch\nx = 1  # ; print(\"run\")\n");
  EXPECT_EQ(fix_unused_suppressions("import torch\n# devlint: noqa   print(\"code\")\nx = 1\n"),
            "import torch\n# print(\"code\")\nx = 1\n");
  EXPECT_EQ(fix_unused_suppressions("import torch\nx = 1  # noqa: DL001 # type: ignore\n"),
            "import torch\nx = 1  # type: ignore\n");
  // A directive that is the whole comment still goes, with its blanks, and so does its line.
  EXPECT_EQ(fix_unused_suppressions("import torch\nx = 1  # noqa: DL001\n"),
            "import torch\nx = 1\n");
  EXPECT_EQ(fix_unused_suppressions("import torch\n# devlint: ignore-file[DL003]\nx = 1\n"),
            "import torch\nx = 1\n");
}

// --- analysis -------------------------------------------------------------------------------

// A comprehension passed to a layer inside a loop over self.layers: evaluating the argument
// replaced the frame's environment under a reference into it (heap use-after-free, seen with
// AddressSanitizer).
TEST(PlacementAnalysis, ComprehensionArgumentToALayerInALoop) {
  const std::string text =
      "import torch\n"
      "from torch import nn\n\n\n"
      "class M(nn.Module):\n"
      "    def __init__(self):\n"
      "        super().__init__()\n"
      "        self.layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(2)])\n\n"
      "    def forward(self, xs, h):\n"
      "        for layer in self.layers:\n"
      "            y = layer([x for x in xs])\n"
      "            h = torch.cat((h, y), dim=0)\n"
      "        return h\n";
  std::vector<Finding> findings = testing::check_plain_modules(text);
  EXPECT_EQ(where(findings), std::vector<std::string>{"DL001@13:17"});
}

TEST(LineEndings, CrOnlyAndMixedFilesAreAnalyzedLikeLf) {
  std::string lf = tiny_model();
  std::vector<std::string> expected = where(testing::check_text(lf));
  ASSERT_EQ(expected, std::vector<std::string>{"DL001@31:28"});
  EXPECT_EQ(where(testing::check_text(replace_all(lf, "\n", "\r"))), expected);
  EXPECT_EQ(where(testing::check_text(replace_all(lf, "\n", "\r\n"))), expected);
  // Mixed: lines end with CR, LF or CRLF in turn (a CR before an empty line's LF would be one
  // CRLF, so such a line keeps LF).
  std::string mixed;
  int line = 0;
  for (size_t i = 0; i < lf.size(); ++i) {
    if (lf[i] != '\n') {
      mixed += lf[i];
      continue;
    }
    bool next_empty = i + 1 < lf.size() && lf[i + 1] == '\n';
    mixed += line % 3 == 0 && !next_empty ? "\r" : line % 3 == 1 ? "\n" : "\r\n";
    ++line;
  }
  EXPECT_EQ(where(testing::check_text(mixed)), expected);
}

TEST(LineEndings, AByteOrderMarkIsNotAnError) {
  auto file = testing::source("\xEF\xBB\xBF" + tiny_model());
  std::vector<Diagnostic> diagnostics;
  std::vector<Finding> findings =
      check_package({file.get()}, {file.get()}, CheckOptions{}, &diagnostics);
  EXPECT_EQ(where(findings), std::vector<std::string>{"DL001@31:28"});
  EXPECT_TRUE(diagnostics.empty()) << diagnostics.front().message;
}

TEST(Nesting, CodeTooDeepToFollowIsReported) {
  std::string deep = "import torch\nx = " + std::string(kMaxSyntaxDepth + 50, '(') + "1" +
                     std::string(kMaxSyntaxDepth + 50, ')') + "\n";
  auto file = testing::source(deep);
  std::vector<Diagnostic> diagnostics;
  check_package({file.get()}, {file.get()}, CheckOptions{}, &diagnostics);
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_NE(diagnostics[0].message.find("not analyzed"), std::string::npos)
      << diagnostics[0].message;
  EXPECT_EQ(diagnostics[0].line, 2u);
}

// A .pth file is read as data (issue 23, item 10): its path lines, never its import lines.
TEST(PythonEnvironment, PthFilesAddPathLinesAndSkipImportLines) {
  std::string text = "# editable install\n"
                     "/opt/src/lib\n"
                     "import os; os.system('touch /tmp/x')\n"
                     "import\tsys\n"
                     "\n"
                     "   \n"
                     "relative/dir  \r\n"
                     "../up\n";
  EXPECT_EQ(
      pth_file_directories("/env/site-packages", text),
      (std::vector<std::string>{"/opt/src/lib", "/env/site-packages/relative/dir", "/env/up"}));
}

TEST(PythonEnvironment, WithinComparesWholePathComponents) {
  EXPECT_TRUE(path_is_within("/repo", "/repo"));
  EXPECT_TRUE(path_is_within("/repo/.venv/bin", "/repo"));
  EXPECT_FALSE(path_is_within("/repository/bin", "/repo"));
  EXPECT_FALSE(path_is_within("/usr/bin", ""));
}

// Package bases that close a cycle across files (issue 23, item 9): every lookup through the
// bases recursed without end (a crash). One edge of the cycle is dropped; the run completes.
TEST(PackageBases, ACycleAcrossFilesIsBroken) {
  auto a = testing::source("import torch\nfrom torch import nn\nfrom .modeling_b import B\n\n\n"
                           "class A(B):\n    def forward(self, x):\n"
                           "        return torch.cat((x, self.w))\n",
                           "modeling_a.py");
  auto b = testing::source("import torch\nfrom torch import nn\nfrom .modeling_a import A\n\n\n"
                           "class B(A, nn.Module):\n    def __init__(self):\n"
                           "        super().__init__()\n        self.w = nn.Linear(2, 2)\n",
                           "modeling_b.py");
  auto syntax_a = lower_python(*a), syntax_b = lower_python(*b);
  auto package = build_package({syntax_a.get(), syntax_b.get()}, {});
  const ModuleClass *class_a = package->find_class("A"), *class_b = package->find_class("B");
  ASSERT_TRUE(class_a && class_b);
  EXPECT_EQ(class_a->bases, std::vector<const ModuleClass *>{class_b}); // kept: the first seen
  EXPECT_TRUE(class_b->bases.empty());                                  // dropped: closes it
  EXPECT_NE(class_a->find_child("w"), nullptr);
  check_package({a.get(), b.get()}, {a.get(), b.get()}, CheckOptions{});
}

// A chain of package bases deeper than any model (issue 23, item 9): each lookup walked the
// whole chain, quadratic in the classes. A base that would make a walk through the bases visit
// more than 64 classes is dropped.
TEST(PackageBases, AChainIsCutAtSixtyFourBases) {
  std::string text = "import torch\nfrom torch import nn\n\n\nclass C0(nn.Module):\n"
                     "    def __init__(self):\n        super().__init__()\n"
                     "        self.l = nn.Linear(2, 2)\n";
  for (int i = 1; i < 200; ++i)
    text += "\n\nclass C" + std::to_string(i) + "(C" + std::to_string(i - 1) + "):\n    pass\n";
  auto file = testing::source(text, "modeling_chain.py");
  auto syntax = lower_python(*file);
  auto package = build_package({syntax.get()}, {});
  EXPECT_NE(package->find_class("C64")->find_child("l"), nullptr); // 64 bases down to C0
  EXPECT_TRUE(package->find_class("C65")->bases.empty());
  EXPECT_EQ(package->find_class("C66")->bases.size(), 1u);
  EXPECT_EQ(package->find_class("C70")->find_child("l"), nullptr);
}

// Diamonds stacked on diamonds: every path through the bases was walked, 2^depth of them.
TEST(PackageBases, StackedDiamondsAreBounded) {
  std::string text = "import torch\nfrom torch import nn\n\n\nclass A0(nn.Module):\n    pass\n"
                     "\n\nclass B0(nn.Module):\n    pass\n";
  for (int i = 1; i < 100; ++i)
    for (const char *name : {"A", "B"})
      text += "\n\nclass " + std::string(name) + std::to_string(i) + "(A" + std::to_string(i - 1) +
              ", B" + std::to_string(i - 1) + "):\n    pass\n";
  auto file = testing::source(text, "modeling_diamonds.py");
  auto syntax = lower_python(*file);
  auto package = build_package({syntax.get()}, {});
  EXPECT_EQ(package->find_class("A99")->find_child("nothing"), nullptr); // returns at all
  EXPECT_EQ(package->find_class("A1")->bases.size(), 2u);
  check_package({file.get()}, {file.get()}, CheckOptions{});
}

} // namespace
} // namespace devlint
