// Configuration files and their resolution (config/): discovery by walking up, precedence,
// the command line on top, and errors that name file, line and key.
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

#include "config/config_resolver.h"
#include "driver/path_patterns.h"

namespace fs = std::filesystem;

namespace devlint {
namespace {

class ConfigTest : public ::testing::Test {
protected:
  void SetUp() override {
    root = fs::temp_directory_path() /
           ("devlint-config-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
            "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root);
    fs::create_directories(root / "pkg" / "sub");
  }
  void TearDown() override { fs::remove_all(root); }
  void write(const fs::path &relative, const std::string &text) {
    std::ofstream(root / relative) << text;
  }
  ConfigError error_for(const fs::path &relative) {
    try {
      load_config_file((root / relative).string());
    } catch (const ConfigError &e) {
      return e;
    }
    ADD_FAILURE() << "no error for " << relative;
    return ConfigError("", 0, "", "");
  }
  std::string dir(const char *relative) { return (root / relative).string(); }
  fs::path root;
};

TEST_F(ConfigTest, NearestConfigWinsWalkingUp) {
  write("pyproject.toml", "[tool.devlint]\nselect = [\"DL001\"]\n");
  write("pkg/sub/pyproject.toml", "[project]\nname = \"x\"\n"); // no [tool.devlint]: skipped
  write("pkg/devlint.toml", "ignore = [\"DL002\"]\nno-split-modules = [\"Block\"]\n");
  ConfigResolver resolver({}, ConfigDiscovery::WalkUp);
  const CheckOptions &top = resolver.options_for(dir(""));
  EXPECT_EQ(top.selection.select, std::vector<std::string>{"DL001"});
  const CheckOptions &sub = resolver.options_for(dir("pkg/sub"));
  EXPECT_TRUE(sub.selection.select.empty());
  EXPECT_EQ(sub.selection.ignore, std::vector<std::string>{"DL002"});
  EXPECT_EQ(sub.overrides.extra_no_split_modules, std::vector<std::string>{"Block"});
  EXPECT_EQ(sub.base_directory, dir("pkg"));
}

TEST_F(ConfigTest, DotFileBeatsPlainBeatsPyproject) {
  write("pkg/pyproject.toml", "[tool.devlint]\nignore = [\"DL001\"]\n");
  write("pkg/devlint.toml", "ignore = [\"DL002\"]\n");
  ConfigResolver plain({}, ConfigDiscovery::WalkUp);
  EXPECT_EQ(plain.options_for(dir("pkg")).selection.ignore, std::vector<std::string>{"DL002"});
  write("pkg/.devlint.toml", "ignore = [\"DL003\"]\n");
  ConfigResolver dot({}, ConfigDiscovery::WalkUp);
  EXPECT_EQ(dot.options_for(dir("pkg")).selection.ignore, std::vector<std::string>{"DL003"});
}

TEST_F(ConfigTest, CommandLineOverlaysTheFile) {
  write("devlint.toml", "select = [\"DL001\"]\nextend-select = [\"DL002\"]\nignore = [\"DL003\"]\n"
                        "report-unused-suppressions = true\n");
  CommandLineSettings cli;
  cli.ignore = {"DL004"};
  cli.extend_select = {"DL005"};
  ConfigResolver resolver(cli, ConfigDiscovery::WalkUp);
  const CheckOptions &o = resolver.options_for(dir("pkg"));
  EXPECT_EQ(o.selection.select, (std::vector<std::string>{"DL001", "DL002", "DL005"}));
  EXPECT_EQ(o.selection.ignore, (std::vector<std::string>{"DL003", "DL004"}));
  EXPECT_TRUE(o.report_unused_suppressions);
  cli.select = std::vector<std::string>{"DL007"};
  ConfigResolver replaced(cli, ConfigDiscovery::WalkUp);
  EXPECT_EQ(replaced.options_for(dir("pkg")).selection.select,
            (std::vector<std::string>{"DL007", "DL005"}));
}

TEST_F(ConfigTest, IsolatedAndExplicit) {
  write("devlint.toml", "ignore = [\"DL001\"]\n");
  write("other.toml", "ignore = [\"DL002\"]\n");
  ConfigResolver isolated({}, ConfigDiscovery::Isolated);
  EXPECT_TRUE(isolated.options_for(dir("pkg")).selection.ignore.empty());
  ConfigResolver explicit_file({}, ConfigDiscovery::ExplicitFile, dir("other.toml"));
  EXPECT_EQ(explicit_file.options_for(dir("pkg")).selection.ignore,
            std::vector<std::string>{"DL002"});
  EXPECT_THROW(ConfigResolver({}, ConfigDiscovery::ExplicitFile, dir("missing.toml")), ConfigError);
}

TEST_F(ConfigTest, UnknownKeyNamesFileLineAndKey) {
  write("pyproject.toml", "[project]\nname = \"x\"\n\n[tool.devlint]\nselect = [\"DL001\"]\n"
                          "selct = [\"DL002\"]\n");
  ConfigError e = error_for("pyproject.toml");
  EXPECT_EQ(e.line, 6u);
  EXPECT_EQ(e.key, "tool.devlint.selct");
  EXPECT_NE(std::string(e.what()).find("pyproject.toml:6: tool.devlint.selct: unknown key"),
            std::string::npos)
      << e.what();
}

TEST_F(ConfigTest, WrongTypesAndUnknownRules) {
  write("devlint.toml", "ignore = \"DL001\"\n");
  EXPECT_EQ(error_for("devlint.toml").key, "ignore");
  write("devlint.toml", "\n\nselect = [\"DL001\",\n  \"XY1\"]\n");
  ConfigError e = error_for("devlint.toml");
  EXPECT_EQ(e.line, 4u);
  EXPECT_NE(std::string(e.what()).find("unknown rule selector `XY1`"), std::string::npos);
  write("devlint.toml", "report-unused-suppressions = \"yes\"\n");
  EXPECT_EQ(error_for("devlint.toml").line, 1u);
  write("devlint.toml", "[per-file-ignores]\n\"tests/*\" = [\"DL9999\"]\n");
  EXPECT_EQ(error_for("devlint.toml").key, "per-file-ignores.tests/*");
}

TEST_F(ConfigTest, SyntaxErrorsHaveALine) {
  write("devlint.toml", "select = [\"DL001\"]\nignore = [\n");
  ConfigError e = error_for("devlint.toml");
  EXPECT_GE(e.line, 2u);
  EXPECT_NE(std::string(e.what()).find("invalid TOML"), std::string::npos);
}

TEST_F(ConfigTest, RuleNamesSelectTheirCode) {
  write("devlint.toml", "ignore = [\"cross-device-concat\"]\n");
  ConfigResolver resolver({}, ConfigDiscovery::WalkUp);
  EXPECT_EQ(resolver.options_for(dir("")).selection.ignore, std::vector<std::string>{"DL001"});
}

// C++: the directory holding compile_commands.json, relative to the configuration (as `-p`),
// confined to the configuration's directory; `-p` on the command line wins.
TEST_F(ConfigTest, CompileDatabaseIsRelativeToTheConfiguration) {
  write("pyproject.toml", "[tool.devlint]\ncompile-database = \"out/release\"\n");
  ConfigResolver resolver({}, ConfigDiscovery::WalkUp);
  const CheckOptions &o = resolver.options_for(dir("pkg"));
  EXPECT_EQ(o.cpp.build_dir, (root / "out/release").string());
  EXPECT_EQ(o.cpp.build_dir_confined_to, root.string());
  EXPECT_EQ(o.cpp.build_dir_source, (root / "pyproject.toml").string());
  CommandLineSettings cli;
  cli.build_dir = "/elsewhere/build";
  ConfigResolver with_p(cli, ConfigDiscovery::WalkUp);
  EXPECT_EQ(with_p.options_for(dir("pkg")).cpp.build_dir, "/elsewhere/build");
  EXPECT_TRUE(with_p.options_for(dir("pkg")).cpp.build_dir_confined_to.empty());
  write("pyproject.toml", "[tool.devlint]\ncompile-database = [\"out\"]\n");
  EXPECT_EQ(error_for("pyproject.toml").key, "tool.devlint.compile-database");
}

TEST(PathPatterns, RuffLikeGlobs) {
  EXPECT_TRUE(glob_matches("modeling_*.py", "/r/a/modeling_x.py", "/r"));
  EXPECT_TRUE(glob_matches("tests", "/r/tests/x.py", "/r"));     // a name anywhere
  EXPECT_TRUE(glob_matches("a/*.py", "/r/a/x.py", "/r"));        // relative to the config
  EXPECT_FALSE(glob_matches("a/*.py", "/r/a/b/x.py", "/r"));     // `*` stays in a component
  EXPECT_TRUE(glob_matches("a/**/x.py", "/r/a/b/c/x.py", "/r")); // `**` crosses them
  EXPECT_TRUE(glob_matches("a/**/x.py", "/r/a/x.py", "/r"));
  EXPECT_TRUE(glob_matches("a/b", "/r/a/b/c/x.py", "/r")); // a directory covers its files
  EXPECT_FALSE(glob_matches("a/*.py", "/other/a/x.py", "/r"));
}

} // namespace
} // namespace devlint
