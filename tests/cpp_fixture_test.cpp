// C++ fixture tests: every fixtures/cpp/X.cpp is compiled against the real LibTorch headers (with
// the shared precompiled header in the build directory) and states its expected findings inline,
// on the line before the site:
//   // ruleid: DL008      a DL008 finding must start on the next code line
//   // ok: DL008          no DL008 finding may start there
// Any finding without a `ruleid` annotation fails the test. `X.cpp.fixed` is the expected result
// of --fix; it must still compile (`clang++ -fsyntax-only` with the same flags) and be stable.
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <set>
#include <sstream>
#include <unistd.h>

#include "driver/check_run.h"
#include "driver/fix_loop.h"
#include "frontend/cpp/cpp_frontend.h"
#include "test_support.h"

namespace fs = std::filesystem;

namespace devlint {
namespace {

std::vector<fs::path> cpp_fixtures() {
  std::vector<fs::path> out;
  fs::path dir = fs::path(DEVLINT_FIXTURES_DIR) / "cpp";
  for (const auto &entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".cpp")
      out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

CheckOptions cpp_options() {
  CheckOptions options;
  options.cpp.pch_dir = DEVLINT_TEST_PCH_DIR;
  options.jobs = 1;
  return options;
}

class CppFixtureTest : public ::testing::TestWithParam<fs::path> {};

// The findings of the fixture's first analysis against its annotations.
void expect_annotated_findings(const fs::path &fixture, const CheckResult &result) {
  for (const Diagnostic &d : result.diagnostics)
    ADD_FAILURE() << "diagnostic: " << d.path << ": " << d.message;
  ASSERT_EQ(result.files_checked, 1u);
  const SourceFile &file = *result.files.front();
  testing::Expectation expected = testing::parse_annotations(file, "//");
  const auto &must = expected.must;
  const auto &must_not = expected.must_not;
  EXPECT_FALSE(must.empty() && must_not.empty()) << fixture << " has no ruleid/ok annotations";
  std::set<std::pair<uint32_t, std::string>> actual;
  for (const Finding &f : result.findings) {
    ASSERT_EQ(f.file->path, file.path) << "a finding outside the fixture";
    actual.insert({f.range.line, f.code});
    EXPECT_TRUE(must.count({f.range.line, f.code}))
        << fixture.filename() << ":" << f.range.line << ": unexpected " << f.code << ": "
        << f.message;
    EXPECT_FALSE(f.why.empty()) << fixture.filename() << ":" << f.range.line << ": " << f.code
                                << " has no why: " << f.message; // issue 26
  }
  for (const auto &m : must)
    EXPECT_TRUE(actual.count(m)) << fixture.filename() << ":" << m.first << ": expected "
                                 << m.second << ", not reported";
  for (const auto &m : must_not)
    EXPECT_FALSE(actual.count(m)) << fixture.filename() << ":" << m.first;
}

// `clang++-14 -fsyntax-only` with devlint's own default flags and the same precompiled header.
int compile_syntax_only(const fs::path &file) {
  std::string error;
  std::string pch = prepare_cpp_pch(cpp_options().cpp, error);
  std::string command = "clang++-14";
  std::vector<std::string> args = default_cpp_arguments(cpp_options().cpp);
  for (size_t i = 1; i < args.size(); ++i)
    command += " '" + args[i] + "'";
  if (!pch.empty())
    command += " -include-pch '" + pch + "'";
  command += " -x c++ '" + file.string() + "'";
  return std::system(command.c_str());
}

// One test per fixture: each analysis of a file against the LibTorch headers costs seconds, so the
// fix loop's first analysis is the one checked against the annotations.
TEST_P(CppFixtureTest, FindingsMatchAnnotationsAndFixesCompile) {
  const fs::path original = GetParam();
  fs::path expected = original.string() + ".fixed";
  // Fix a copy: the loop re-analyzes the fixed text until nothing changes.
  fs::path dir = fs::temp_directory_path() / ("devlint-cpp-fix-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path copy = dir / original.filename();
  fs::copy_file(original, copy, fs::copy_options::overwrite_existing);
  bool first_analysis = true;
  AnalyzeTexts analyze = [&](const SourceTexts *texts, const std::string *) {
    CheckResult result = check_paths({copy.string()}, cpp_options(), nullptr, texts);
    if (first_analysis && !texts)
      expect_annotated_findings(original, result);
    first_analysis = false;
    return result;
  };
  FixLoopResult fixed = fix_until_stable(analyze, {});
  fs::remove_all(dir);
  EXPECT_FALSE(first_analysis) << "the fixture was not analyzed";
  if (!fs::exists(expected)) {
    EXPECT_TRUE(fixed.files.empty())
        << original.filename() << " has fixable findings but no .cpp.fixed expects them";
    return;
  }
  ASSERT_EQ(fixed.files.size(), 1u);
  EXPECT_TRUE(fixed.converged);
  EXPECT_EQ(fixed.files.front().fixed, testing::read_file(expected))
      << "fixed output of " << original;
  for (const Finding &f : fixed.remaining.findings)
    EXPECT_FALSE(f.fix.has_value())
        << "still fixable after --fix: " << f.code << " line " << f.range.line;
  if (std::system("command -v clang++-14 >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "clang++-14 is not installed: the fixed output's compile check is skipped";
  EXPECT_EQ(compile_syntax_only(expected), 0) << expected << " does not compile";
}

std::string fixture_name(const ::testing::TestParamInfo<fs::path> &info) {
  std::string name = info.param.stem().string();
  for (char &c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)))
      c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(CppFixtures, CppFixtureTest, ::testing::ValuesIn(cpp_fixtures()),
                         fixture_name);

} // namespace
} // namespace devlint
