// The options for adopting devlint on a large existing codebase and for fast re-runs, as Ruff has
// them: the result cache (--cache-dir, --no-cache), --add-noqa, --statistics, --show-files,
// --show-settings, -q/--quiet, -s/--silent, --exclude/--extend-exclude/--per-file-ignores,
// --stdin-filename (the progress bar for long runs is cli/run_progress.h). main.cpp registers them
// and calls in here.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "config/config_resolver.h"
#include "driver/check_run.h"
#include "render/renderer.h"

namespace devlint {

class ResultCache;

struct AdoptionFlags {
  std::string cache_dir;
  bool no_cache = false;
  bool add_noqa = false;
  bool statistics = false;
  bool show_files = false;
  bool show_settings = false;
  bool quiet = false;
  bool silent = false;
  std::vector<std::string> exclude, extend_exclude, per_file_ignores;
  CLI::Option *exclude_option = nullptr; // --exclude given (possibly to clear the list)
  std::string stdin_filename;
  // --fixable replaces `fixable`; --extend-fixable and --unfixable add (rule selectors).
  std::vector<std::string> fixable, extend_fixable, unfixable;
  CLI::Option *fixable_option = nullptr;
  bool respect_gitignore = false, no_respect_gitignore = false;
};

void add_adoption_flags(CLI::App &check, AdoptionFlags &flags);

// --exclude, --extend-exclude, --per-file-ignores ("GLOB:CODE,CODE"), the fixable options and
// --[no-]respect-gitignore into the command-line
// settings. Returns an error message for a malformed or unknown entry, else "".
std::string apply_adoption_settings(const AdoptionFlags &flags, CommandLineSettings &settings);

// The result cache of the current project (null with --no-cache). A cache directory that cannot
// be made or that other users could write to is not used: a warning says why (unless `quiet`)
// and the run goes on uncached.
std::unique_ptr<ResultCache> open_result_cache(const AdoptionFlags &flags, bool quiet);

// `-` among the paths: reads stdin as the file named by --stdin-filename (default `-`), which is
// then checked in its place, with a file's checks (check_paths refuses a text over the size cap:
// stdin is read up to one byte past it). Returns the texts to pass to check_paths; sets `error`
// when stdin could not be read.
SourceTexts read_stdin_paths(std::vector<std::string> &paths, const AdoptionFlags &flags,
                             std::string &error);

// --statistics: one line per rule (count, code, fixable mark, name), Ruff's layout, or a JSON
// array with `--output-format json`.
void render_statistics(std::ostream &out, const std::vector<Finding> &findings,
                       const RenderOptions &options, bool as_json);

// --show-files: the files a check would analyze, one per line.
void render_files(std::ostream &out, const CheckResult &result);

// --show-settings: the configuration file and the resolved settings for `path`'s directory.
void render_settings(std::ostream &out, ConfigResolver &resolver, const std::string &path);

// --add-noqa: appends `# noqa: CODE` (or adds the code to a `# noqa:` already there) on the last
// line of every finding, so that the next run reports nothing. Returns how many were added;
// `failed` is set when a file could not be written.
size_t add_noqa_comments(const std::vector<Finding> &findings, bool &failed);

} // namespace devlint
