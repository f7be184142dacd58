// One `devlint check` run: finds the files, groups them into packages (a directory is a package),
// runs frontend -> module model -> placement analysis -> rules on both cores, and collects
// findings and input diagnostics in a deterministic order.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "driver/source_reading.h"
#include "findings/finding.h"
#include "findings/placement_rank.h"
#include "findings/site_checker.h"
#include "frontend/cpp/cpp_frontend.h"
#include "model/module_model.h"

namespace devlint {

class ResultCache;

// A glob and the rules it turns off (`per-file-ignores`).
struct PerFileIgnore {
  std::string pattern;
  std::vector<std::string> codes;
};

// Everything that may differ between packages: the command line, merged with the configuration
// file that governs a directory (config/config_resolver.h).
struct CheckOptions {
  RuleSelection selection;
  PackageOverrides overrides;
  unsigned jobs = 0;                     // 0: one per core
  uint64_t max_file_bytes = 32ull << 20; // larger files are skipped with a warning
  std::string base_directory;            // patterns below are relative to it ("": cwd)
  std::vector<std::string> exclude;      // globs of files/directories to skip
  std::vector<std::string> include;      // globs; empty: model files (see check_run.cpp)
  bool force_exclude = false;            // apply `exclude` to paths given explicitly too
  std::vector<PerFileIgnore> per_file_ignores;
  bool report_unused_suppressions = false; // DL900
  std::vector<std::string> unfixable;      // codes/prefixes whose fixes are withheld
  std::string unfixable_source;            // where `unfixable` was set, for the note
  PlacementSettings placement;             // ranking/narrowing by simulated placements
  CppSettings cpp;                         // LibTorch headers, compile_commands.json, PCH
  // Where absolute imports are looked for, in order (--search-path, `search-path`, the Python
  // environment): base classes from outside the package are read there (driver/search_paths.h).
  std::vector<std::string> search_paths;
  // Run-wide (read from the options given to check_paths, not per directory): the result cache
  // (null: none; a setting that changes findings must also go into its key, result_cache.cpp),
  // and a callback after each package, for progress bars (called under a lock).
  // With `discover_only`, files are found and read but not analyzed (--show-files).
  ResultCache *cache = nullptr;
  std::function<void(size_t files_done, size_t files_total)> on_progress;
  bool discover_only = false;
};

// Resolves the options for the files of one directory (for example from the nearest config
// file). check_paths asks once per package directory, before analysis starts.
class DirectoryOptionsSource {
public:
  virtual ~DirectoryOptionsSource() = default;
  virtual const CheckOptions &options_for(const std::string &directory) = 0;
};

struct CheckResult {
  std::vector<std::unique_ptr<SourceFile>> files; // every file read (findings point into these)
  std::vector<Finding> findings;
  std::vector<Diagnostic> diagnostics;
  size_t files_checked = 0;     // files analyzed (wholly, or where a syntax error allows)
  size_t files_not_checked = 0; // inputs that could not be checked (README: exit code 2)
  bool had_error = false;       // something could not be checked: the run exits with 2
};

// With `per_directory`, each package is checked with the options it returns for its directory;
// `options` then only supplies jobs and max_file_bytes. It may throw (a broken config file).
// Texts that stand in for files on disk, by the path check_paths uses (the fix loop analyzes
// fixed text before anything is written). Files named here are not read from disk.
using SourceTexts = std::unordered_map<std::string, std::string>;

CheckResult check_paths(const std::vector<std::string> &paths, const CheckOptions &options,
                        DirectoryOptionsSource *per_directory = nullptr,
                        const SourceTexts *texts = nullptr);

// Analyzes in-memory sources as one package (used by tests and by the fix loop).
std::vector<Finding> check_package(const std::vector<const SourceFile *> &sources,
                                   const std::vector<const SourceFile *> &reported,
                                   const CheckOptions &options,
                                   std::vector<Diagnostic> *diagnostics = nullptr);

// The order of every report: by path, line, column and code.
void sort_findings(std::vector<Finding> &findings);

// Applies what follows the analysis to the findings of `reported` files: per-file-ignores,
// suppression comments (and DL900), and `unfixable`. Malformed suppressions are reported in
// `diagnostics` when it is given.
std::vector<Finding> filter_findings(std::vector<Finding> findings,
                                     const std::vector<const SourceFile *> &reported,
                                     const CheckOptions &options,
                                     std::vector<Diagnostic> *diagnostics = nullptr);

} // namespace devlint
