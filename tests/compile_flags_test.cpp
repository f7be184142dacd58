// The compile database as data (frontend/cpp/compile_flags.h, compile_database.h): the allow-list
// of what reaches Clang, what is refused and dropped, the parser's limits, and the rules for
// reading the database file (regular files inside the project, a size cap, no silent failure).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "frontend/cpp/compile_database.h"
#include "frontend/cpp/compile_flags.h"

namespace fs = std::filesystem;

namespace devlint {
namespace {

using Args = std::vector<std::string>;

// Include directories are allowed under /proj only.
CompileFlags filter(Args args) {
  args.insert(args.begin(), "/usr/bin/c++");
  args.push_back("-c");
  args.push_back("src/a.cpp");
  return filter_compile_flags(args, "/proj/build", "/proj/build/src/a.cpp",
                              [](const std::string &dir) { return dir.rfind("/proj/", 0) == 0; });
}

TEST(CompileFlags, PassesTheAllowList) {
  CompileFlags f = filter({"-std=c++17",
                           "--std=gnu++20",
                           "-I/proj/include",
                           "-I",
                           "../third",
                           "-isystem",
                           "/proj/sys",
                           "-isystem/proj/sys2",
                           "-iquote",
                           "q",
                           "-idirafter/proj/after",
                           "--include-directory=/proj/inc",
                           "-DNDEBUG",
                           "-D",
                           "WIDTH=4",
                           "-UFOO",
                           "-U",
                           "BAR",
                           "-fno-exceptions",
                           "-frtti",
                           "-ftemplate-depth=900",
                           "-fopenmp"});
  EXPECT_EQ(f.arguments,
            (Args{"-std=c++17", "-std=gnu++20", "-I/proj/include", "-I/proj/third",
                  "-isystem/proj/sys", "-isystem/proj/sys2", "-iquote/proj/build/q",
                  "-idirafter/proj/after", "-I/proj/inc", "-DNDEBUG", "-DWIDTH=4", "-UFOO", "-UBAR",
                  "-fno-exceptions", "-frtti", "-ftemplate-depth=900", "-fopenmp"}));
  EXPECT_TRUE(f.refused.empty());
  EXPECT_TRUE(f.dropped.empty());
  EXPECT_TRUE(f.outside.empty());
  EXPECT_EQ(describe_filtered_flags(f), "");
}

TEST(CompileFlags, OrdinaryBuildFlagsAreIgnoredWithoutAWord) {
  CompileFlags f = filter({"-O2", "-g", "-fPIC", "-Wall", "-Wextra", "-Wno-unused-parameter",
                           "-Werror=return-type", "-pthread", "-o", "a.o", "-x", "c++",
                           "--driver-mode=g++", "-fdiagnostics-color=always"});
  EXPECT_TRUE(f.arguments.empty());
  EXPECT_EQ(describe_filtered_flags(f), "");
}

TEST(CompileFlags, RefusesWhatReadsOrWritesOtherFiles) {
  // Each with the value it takes, so the value is never read as an option of its own.
  for (const Args &attack : std::vector<Args>{
           {"-Xclang", "-dependency-file"},
           {"-Xclang", "-diagnostic-log-file"},
           {"-Xclang", "-header-include-file"},
           {"-Xclang", "-load"},
           {"-Xpreprocessor", "-MT"},
           {"-mllvm", "-stats"},
           {"-Wp,-MT,touch /tmp/x;#"},
           {"-Wl,-rpath,/x"},
           {"@/etc/shadow"},
           {"-include", "/etc/shadow"},
           {"-imacros", "/etc/shadow"},
           {"-include-pch", "/tmp/x.pch"},
           {"-ivfsoverlay", "/tmp/overlay.yaml"},
           {"-fmodule-map-file=/tmp/m"},
           {"-fsanitize-ignorelist=/etc/shadow"},
           {"-fsanitize-blacklist=/etc/shadow"},
           {"-fprofile-list=/etc/shadow"},
           {"-stats-file=/tmp/x"},
           {"-fplugin=/tmp/p.so"},
           {"-fpass-plugin=/tmp/p.so"},
           {"-load", "/tmp/p.so"},
           {"-MD"},
           {"-MMD"},
           {"-MF", "/tmp/x.d"},
           {"-MT", "payload"},
           {"-MQ", "payload"},
           {"-dependency-file", "/tmp/x"},
           {"--serialize-diagnostics", "/tmp/x"},
           {"-diagnostic-log-file", "/tmp/x"},
           {"-header-include-file", "/tmp/x"},
           {"-save-temps"},
           {"-save-temps=obj"},
           {"--config", "/tmp/cfg"},
           {"-B/tmp/bin"},
           {"--sysroot=/"},
           {"-isysroot", "/"},
           {"-ftime-trace"},
       }) {
    CompileFlags f = filter(attack);
    std::string shown = attack.front() + (attack.size() > 1 ? " " + attack[1] : "");
    EXPECT_TRUE(f.arguments.empty()) << shown;
    EXPECT_EQ(f.refused, Args{shown}) << shown;
    EXPECT_NE(describe_filtered_flags(f).find("refused " + shown), std::string::npos) << shown;
  }
}

TEST(CompileFlags, DropsEverythingElseByNameNotByPrefix) {
  CompileFlags f = filter({"-march=native", "-fsanitize=address", "-target", "aarch64-linux-gnu",
                           "-nostdinc++", "-fexceptions-extra", "-Wpedantic,x", "-std=c++17;x",
                           "-DBAD\nLINE", "-D", "1BAD", "other.cpp", "-"});
  EXPECT_TRUE(f.arguments.empty());
  EXPECT_EQ(f.dropped, (Args{"-march=native", "-fsanitize=address", "-target aarch64-linux-gnu",
                             "-nostdinc++", "-fexceptions-extra", "-Wpedantic,x", "-std=c++17;x",
                             "-DBAD\nLINE", "-D 1BAD", "other.cpp", "-"}));
  EXPECT_TRUE(f.refused.empty());
  std::string described = describe_filtered_flags(f);
  EXPECT_NE(described.find("dropped -march=native, -fsanitize=address"), std::string::npos);
  EXPECT_NE(described.find("-DBAD\\x0aLINE"), std::string::npos);
  EXPECT_NE(described.find("and 3 more"), std::string::npos);
}

TEST(CompileFlags, IncludeDirectoriesOutsideTheAllowedPlacesAreDropped) {
  CompileFlags f =
      filter({"-I/etc", "-isystem", "/home/user/.ssh", "-I", "../../etc", "-iquote/proj/../etc"});
  EXPECT_TRUE(f.arguments.empty());
  EXPECT_EQ(f.outside, (Args{"/etc", "/home/user/.ssh", "/etc", "/etc"}));
  EXPECT_NE(describe_filtered_flags(f).find("dropped the include directories /etc"),
            std::string::npos);
}

TEST(CompileFlags, DescriptionsEscapeControlCharactersAndStayShort) {
  CompileFlags f = filter({"-Xclang", "\x1b]0;owned\x07" + std::string(200, 'a')});
  std::string described = describe_filtered_flags(f);
  EXPECT_EQ(described.find('\x1b'), std::string::npos);
  EXPECT_NE(described.find("\\x1b]0;owned\\x07"), std::string::npos);
  EXPECT_LT(described.size(), 200u);
}

TEST(CompileFlags, SplitsCommandStringsAsClangDoes) {
  EXPECT_EQ(split_command_line(R"(c++ -DA="x y" '-DB=a b' -DC=a\ b "-DD=\"q\"" -c  f.cpp)"),
            (Args{"c++", "-DA=x y", "-DB=a b", "-DC=a b", "-DD=\"q\"", "-c", "f.cpp"}));
  EXPECT_EQ(split_command_line("  "), Args{});
  EXPECT_EQ(split_command_line("a 'unterminated"), (Args{"a", "unterminated"}));
}

TEST(CompileDatabase, ParsesArgumentsAndCommands) {
  std::string error;
  auto db = parse_compile_database(
      R"([{"directory": "build", "file": "../src/a.cpp", "arguments": ["c++", "-DA", "-c", "../src/a.cpp"]},
          {"directory": "/p", "file": "/p/b.cpp", "command": "c++ -DB -c b.cpp"},
          {"directory": "/p", "file": "/p/b.cpp", "command": "c++ -DSECOND -c b.cpp"}])",
      "/proj", error);
  ASSERT_TRUE(db) << error;
  const CompileCommand *a = find_compile_command(*db, "/proj/src/a.cpp");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->directory, "/proj/build");
  EXPECT_EQ(a->arguments[1], "-DA");
  const CompileCommand *b = find_compile_command(*db, "/p/b.cpp");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->arguments[1], "-DB"); // the first entry of a file
  EXPECT_FALSE(find_compile_command(*db, "/p/c.cpp"));
}

TEST(CompileDatabase, MalformedDatabasesSayWhy) {
  for (const auto &[text, why] : std::vector<std::pair<std::string, std::string>>{
           {"[{", "not JSON (at byte"},
           {"{}", "not a JSON array"},
           {"[1]", "entry 1 is not an object"},
           {R"([{"file": "a.cpp", "arguments": []}])", "entry 1 has no \"directory\""},
           {R"([{"directory": "/", "file": "a.cpp"}])", "neither \"arguments\" nor"},
           {R"([{"directory": "/", "file": "a.cpp", "arguments": [1]}])", "not a string"},
           {std::string(100000, '[') + std::string(100000, ']'), "nested more than 16 levels"},
       }) {
    std::string error;
    EXPECT_FALSE(parse_compile_database(text, "/", error)) << why;
    EXPECT_NE(error.find(why), std::string::npos) << error;
  }
}

class CompileSetupTest : public ::testing::Test {
protected:
  void SetUp() override {
    root = fs::temp_directory_path() /
           ("devlint-compile-setup-" +
            std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root);
    fs::create_directories(root / "repo" / ".git");
    fs::create_directories(root / "repo" / "src");
    std::ofstream(root / "repo" / "src" / "a.cpp") << "int a;\n";
  }
  void TearDown() override { fs::remove_all(root); }
  void database(const std::string &flags) {
    std::ofstream(root / "repo" / "compile_commands.json")
        << R"([{"directory": ")" << (root / "repo").string() << R"(", "file": "src/a.cpp", )"
        << R"("arguments": ["c++", )" << flags << R"(, "-c", "src/a.cpp"]}])";
  }
  CompileSetup setup() { return compile_setup_for((root / "repo/src/a.cpp").string(), "", {}); }
  fs::path root;
};

TEST_F(CompileSetupTest, FindsTheDatabaseAboveTheFileAndFiltersIt) {
  database(R"("-DA", "-Xclang", "-load")");
  CompileSetup s = setup();
  EXPECT_TRUE(s.from_database);
  EXPECT_EQ(s.arguments, Args{"-DA"});
  EXPECT_EQ(s.checkout, fs::canonical(root / "repo").string());
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_NE(s.warnings[0].find("refused -Xclang -load"), std::string::npos);
}

// As clangd: an ancestor's `build/compile_commands.json` is found without `-p build`.
TEST_F(CompileSetupTest, FindsTheDatabaseInAnAncestorsBuildDirectory) {
  fs::create_directories(root / "repo" / "build");
  std::ofstream(root / "repo" / "build" / "compile_commands.json")
      << R"([{"directory": ")" << (root / "repo" / "build").string()
      << R"(", "file": "../src/a.cpp", "arguments": ["c++", "-DIN_BUILD", "-c", "../src/a.cpp"]}])";
  CompileSetup s = setup();
  EXPECT_TRUE(s.from_database);
  EXPECT_EQ(s.arguments, Args{"-DIN_BUILD"});
  EXPECT_EQ(s.checkout, fs::canonical(root / "repo").string());
  // Without a checkout, the directory whose build/ holds it is the project.
  fs::remove_all(root / "repo" / ".git");
  s = setup();
  EXPECT_TRUE(s.from_database);
  EXPECT_EQ(s.checkout, fs::canonical(root / "repo").string());
}

// `compile-database` in a configuration: the repository named it, so it is used only inside the
// configuration's directory, with the same checks as `-p` (a database symlinked out is refused).
TEST_F(CompileSetupTest, AConfiguredDatabaseStaysInsideTheConfigurationsDirectory) {
  fs::create_directories(root / "repo" / "out");
  std::ofstream(root / "repo" / "out" / "compile_commands.json")
      << R"([{"directory": ")" << (root / "repo" / "out").string()
      << R"(", "file": "../src/a.cpp", "arguments": ["c++", "-DCONFIGURED", "-c", "../src/a.cpp"]}])";
  std::string config = (root / "repo" / "devlint.toml").string();
  std::string file = (root / "repo/src/a.cpp").string();
  CompileSetup inside = compile_setup_for(file, (root / "repo" / "out").string(), {},
                                          (root / "repo").string(), config);
  EXPECT_TRUE(inside.from_database);
  EXPECT_EQ(inside.arguments, Args{"-DCONFIGURED"});
  EXPECT_TRUE(inside.warnings.empty());
  // Outside it (`compile-database = "../../elsewhere"`): named in a warning, not read.
  fs::create_directories(root / "elsewhere");
  fs::copy_file(root / "repo" / "out" / "compile_commands.json",
                root / "elsewhere" / "compile_commands.json");
  CompileSetup outside =
      compile_setup_for(file, (root / "elsewhere").string(), {}, (root / "repo").string(), config);
  EXPECT_FALSE(outside.from_database);
  ASSERT_EQ(outside.warnings.size(), 1u);
  EXPECT_NE(outside.warnings[0].find("compile-database in"), std::string::npos);
  EXPECT_NE(outside.warnings[0].find("outside the configuration's directory"), std::string::npos);
  EXPECT_TRUE(std::none_of(outside.roots.begin(), outside.roots.end(), [&](const std::string &r) {
    return r == fs::canonical(root / "elsewhere").string();
  }));
  // Inside, but its database a symlink leaving the project: refused as with -p.
  fs::remove(root / "repo" / "out" / "compile_commands.json");
  fs::create_symlink(root / "elsewhere" / "compile_commands.json",
                     root / "repo" / "out" / "compile_commands.json");
  CompileSetup linked = compile_setup_for(file, (root / "repo" / "out").string(), {},
                                          (root / "repo").string(), config);
  EXPECT_FALSE(linked.from_database);
  ASSERT_EQ(linked.warnings.size(), 1u);
  EXPECT_NE(linked.warnings[0].find("a symlink leaving the project"), std::string::npos);
}

TEST_F(CompileSetupTest, TheSearchStopsAtTheCheckout) {
  std::ofstream(root / "compile_commands.json")
      << R"([{"directory": "/", "file": ")" << (root / "repo/src/a.cpp").string()
      << R"(", "arguments": ["c++", "-DABOVE"]}])";
  CompileSetup s = setup();
  EXPECT_FALSE(s.from_database);
  EXPECT_TRUE(s.warnings.empty());
}

TEST_F(CompileSetupTest, AMalformedDatabaseIsNamed) {
  std::ofstream(root / "repo" / "compile_commands.json") << "[{\"directory\": ";
  CompileSetup s = setup();
  EXPECT_FALSE(s.from_database);
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_NE(s.warnings[0].find("compile_commands.json"), std::string::npos);
  EXPECT_NE(s.warnings[0].find("not valid: not JSON"), std::string::npos);
  EXPECT_NE(s.warnings[0].find("default flags"), std::string::npos);
}

TEST_F(CompileSetupTest, OnlyARegularFileInsideTheProjectIsRead) {
  ASSERT_EQ(::mkfifo((root / "repo" / "compile_commands.json").c_str(), 0600), 0);
  CompileSetup fifo = setup();
  ASSERT_EQ(fifo.warnings.size(), 1u);
  EXPECT_NE(fifo.warnings[0].find("a FIFO, not a regular file"), std::string::npos);

  fs::remove(root / "repo" / "compile_commands.json");
  std::ofstream(root / "outside.json") << "[]";
  fs::create_symlink(root / "outside.json", root / "repo" / "compile_commands.json");
  CompileSetup link = setup();
  ASSERT_EQ(link.warnings.size(), 1u);
  EXPECT_NE(link.warnings[0].find("a symlink leaving the project"), std::string::npos);

  fs::remove(root / "repo" / "compile_commands.json");
  fs::create_directories(root / "repo" / "build");
  database(R"("-DINSIDE")");
  fs::rename(root / "repo" / "compile_commands.json",
             root / "repo" / "build" / "compile_commands.json");
  fs::create_symlink("build/compile_commands.json", root / "repo" / "compile_commands.json");
  CompileSetup inside = setup();
  EXPECT_TRUE(inside.warnings.empty());
  EXPECT_EQ(inside.arguments, Args{"-DINSIDE"});
}

TEST_F(CompileSetupTest, TheDatabaseIsSizeCapped) {
  fs::resize_file(root / "repo" / "src" / "a.cpp", 0);
  std::ofstream(root / "repo" / "compile_commands.json");
  fs::resize_file(root / "repo" / "compile_commands.json", kMaxCompileDatabaseBytes + 1);
  CompileSetup s = setup();
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_NE(s.warnings[0].find("over the limit"), std::string::npos);
}

} // namespace
} // namespace devlint
