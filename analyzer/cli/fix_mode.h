// `devlint check --fix / --unsafe-fixes / --diff / --fix-only / --show-fixes /
// --exit-non-zero-on-fix`, with Ruff's meanings and exit codes. main.cpp only registers the
// flags and hands over when one of the fix modes is on.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "driver/check_run.h"

namespace devlint {

struct FixFlags {
  bool fix = false;
  bool unsafe_fixes = false;
  bool no_unsafe_fixes = false;
  bool diff = false;
  bool fix_only = false;
  bool show_fixes = false;
  bool exit_non_zero_on_fix = false;

  bool active() const { return fix || fix_only || diff; }
  // --fix-only and --diff report no findings, only what was (or would be) fixed.
  bool reports_findings() const { return !fix_only && !diff; }
  // The command line overrides the configuration's `unsafe-fixes`.
  bool unsafe(bool configured) const { return unsafe_fixes || (configured && !no_unsafe_fixes); }
};

void add_fix_flags(CLI::App &check, FixFlags &flags);

struct FixModeOutcome {
  CheckResult result;         // what is left to report (findings of the fixed files)
  size_t fixed = 0;           // fixes applied to files written (or shown as a diff)
  bool changed = false;       // a file was written (or a diff printed)
  bool failed = false;        // a fixed file could not be written
  bool fixes_dropped = false; // the fix loop refused a fix (driver/fix_loop.h): exit 2
};

// Fixes `paths` until stable, then writes the changed files (--fix, --fix-only) or prints their
// unified diff on stdout (--diff), then lists what was fixed (--show-fixes; on stderr with
// --diff). Warnings and errors go to stderr.
FixModeOutcome run_fix_mode(const std::vector<std::string> &paths, const CheckOptions &options,
                            DirectoryOptionsSource *per_directory, const FixFlags &flags,
                            bool unsafe_fixes);

// `--fix -` (also --fix-only, --diff) on stdin, as Ruff: the fixed text of `texts` (stdin, under
// the name in `paths`) goes to stdout, or with --diff its unified diff; nothing is written.
// `outcome.result` holds what remains, for the caller to report on stderr.
FixModeOutcome fix_stdin(const std::vector<std::string> &paths, const SourceTexts &texts,
                         const CheckOptions &options, DirectoryOptionsSource *per_directory,
                         const FixFlags &flags, bool unsafe_fixes);

// Ruff's exit codes: with --fix, 1 while findings remain; with --diff, 1 when there is a diff;
// --exit-non-zero-on-fix makes any fix count as 1; --exit-zero makes all of these 0; 2 when the
// run failed, a file could not be written or a fix was dropped. `reported` is the result the
// findings came from (outcome.result, moved out).
int fix_mode_exit_code(const FixModeOutcome &outcome, const CheckResult &reported,
                       const FixFlags &flags, bool exit_zero);

} // namespace devlint
