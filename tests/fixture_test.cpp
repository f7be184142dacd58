// Fixture tests: every directory under fixtures/ holding .py files is one package. Each fixture
// states its expected findings inline, Semgrep-style, on the line before the site
// (test_support.h's parse_annotations):
//   # ruleid: DL001      a DL001 finding must start on the next code line
//   # ok: DL001          no DL001 finding may start there
//   # ruleid: DL002 (warning)   ... and the placement ranks it `warning` (or `(error)`)
// Any finding without a `ruleid` annotation fails the test. A `devlint.toml` in the fixture's
// directory applies to it, as it does to `devlint check` there (hand-made-maps = true).
// `X.py.fixed` next to `X.py` is the expected result of applying every safe fix until nothing
// changes; the fixed file must parse, must report none of the fixed findings, and fixing it again
// must change nothing.
// Unused suppressions are reported (DL900): a fixture's suppression comment must silence something.
// Every finding has a non-empty why.
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <set>
#include <sstream>

#include "config/config_resolver.h"
#include "driver/check_run.h"
#include "fixes/apply_fixes.h"
#include "frontend/python/python_frontend.h"
#include "test_support.h"

namespace fs = std::filesystem;

namespace devlint {
namespace {

using testing::Expectation;
using testing::parse_annotations;
using testing::read_file;

// `X.py.fixed`: named so that nothing reads it as model code (a `.py` would join the package and
// define the same classes again).
bool is_fixed_output(const fs::path &p) {
  const std::string name = p.filename().string();
  return name.size() > 9 && name.substr(name.size() - 9) == ".py.fixed";
}

std::vector<fs::path> fixture_packages() {
  std::set<fs::path> dirs;
  for (const auto &entry : fs::recursive_directory_iterator(DEVLINT_FIXTURES_DIR))
    if (entry.is_regular_file() && entry.path().extension() == ".py")
      dirs.insert(entry.path().parent_path());
  return {dirs.begin(), dirs.end()};
}

class FixtureTest : public ::testing::TestWithParam<fs::path> {};

// The options `devlint check` uses in `dir`: its own devlint.toml, if any (fixtures/devlint.toml
// above only excludes the C++ fixtures).
CheckOptions fixture_options(const fs::path &dir) {
  fs::path config = dir / "devlint.toml";
  CheckOptions options;
  if (fs::exists(config)) {
    ConfigResolver resolver(CommandLineSettings{}, ConfigDiscovery::ExplicitFile, config.string());
    options = resolver.options_for(dir.string());
  }
  options.report_unused_suppressions = true;
  return options;
}

// The fixture package in `dir`: every .py file but the expected fix outputs, sorted by path.
struct FixturePackage {
  std::vector<std::unique_ptr<SourceFile>> files;
  std::vector<const SourceFile *> sources;
};

FixturePackage load_package(const fs::path &dir) {
  FixturePackage package;
  for (const auto &entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".py" || is_fixed_output(entry.path()))
      continue;
    auto f = std::make_unique<SourceFile>();
    f->path = entry.path().string();
    f->display_path = entry.path().filename().string();
    f->text = read_file(entry.path());
    f->index_lines();
    package.sources.push_back(f.get());
    package.files.push_back(std::move(f));
  }
  std::sort(package.sources.begin(), package.sources.end(),
            [](const SourceFile *a, const SourceFile *b) { return a->path < b->path; });
  return package;
}

TEST_P(FixtureTest, FindingsMatchAnnotations) {
  const fs::path dir = GetParam();
  FixturePackage package = load_package(dir);
  const std::vector<const SourceFile *> &sources = package.sources;
  std::vector<Finding> findings = check_package(sources, sources, fixture_options(dir));
  // The data formats' message stays within 200 characters (the placement story goes into `why`);
  // the first line a terminal shows within about 100 (whole names may take it to 120).
  for (const Finding &f : findings) {
    EXPECT_LE(f.message.substr(0, f.message.find('\n')).size(), 200u)
        << f.file->display_path << ":" << f.range.line << ": " << f.message;
    const std::string &shown = f.summary.empty() ? f.message : f.summary;
    EXPECT_LE(shown.size(), 120u) << f.file->display_path << ":" << f.range.line << ": " << shown;
    // Every finding says why the site fails (issue 26).
    EXPECT_FALSE(f.why.empty()) << f.file->display_path << ":" << f.range.line << ": " << f.code
                                << " has no why: " << f.message;
  }
  int annotated = 0;
  for (const SourceFile *file : sources) {
    Expectation expected = parse_annotations(*file, "#");
    annotated += static_cast<int>(expected.must.size() + expected.must_not.size());
    std::set<std::pair<uint32_t, std::string>> actual;
    for (const Finding &f : findings)
      if (f.file == file)
        actual.insert({f.range.line, f.code});
    for (const auto &m : expected.must)
      EXPECT_TRUE(actual.count(m))
          << file->display_path << ":" << m.first << ": expected " << m.second << ", not reported";
    for (const auto &a : actual) {
      EXPECT_TRUE(expected.must.count(a))
          << file->display_path << ":" << a.first << ": unexpected " << a.second << ": " << [&] {
               for (const Finding &f : findings)
                 if (f.file == file && f.range.line == a.first && f.code == a.second)
                   return f.message;
               return std::string();
             }();
      EXPECT_FALSE(expected.must_not.count(a)) << file->display_path << ":" << a.first;
    }
    for (const auto &[site, level] : expected.levels)
      for (const Finding &f : findings) {
        if (f.file == file && f.range.line == site.first && f.code == site.second) {
          EXPECT_EQ(f.level, level)
              << file->display_path << ":" << site.first << ": " << site.second << " ranked "
              << (f.level == FindingLevel::Warning ? "warning" : "error") << " (" << f.placement
              << ")";
        }
      }
  }
  EXPECT_GT(annotated, 0) << dir << " has no ruleid/ok annotations";
}

TEST_P(FixtureTest, FixesProduceExpectedOutput) {
  const fs::path dir = GetParam();
  bool any = false;
  for (const auto &entry : fs::directory_iterator(dir)) {
    if (!is_fixed_output(entry.path()))
      continue;
    any = true;
    std::string name = entry.path().filename().string();
    fs::path original = dir / name.substr(0, name.size() - 6); // drop ".fixed"
    ASSERT_TRUE(fs::exists(original)) << original;
    // The package: every other file as it is, the fixed file as it evolves.
    std::vector<std::unique_ptr<SourceFile>> others;
    for (const auto &e : fs::directory_iterator(dir))
      if (e.path().extension() == ".py" && !is_fixed_output(e.path()) && e.path() != original) {
        auto f = std::make_unique<SourceFile>();
        f->path = e.path().string();
        f->text = read_file(e.path());
        f->index_lines();
        others.push_back(std::move(f));
      }
    std::string text = read_file(original);
    auto check = [&](const std::string &current, std::vector<Finding> &out) {
      auto f = std::make_unique<SourceFile>();
      f->path = original.string();
      f->display_path = original.filename().string();
      f->text = current;
      f->index_lines();
      std::vector<const SourceFile *> sources{f.get()};
      for (auto &o : others)
        sources.push_back(o.get());
      out = check_package(sources, {f.get()}, fixture_options(dir));
      return f;
    };
    std::vector<Finding> before;
    size_t original_errors = lower_python(*check(text, before))->syntax_errors.size();
    int passes = 0;
    for (; passes < 10; ++passes) {
      std::vector<Finding> findings;
      auto file = check(text, findings);
      std::vector<const Finding *> pointers;
      for (const Finding &f : findings)
        pointers.push_back(&f);
      AppliedFixes applied = apply_fixes(text, pointers, [](const Finding &f) {
        return f.fix->applicability == Applicability::Safe;
      });
      if (applied.text == text)
        break;
      text = applied.text;
    }
    EXPECT_LT(passes, 10) << "fixes did not converge";
    EXPECT_EQ(text, read_file(entry.path())) << "fixed output of " << original.filename();
    // The fixed file parses, keeps no fixable finding, and fixing it again changes nothing.
    std::vector<Finding> after;
    auto fixed = check(text, after);
    EXPECT_LE(lower_python(*fixed)->syntax_errors.size(), original_errors);
    for (const Finding &f : after)
      EXPECT_FALSE(f.fix.has_value())
          << "still fixable after --fix: " << f.code << " line " << f.range.line;
  }
  if (!any) {
    // Every fix has an expected output: a fixture with fixable findings needs its .py.fixed.
    FixturePackage package = load_package(dir);
    for (const Finding &f : check_package(package.sources, package.sources, fixture_options(dir)))
      EXPECT_FALSE(f.fix.has_value()) << f.file->path << ":" << f.range.line << ": " << f.code
                                      << " has a fix but no .py.fixed expects it";
    if (!HasFailure())
      GTEST_SKIP() << "no fixable findings and no .py.fixed in " << dir;
  }
}

std::string fixture_name(const ::testing::TestParamInfo<fs::path> &info) {
  std::string name = fs::relative(info.param, DEVLINT_FIXTURES_DIR).string();
  for (char &c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)))
      c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FixtureTest, ::testing::ValuesIn(fixture_packages()),
                         fixture_name);

// Checked as a directory, a file that is not model code (no torch, no transformers) is not
// reported, yet the model files that import it, relatively or by the package's absolute name as
// a script beside it does (`from plain_base_class.model_interface import Model`), still read its
// definitions: its plain `Model` class makes the harness deriving from it no module.
TEST(FixtureDirectory, ANonModelSiblingStillGivesItsDefinitions) {
  const fs::path dir = fs::path(DEVLINT_FIXTURES_DIR) / "precision" / "plain_base_class";
  CheckResult result = check_paths({dir.string()}, CheckOptions{});
  std::vector<std::string> reported;
  for (const Finding &f : result.findings)
    reported.push_back(fs::path(f.file->path).filename().string() + ":" +
                       std::to_string(f.range.line) + ": " + f.code);
  EXPECT_EQ(reported, std::vector<std::string>{"video_harness.py:30: DL007"});
}

} // namespace
} // namespace devlint
