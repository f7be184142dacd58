// The options of a check and what they are made of. The driver runs with them; the stages below
// config never see them (the site checker and the suppressions take a predicate).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "config/rule_selection.h"
#include "diagnostics/finding.h"
#include "frontend/cpp/cpp_frontend.h"
#include "model/file_input.h"
#include "model/module_model.h"

namespace devlint {

// How simulated placements rank and narrow findings (driver/placement_rank.h).
struct PlacementSettings {
  int gpus = 0;             // --gpus N (0: rank with 2..8)
  std::string max_memory;   // --max-memory 0=20GiB,1=24GiB
  std::string device_map;   // --device-map MAP (JSON, .json, FILE.py[:FUNCTION])
  std::string model_config; // --model-config config.json
  std::string dtype;        // --dtype
  bool enabled = true;      // false: leave findings as the analysis made them
  // Which transformers release places the model (its major version): the installed one
  // (driver/model_setup_version.h), else the newest devlint knows (5). Asked only when a
  // simulation runs, since finding it may ask the Python environment; unset: 5.
  std::function<int()> transformers_major;
  std::function<int()> transformers_minor; // its minor version (unset: that of the newest known)

  bool narrowed() const { return gpus > 0 || !max_memory.empty() || !device_map.empty(); }
};

// A glob and the rules it turns off (`per-file-ignores`).
struct PerFileIgnore {
  std::string pattern;
  std::vector<std::string> codes;
};

// The built-in `exclude`, Ruff's list plus devlint's own (`build`, `__pycache__`, its cache):
// what `exclude` replaces and `extend-exclude` adds to; --show-settings prints it.
const std::vector<std::string> &default_exclude();

// Everything that may differ between packages: the command line, merged with the configuration
// file that governs a directory (config/config_resolver.h).
struct CheckOptions {
  RuleSelection selection;
  PackageOverrides overrides;
  unsigned jobs = 0;                        // 0: one per core
  uint64_t max_file_bytes = kMaxInputBytes; // larger files are not checked (an error)
  std::string base_directory;               // patterns below are relative to it ("": cwd)
  std::vector<std::string> exclude = default_exclude(); // globs of files/directories to skip
  std::vector<std::string> include; // globs; empty: model files (see check_run.cpp)
  bool force_exclude = false;       // apply `exclude` to paths given explicitly too
  std::vector<PerFileIgnore> per_file_ignores;
  bool report_unused_suppressions = false; // DL900
  std::vector<std::string> fixable;        // codes/prefixes whose fixes are offered (empty: all)
  std::vector<std::string> unfixable;      // codes/prefixes whose fixes are withheld
  std::string unfixable_source;            // where `fixable`/`unfixable` was set, for the note
  bool respect_gitignore = true;           // skip what .gitignore files ignore (discovery)
  PlacementSettings placement;             // ranking/narrowing by simulated placements
  CppSettings cpp;                         // LibTorch headers, compile_commands.json, PCH
  // Where absolute imports are looked for, in order (--search-path, then `search-path`), and
  // whether the Python environment's import paths come after them (not with --isolated): base
  // classes from outside the package are read there (driver/search_paths.h).
  std::vector<std::string> search_paths;
  bool search_python_environment = false;
  // Run-wide (read from the options given to check_paths, not per directory): a callback after
  // each package, for progress bars (called under a lock). With `discover_only`, files are found
  // and read but not analyzed (--show-files). The caches a run may use are the driver's
  // (driver/check_run.h, RunCaches).
  std::function<void(size_t files_done, size_t files_total)> on_progress;
  // Told when a C++ file needs the shared precompiled header built first (from a worker thread).
  std::function<void(PchBuild, const std::string &pch_path)> on_pch_build;
  bool discover_only = false;
};

// Resolves the options for the files of one directory (for example from the nearest config
// file). check_paths asks once per package directory, before analysis starts.
class DirectoryOptionsSource {
public:
  virtual ~DirectoryOptionsSource() = default;
  virtual const CheckOptions &options_for(const std::string &directory) = 0;
  // What options_for found and could not read (a pyproject.toml that is a FIFO), once each.
  virtual std::vector<Diagnostic> take_diagnostics() { return {}; }
};

} // namespace devlint
