// One `devlint check` run: finds the files, groups them into packages (a directory is a package),
// runs frontend -> module model -> placement analysis -> rules on both cores, and collects
// findings and input diagnostics in a deterministic order.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "findings/finding.h"
#include "findings/site_checker.h"
#include "model/module_model.h"

namespace devlint {

struct CheckOptions {
  RuleSelection selection;
  PackageOverrides overrides;
  unsigned jobs = 0;                     // 0: one per core
  uint64_t max_file_bytes = 32ull << 20; // larger files are skipped with a warning
  std::vector<std::string> exclude;      // path substrings/globs to skip in directories
};

struct CheckResult {
  std::vector<std::unique_ptr<SourceFile>> files; // every file read (findings point into these)
  std::vector<Finding> findings;
  std::vector<Diagnostic> diagnostics;
  size_t files_checked = 0;
  bool had_error = false; // an input could not be read at all
};

CheckResult check_paths(const std::vector<std::string> &paths, const CheckOptions &options);

// Reads one file with the checks every input gets (size, binary, UTF-8). Returns null and fills
// `diagnostic` when the file cannot be analyzed.
std::unique_ptr<SourceFile> read_source_file(const std::string &path, uint64_t max_bytes,
                                             Diagnostic &diagnostic);

// Analyzes in-memory sources as one package (used by tests and by the fix loop).
std::vector<Finding> check_package(const std::vector<const SourceFile *> &sources,
                                   const std::vector<const SourceFile *> &reported,
                                   const CheckOptions &options,
                                   std::vector<Diagnostic> *diagnostics = nullptr);

} // namespace devlint
