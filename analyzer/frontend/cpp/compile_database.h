// compile_commands.json, read by devlint itself (not by Clang's loader, which reads whatever the
// path names, follows symlinks and expands response files): found beside or above the file
// (stopping at the checkout) or in the `-p` directory, read only if it is a regular file inside
// the checkout (or that directory) and under a size cap, parsed with a depth limit. A database
// that cannot be used is named in a warning, never ignored silently.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "frontend/cpp/compile_flags.h"

namespace devlint {

// Larger databases are refused (LLVM's own is about 20 MB).
inline constexpr uint64_t kMaxCompileDatabaseBytes = 64ull << 20;
// Arrays and objects nest 3 deep in a valid database.
inline constexpr int kMaxCompileDatabaseDepth = 16;

struct CompileCommand {
  std::string directory; // absolute
  std::string file;      // absolute, normalized
  std::vector<std::string> arguments;
};

struct CompileDatabase {
  std::vector<CompileCommand> commands;
  std::unordered_map<std::string, size_t> by_file; // the first command of each file
};

// Parses a database's text; `database_directory` (absolute) resolves relative "directory"
// values. Returns null with `error` filled when the text is not a valid database.
std::unique_ptr<CompileDatabase> parse_compile_database(std::string_view text,
                                                        const std::string &database_directory,
                                                        std::string &error);

// The first command for `file` (absolute, normalized), or null.
const CompileCommand *find_compile_command(const CompileDatabase &database,
                                           const std::string &file);

// Where Clang may open files for one translation unit, and its flags.
struct CompileSetup {
  bool from_database = false;         // else the defaults apply
  std::vector<std::string> arguments; // the filtered flags of the file's entry
  std::string checkout;               // resolved; the root of the project files
  std::vector<std::string> roots;     // resolved directories Clang may read under
  std::vector<std::string> warnings;  // about the database: unusable, refused, dropped flags
};

// The compile setup of `main_file`: its entry in the database of `build_dir` (when given: `-p` or
// the configuration's `compile-database`) or the
// nearest compile_commands.json at or above the file, up to its checkout. `trusted_roots`
// (LibTorch's and the system's include directories, the precompiled header's directory) are
// readable, and so are the include directories of LibTorch a database names.
// A `build_dir` a configuration named (`compile-database`, from `configured_in`) is used only when
// it resolves inside `confined_to`, the configuration's directory: the repository checked wrote
// it. Otherwise a warning names it and the database is looked for above the file.
CompileSetup compile_setup_for(const std::string &main_file, const std::string &build_dir,
                               const std::vector<std::string> &trusted_roots,
                               const std::string &confined_to = "",
                               const std::string &configured_in = "");

} // namespace devlint
