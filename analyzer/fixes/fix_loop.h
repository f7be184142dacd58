// The fix loop behind `--fix` / `--diff`: analyze, apply the allowed fixes in memory, re-analyze
// the fixed text with its whole package, and repeat until a pass changes nothing (as Ruff does).
// Nothing is written here; fixes/fix_files.h writes the result, fixes/unified_diff.h prints it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "driver/check_run.h"

namespace devlint {

// One file whose text the fixes changed.
struct FixedFile {
  std::string path;         // as check_paths read it
  std::string display_path; // for messages and diff headers
  std::string original;     // the text read from disk before any fix
  std::string fixed;
  std::map<std::string, size_t> fixes_by_code; // "DL001" -> fixes applied
  size_t fixes = 0;
};

struct FixLoopSettings {
  bool unsafe_fixes = false; // apply Unsafe fixes too (never DisplayOnly ones)
  int max_passes = 10;
};

struct FixLoopResult {
  CheckResult remaining;        // the analysis of the fixed texts: what --fix leaves
  std::vector<FixedFile> files; // changed files, by display path
  size_t fixes_applied = 0;
  bool converged = true; // false when the pass limit stopped a still-changing fix loop
  // Files whose fixes would have added a syntax error: left as they were (a devlint bug).
  std::vector<std::string> reverted;
};

// Whether `--fix` (with `unsafe_fixes` as given) applies this finding's fix.
bool fix_allowed(const Finding &finding, bool unsafe_fixes);

// Runs the loop over `paths` exactly as check_paths groups them: a directory is one package, so
// each pass re-analyzes a fixed file together with its siblings.
FixLoopResult fix_until_stable(const std::vector<std::string> &paths, const CheckOptions &options,
                               DirectoryOptionsSource *per_directory,
                               const FixLoopSettings &settings);

} // namespace devlint
