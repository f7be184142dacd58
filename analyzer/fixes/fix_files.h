// Auto-patch mode: applies fixes to files until nothing changes, then writes them safely or
// prints them as a unified diff (Ruff's --fix / --diff).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "driver/check_run.h"

namespace devlint {

struct FixedFile {
  std::string path;         // as check_paths uses it
  std::string display_path; // for messages and diff headers
  std::string original;     // the text read from disk
  std::string fixed;
  std::map<std::string, size_t> fixed_codes; // rule code -> fixes applied
};

struct FixOutcome {
  CheckResult remaining; // the last analysis, of the fixed texts
  std::vector<FixedFile> files;
  size_t fixes_applied = 0;
  bool converged = true; // false if the pass limit was hit
};

struct FixSettings {
  bool unsafe_fixes = false;
  int max_passes = 10;
};

// Analyzes, applies the allowed fixes in memory, re-analyzes the fixed text, and repeats until a
// pass changes nothing. Nothing is written.
FixOutcome fix_until_stable(const std::vector<std::string> &paths, const CheckOptions &options,
                            DirectoryOptionsSource *per_directory, const FixSettings &settings);

// `--- a/path` / `+++ b/path` unified diff with three lines of context, for `git apply` and
// `patch -p1` run from the current directory. Empty when nothing changed.
std::string unified_diff(const FixedFile &file);

// Writes `file.fixed` over `file.path`: atomically (temporary file in the same directory, then
// rename), keeping the mode bits; a symlink is followed and its target rewritten. Refuses when
// the file on disk no longer holds `file.original`, or is not writable. Returns an error
// message, empty on success.
std::string write_fixed_file(const FixedFile &file);

} // namespace devlint
