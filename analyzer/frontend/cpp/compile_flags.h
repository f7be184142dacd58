// What of a compile_commands.json entry reaches Clang. A compile database comes with the
// repository, so it is data, not a command line: devlint passes an allow-list of named options
// (docs/CPP_DEVICE_MODEL.md, "Finding the code and its flags") and never runs the database's
// compiler. Options that read other files, write files or reach past Clang's driver are refused;
// anything else off the list is dropped; both are named in one warning.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace devlint {

struct CompileFlags {
  // Passed to Clang, in their order, each in its joined form (`-I/abs/dir`, `-DNAME=1`).
  std::vector<std::string> arguments;
  // Refused (they read or write other files, or reach past the driver), as written, each with
  // the value it takes (`-Xclang -dependency-file`).
  std::vector<std::string> refused;
  // Not on the list (`-march=native`), as written.
  std::vector<std::string> dropped;
  // Include directories outside the places Clang may read (absolute).
  std::vector<std::string> outside;
};

// Whether an include directory (absolute, normalized) may reach Clang.
using IncludeDirectoryCheck = std::function<bool(const std::string &directory)>;

// Filters one compile command (`command[0]` is the compiler, never run) whose working directory
// is `directory` (absolute) and whose own source file is `entry_file` (absolute, normalized; it
// is left out, devlint passes the file itself). Relative include directories are made absolute
// against `directory`; each is kept only if `include_allowed` says so.
CompileFlags filter_compile_flags(const std::vector<std::string> &command,
                                  const std::string &directory, const std::string &entry_file,
                                  const IncludeDirectoryCheck &include_allowed);

// The one warning naming what `flags` refused and dropped; empty when nothing was. Text from the
// database is shown escaped (control characters as \xNN) and shortened.
std::string describe_filtered_flags(const CompileFlags &flags);

// A compile database's "command" string split into arguments as Clang does on POSIX: blanks
// separate, '...' and "..." quote, a backslash escapes the next character (inside "..." only
// before '"', '\\', '$' and '`').
std::vector<std::string> split_command_line(const std::string &command);

// `text` as devlint may print it: control characters and DEL as \xNN, cut to `max_length`
// bytes (at a UTF-8 boundary) with "..." when longer.
std::string printable_text(const std::string &text, size_t max_length = 80);

} // namespace devlint
