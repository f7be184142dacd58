// One `devlint check` run: finds the files, groups them into packages (a directory is a package),
// runs frontend -> module model -> placement analysis -> rules on both cores, and collects
// findings and input diagnostics in a deterministic order.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "config/check_options.h"
#include "diagnostics/finding.h"
#include "driver/source_reading.h"
#include "model/source_file.h"

namespace devlint {

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

class ResultCache;           // driver/result_cache.h
class SessionCache;          // driver/session_cache.h
class ExternalClassResolver; // model/module_model.h
struct SyntaxFile;           // model/syntax.h

// What a run may reuse (null: nothing). `results`: the result cache (a setting that changes
// findings must also go into its key, result_cache.cpp); `session`: what a long-lived process
// keeps between checks (the editor server): parse trees, context files, resolvers and simulated
// placements.
struct RunCaches {
  ResultCache *results = nullptr;
  SessionCache *session = nullptr;
};

CheckResult check_paths(const std::vector<std::string> &paths, const CheckOptions &options,
                        DirectoryOptionsSource *per_directory = nullptr,
                        const SourceTexts *texts = nullptr, RunCaches caches = {});

// The lowered files as check_lowered takes them.
std::vector<const SyntaxFile *>
syntax_pointers(const std::vector<std::unique_ptr<SyntaxFile>> &files);

// Runs module model -> placement analysis -> rules on lowered files, reporting the findings of
// `reported` (through filter_findings); `external_classes` resolve classes of other packages,
// `session` keeps simulated placements between checks.
std::vector<Finding> check_lowered(const std::vector<const SyntaxFile *> &files,
                                   const std::vector<const SourceFile *> &reported,
                                   const CheckOptions &options,
                                   std::vector<Diagnostic> *diagnostics,
                                   ExternalClassResolver *external_classes = nullptr,
                                   SessionCache *session = nullptr);

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
