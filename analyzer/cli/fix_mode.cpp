#include "cli/fix_mode.h"

#include <iostream>

#include "driver/fix_files.h"
#include "driver/fix_loop.h"
#include "fixes/unified_diff.h"
#include "model/text.h"
#include "render/renderer.h"
#include "rules/rule.h"

namespace devlint {
namespace {

constexpr int kExitClean = 0;
constexpr int kExitFindings = 1;
constexpr int kExitError = 2;

std::string errors(size_t count) {
  return std::to_string(count) + (count == 1 ? " error" : " errors");
}

// Ruff's --show-fixes listing: per file, how many fixes of each rule.
void list_fixes(std::ostream &out, const std::vector<const FixedFile *> &files, size_t total,
                const char *verb) {
  out << verb << " " << errors(total) << ":\n";
  for (const FixedFile *file : files) {
    out << "- " << file->display_path << ":\n";
    for (const auto &[code, count] : file->fixes_by_code) {
      const Rule *rule = find_rule(code);
      out << "    " << count << " x " << code;
      if (rule)
        out << " (" << rule->info().name << ")";
      out << "\n";
    }
  }
}

// A dropped fix is a devlint bug the checks caught: say which rule, and fail the run.
void report_dropped(const FixLoopResult &run) {
  for (const DroppedFix &d : run.dropped)
    std::cerr << "warning: " << d.display_path << ":" << d.line << ": the fix of " << d.code
              << (d.rule_name.empty() ? "" : " (" + d.rule_name + ")")
              << " was not applied: " << d.reason << " (a devlint bug; please report it)\n";
}

} // namespace

void add_fix_flags(CLI::App &check, FixFlags &flags) {
  check.add_flag("--fix", flags.fix, "Apply safe fixes in place, then report what is left");
  check.add_flag("--unsafe-fixes", flags.unsafe_fixes,
                 "Also apply unsafe fixes (and count them as fixable)");
  check.add_flag("--no-unsafe-fixes", flags.no_unsafe_fixes,
                 "Apply and count only safe fixes, whatever the configuration says");
  check.add_flag("--diff", flags.diff,
                 "Print the fixes as a unified diff on stdout; write nothing");
  check.add_flag("--fix-only", flags.fix_only, "Apply fixes and report nothing else");
  check.add_flag("--show-fixes", flags.show_fixes, "List the fixes applied, per file and rule");
  check.add_flag("--exit-non-zero-on-fix", flags.exit_non_zero_on_fix,
                 "Exit with 1 when anything was fixed, even if nothing remains");
}

FixModeOutcome fix_stdin(const std::vector<std::string> &paths, const SourceTexts &texts,
                         const CheckOptions &options, DirectoryOptionsSource *per_directory,
                         const FixFlags &flags, bool unsafe_fixes) {
  FixLoopSettings settings;
  settings.unsafe_fixes = unsafe_fixes;
  AnalyzeTexts analyze = [&](const SourceTexts *fixed, const std::string *) {
    SourceTexts current = texts;
    if (fixed)
      for (const auto &[path, text] : *fixed)
        current[path] = text;
    return check_paths(paths, options, per_directory, &current);
  };
  FixLoopResult run = fix_until_stable(analyze, settings);
  report_dropped(run);
  FixModeOutcome outcome;
  outcome.fixes_dropped = !run.dropped.empty();
  outcome.fixed = run.fixes_applied;
  outcome.changed = !run.files.empty();
  for (const auto &[path, original] : texts) {
    const FixedFile *fixed = nullptr;
    for (const FixedFile &file : run.files)
      if (file.path == path)
        fixed = &file;
    if (flags.diff)
      std::cout << (fixed ? unified_diff(original, fixed->fixed, fixed->display_path) : "");
    else
      std::cout << (fixed ? fixed->fixed : original);
  }
  std::cout.flush();
  outcome.result = std::move(run.remaining);
  return outcome;
}

FixModeOutcome run_fix_mode(const std::vector<std::string> &paths, const CheckOptions &options,
                            DirectoryOptionsSource *per_directory, const FixFlags &flags,
                            bool unsafe_fixes) {
  FixLoopSettings settings;
  settings.unsafe_fixes = unsafe_fixes;
  FixLoopResult run = fix_until_stable(paths, options, per_directory, settings);
  report_dropped(run);

  FixModeOutcome outcome;
  outcome.fixes_dropped = !run.dropped.empty();
  std::vector<const FixedFile *> done;
  for (const FixedFile &file : run.files) {
    if (flags.diff) {
      std::cout << unified_diff(file.original, file.fixed, file.display_path);
      done.push_back(&file);
      continue;
    }
    WriteResult written = write_fixed_file(file.path, file.original, file.fixed);
    switch (written.status) {
    case WriteStatus::Written:
      if (!written.message.empty())
        std::cerr << "note: " << written.message << "\n";
      done.push_back(&file);
      break;
    case WriteStatus::AlreadyFixed: // the same file, reached again through a symlink
      break;
    case WriteStatus::ChangedOnDisk:
    case WriteStatus::ReadOnly:
    case WriteStatus::Failed:
      std::cerr << "error: " << written.message << "\n";
      outcome.failed = true;
      break;
    }
  }
  for (const FixedFile *file : done)
    outcome.fixed += file->fixes;
  outcome.changed = !done.empty();
  std::cout.flush();

  // As Ruff: what was fixed goes with the report on stdout; with --diff stdout is the patch.
  const char *verb = flags.diff ? "Would fix" : "Fixed";
  std::ostream &summary = flags.diff ? std::cerr : std::cout;
  if (flags.show_fixes && outcome.fixed)
    list_fixes(summary, done, outcome.fixed, verb);
  else if (!flags.reports_findings() && outcome.fixed)
    summary << verb << " " << errors(outcome.fixed) << ".\n";

  outcome.result = std::move(run.remaining);
  // The remaining findings were computed on fixed text; where it could not be written, report
  // what is on disk instead.
  if (outcome.failed)
    outcome.result = check_paths(paths, options, per_directory);
  return outcome;
}

int fix_mode_exit_code(const FixModeOutcome &outcome, const CheckResult &reported,
                       const FixFlags &flags, bool exit_zero) {
  if (reported.had_error || outcome.failed || outcome.fixes_dropped)
    return kExitError;
  if (exit_zero)
    return kExitClean;
  if (flags.diff)
    return outcome.changed ? kExitFindings : kExitClean;
  if (flags.exit_non_zero_on_fix && outcome.fixed > 0)
    return kExitFindings;
  if (flags.reports_findings() &&
      (!reported.findings.empty() || invalid_syntax_count(reported.diagnostics) > 0))
    return kExitFindings;
  return kExitClean;
}

} // namespace devlint
