// The fix loop behind `--fix` / `--diff`: analyze, apply the allowed fixes in memory, re-analyze
// the fixed text with its whole package, and repeat until a pass changes nothing (as Ruff does).
// Nothing is written here; driver/fix_files.h writes the result, fixes/unified_diff.h prints it.
#pragma once

#include <functional>
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

// A fix the loop refused to keep (driver/fix_safety.h), and why. Each is a devlint bug.
struct DroppedFix {
  std::string display_path;
  uint32_t line = 0; // of the finding, in the text the fix was tried on
  std::string code;
  std::string rule_name;
  std::string reason; // "it would turn comment into code (line 3)"
};

struct FixLoopResult {
  CheckResult remaining;        // the analysis of the fixed texts: what --fix leaves
  std::vector<FixedFile> files; // changed files, by display path
  size_t fixes_applied = 0;
  bool converged = true; // false when the pass limit stopped a still-changing fix loop
  // Fixes that would break the parse, change bytes or token classes they do not own, add a
  // finding, or not converge: not applied. A file that did not converge is left as it was.
  std::vector<DroppedFix> dropped;
};

// Whether `--fix` (with `unsafe_fixes` as given) applies this finding's fix.
bool fix_allowed(const Finding &finding, bool unsafe_fixes);

// Analyzes the package(s) being fixed, with `texts` (null on the first call) standing in for the
// files they name; with `only`, at least the package holding that file (more is harmless).
using AnalyzeTexts = std::function<CheckResult(const SourceTexts *texts, const std::string *only)>;

// The loop itself: analyze, apply, check every pass (driver/fix_safety.h), re-analyze.
FixLoopResult fix_until_stable(const AnalyzeTexts &analyze, const FixLoopSettings &settings);

// Runs the loop over `paths` exactly as check_paths groups them: a directory is one package, so
// each pass re-analyzes a fixed file together with its siblings.
FixLoopResult fix_until_stable(const std::vector<std::string> &paths, const CheckOptions &options,
                               DirectoryOptionsSource *per_directory,
                               const FixLoopSettings &settings);

} // namespace devlint
