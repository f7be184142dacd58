// One configuration file: `[tool.devlint]` in pyproject.toml, or the top level of devlint.toml /
// .devlint.toml. Keys follow Ruff's where Ruff has one (select, ignore, per-file-ignores, ...).
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "config/check_options.h"

namespace devlint {

// A configuration problem, located: "pyproject.toml:12: tool.devlint.selct: unknown key".
class ConfigError : public std::runtime_error {
public:
  ConfigError(std::string file, uint32_t line, std::string key, const std::string &problem);
  std::string file;
  uint32_t line;
  std::string key;
};

// Every key is optional. Ruff's 0.2+ layout works too: the same keys under `[tool.devlint.lint]`
// (`[lint]` in devlint.toml), which win over the top level's.: what a file leaves out comes from
// the defaults and the command line.
struct ConfigFile {
  std::string path;
  std::string directory; // globs in the file are relative to it
  std::optional<std::vector<std::string>> select, ignore, extend_select, exclude, include,
      no_split_modules, skip_keys, unfixable, fixable;
  std::vector<std::string> extend_exclude, extend_fixable, extend_unfixable;
  std::vector<PerFileIgnore> per_file_ignores;
  std::optional<bool> unsafe_fixes, report_unused_suppressions;
  std::optional<bool> respect_gitignore; // skip what .gitignore files ignore (default: true)
  std::optional<bool> hand_made_maps;    // also check models only hand-written maps split
  std::optional<std::string> libtorch;   // LibTorch's directory, relative to `directory`
  // C++: the directory holding compile_commands.json, relative to `directory` (as `-p`)
  std::optional<std::string> compile_database;
  std::optional<std::string> docs_url; // where the team hosts the rule docs (links in reports)
  std::optional<std::vector<std::string>> search_path; // directories for absolute imports
};

// Reads a configuration file. Returns nullopt for a pyproject.toml without [tool.devlint].
// Throws ConfigError for a syntax error, an unknown key or a value of the wrong type.
std::optional<ConfigFile> load_config_file(const std::string &path);

// The same for text already read (`path` names the file: its name decides whether the settings
// sit under [tool.devlint], its directory anchors globs; `shown` is the path for messages).
std::optional<ConfigFile> load_config_text(std::string_view text, const std::string &path,
                                           const std::string &shown = {});

// The configuration file in `directory` itself, in Ruff's order of precedence: .devlint.toml,
// devlint.toml, then pyproject.toml if it has [tool.devlint]. A candidate that is there but not
// a regular file (a FIFO, a device, a directory) is skipped with a warning added to `refused`.
std::optional<ConfigFile> config_in_directory(const std::string &directory,
                                              std::vector<Diagnostic> *refused = nullptr);

} // namespace devlint
