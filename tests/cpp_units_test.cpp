// C++ translation units in a run (driver/cpp_units.h): each unit is a task of its own, so the
// units of one directory run in parallel, and a header several units include is reported by the
// first of them in the run's order, whichever thread finished first.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "driver/cpp_units.h"

using namespace devlint;
namespace fs = std::filesystem;

namespace {

std::unique_ptr<SourceFile> file(const std::string &path) {
  auto f = std::make_unique<SourceFile>();
  f->language = Language::Cpp;
  f->path = path;
  f->display_path = path;
  return f;
}

Finding finding_in(const SourceFile *f, std::string code) {
  Finding out;
  out.code = std::move(code);
  out.file = f;
  return out;
}

// A unit whose main file and header each have one finding, and a diagnostic about the header.
CppUnitResult unit_with_header(const SourceFile *main, const std::string &header_path) {
  CppUnitResult unit;
  unit.headers.push_back(file(header_path));
  unit.findings.push_back(finding_in(main, "DL001"));
  unit.findings.push_back(finding_in(unit.headers[0].get(), "DL005"));
  unit.diagnostics.push_back({Severity::Warning, header_path, 1, 1, "about the header"});
  unit.diagnostics.push_back({Severity::Warning, main->display_path, 1, 1, "about the file"});
  return unit;
}

} // namespace

TEST(CppUnits, EachTranslationUnitIsATaskOfItsOwnAndRunsFirst) {
  fs::path dir = fs::temp_directory_path() / "devlint-cpp-units-plan";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "big.py") << std::string(4000, '#');
  std::ofstream(dir / "a.cpp") << "int a;\n";
  std::ofstream(dir / "b.cpp") << "int b;\n";
  std::vector<std::string> python{(dir / "big.py").string()};
  std::vector<std::string> mixed{(dir / "a.cpp").string(), (dir / "b.cpp").string(),
                                 (dir / "big.py").string()};
  std::vector<CheckTask> tasks = plan_check_tasks({&python, &mixed});
  ASSERT_EQ(tasks.size(), 4u);
  // The two units of one directory are two tasks, before the Python packages.
  EXPECT_EQ(tasks[0].package, 1u);
  EXPECT_EQ(tasks[0].path, 0u);
  EXPECT_EQ(tasks[1].package, 1u);
  EXPECT_EQ(tasks[1].path, 1u);
  EXPECT_EQ(tasks[2].path, kPythonFiles);
  EXPECT_EQ(tasks[3].path, kPythonFiles);
  fs::remove_all(dir);
}

TEST(CppUnits, AHeaderIsReportedByTheFirstUnitThatIncludesIt) {
  auto a = file("a.cpp"), b = file("b.cpp");
  CppUnitResult first = unit_with_header(a.get(), "net.h");
  CppUnitResult second = unit_with_header(b.get(), "net.h");
  HeaderClaims claims;
  claims.resolve(first);
  claims.resolve(second);
  EXPECT_EQ(first.headers.size(), 1u);
  EXPECT_EQ(first.findings.size(), 2u);
  EXPECT_EQ(first.diagnostics.size(), 2u);
  // The second unit keeps its own file's finding and diagnostic, nothing of the header.
  EXPECT_TRUE(second.headers.empty());
  ASSERT_EQ(second.findings.size(), 1u);
  EXPECT_EQ(second.findings[0].file, b.get());
  ASSERT_EQ(second.diagnostics.size(), 1u);
  EXPECT_EQ(second.diagnostics[0].path, "b.cpp");
}
