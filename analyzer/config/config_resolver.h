// Which settings govern a directory: the nearest configuration file found by walking up from it
// (or the one given with --config, or none with --isolated), overlaid with the command line, as in
// Ruff. Results are cached per directory and per configuration file.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/check_options.h"
#include "config/config_file.h"

namespace devlint {

// The command line's part: applied on top of whichever configuration file is in force.
struct CommandLineSettings {
  std::optional<std::vector<std::string>> select; // replaces the file's `select`
  std::vector<std::string> extend_select, ignore, no_split_modules, skip_keys;
  std::optional<bool> report_unused_suppressions, unsafe_fixes;
  // --fixable replaces the file's `fixable`; --extend-fixable and --unfixable add.
  std::optional<std::vector<std::string>> fixable;
  std::vector<std::string> extend_fixable, unfixable;
  std::optional<bool> respect_gitignore; // --respect-gitignore / --no-respect-gitignore
  bool hand_made_maps = false;           // --hand-made-maps
  // --exclude replaces the file's `exclude`; --extend-exclude and --per-file-ignores add. Their
  // globs are absolute where they contain a `/` (relative to where devlint was started).
  std::optional<std::vector<std::string>> exclude;
  std::vector<std::string> extend_exclude;
  std::vector<PerFileIgnore> per_file_ignores;
  bool force_exclude = false;
  unsigned jobs = 0;
  PlacementSettings placement; // --gpus, --max-memory, --device-map, --model-config, --dtype
  std::string libtorch_dir;    // --libtorch
  std::string build_dir;       // -p
  std::string pch_dir;         // where the precompiled LibTorch header is cached
  std::vector<std::string> search_paths; // --search-path, searched first
  bool python_environment = false;       // then the Python environment's (not with --isolated)
};

enum class ConfigDiscovery {
  WalkUp,       // the default: nearest config file above each checked file
  ExplicitFile, // --config FILE: that file for every path
  Isolated,     // --isolated: no configuration file at all
};

class ConfigResolver final : public DirectoryOptionsSource {
public:
  // With ExplicitFile, loads `config_path` at once (throws ConfigError).
  ConfigResolver(CommandLineSettings command_line, ConfigDiscovery discovery,
                 const std::string &config_path = {});

  // Throws ConfigError when a configuration file on the way is invalid.
  const CheckOptions &options_for(const std::string &directory) override;
  std::vector<Diagnostic> take_diagnostics() override;

  // The configuration in force for the current directory (for run-wide settings such as
  // unsafe-fixes), or null.
  const ConfigFile *config_for_current_directory();
  // The configuration in force for `directory`, or null (for --show-settings).
  const ConfigFile *config_for(const std::string &directory);

private:
  const ConfigFile *nearest_config(const std::string &absolute_directory);
  const CheckOptions &options_from(const ConfigFile *config);

  CommandLineSettings command_line_;
  ConfigDiscovery discovery_;
  std::optional<ConfigFile> explicit_config_;
  std::map<std::string, std::unique_ptr<ConfigFile>> loaded_;           // directory -> its own
  std::map<std::string, const ConfigFile *> nearest_;                   // directory -> in force
  std::map<const ConfigFile *, std::unique_ptr<CheckOptions>> options_; // config -> options
  std::vector<Diagnostic> refused_; // candidates that were not regular files
};

} // namespace devlint
