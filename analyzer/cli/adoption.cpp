#include "cli/adoption.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <unistd.h>

#include "driver/cache_location.h"
#include "driver/fix_files.h"
#include "driver/result_cache.h"
#include "driver/search_paths.h"
#include "fixes/noqa_edit.h"
#include "model/file_input.h"
#include "model/text.h"
#include "rules/rule.h"

namespace devlint {
namespace fs = std::filesystem;

void add_adoption_flags(CLI::App &check, AdoptionFlags &flags) {
  check.add_option(
      "--cache-dir", flags.cache_dir,
      "Where to keep the cache (default: $DEVLINT_CACHE_DIR, else $XDG_CACHE_HOME/devlint, else "
      "~/.cache/devlint)");
  check.add_flag("-n,--no-cache", flags.no_cache, "Neither read nor write the result cache");
  check.add_flag("--add-noqa", flags.add_noqa,
                 "Add `# noqa: CODE` to every line with a finding, so the next run is clean");
  check.add_flag("--statistics", flags.statistics, "Count the findings per rule");
  check.add_flag("--show-files", flags.show_files, "List the files that would be checked");
  check.add_flag("--show-settings", flags.show_settings,
                 "Print the settings in force for the first path");
  check.add_flag("-q,--quiet", flags.quiet, "Print the findings only, no summary");
  check.add_flag("-s,--silent", flags.silent,
                 "Print nothing but errors; the exit code still tells the result");
  flags.exclude_option =
      check.add_option("--exclude", flags.exclude, "Globs to skip, replacing `exclude`")
          ->delimiter(',')
          ->allow_extra_args(false)
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  check.add_option("--extend-exclude", flags.extend_exclude, "Globs to skip in addition")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  check
      .add_option("--per-file-ignores", flags.per_file_ignores,
                  "GLOB:CODES, rules to ignore in matching files (repeatable)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  flags.fixable_option =
      check
          .add_option("--fixable", flags.fixable,
                      "Rules whose fixes are offered (default: all), replacing `fixable`")
          ->delimiter(',')
          ->allow_extra_args(false)
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  check.add_option("--extend-fixable", flags.extend_fixable, "Rules to make fixable in addition")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  check.add_option("--unfixable", flags.unfixable, "Rules whose fixes are withheld")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  check.add_flag("--respect-gitignore", flags.respect_gitignore,
                 "Skip files that .gitignore files ignore (the default)");
  check.add_flag("--no-respect-gitignore", flags.no_respect_gitignore,
                 "Check files even where .gitignore files ignore them");
  check.add_option("--stdin-filename", flags.stdin_filename,
                   "The name of the file read from stdin (`-`), for settings and reports");
}

namespace {

// Patterns with a `/` are relative to the current directory on the command line; the resolver
// makes them relative to each configuration's directory (config/config_resolver.cpp does not
// know where they came from), so they are made absolute here.
std::string anchored(const std::string &pattern) {
  if (pattern.find('/') == std::string::npos || pattern.front() == '/')
    return pattern;
  return (fs::current_path() / pattern).lexically_normal().string();
}

} // namespace

std::string apply_adoption_settings(const AdoptionFlags &flags, CommandLineSettings &settings) {
  std::string error;
  auto selectors = [&error](const std::vector<std::string> &values, const char *option) {
    std::vector<std::string> codes;
    for (const std::string &code : values) {
      std::string resolved = resolve_selector(code);
      if (resolved.empty() && error.empty())
        error = "unknown rule selector `" + code + "` in " + option + selector_suggestion(code);
      codes.push_back(resolved);
    }
    return codes;
  };
  if (flags.fixable_option && flags.fixable_option->count() > 0)
    settings.fixable = selectors(flags.fixable, "--fixable");
  settings.extend_fixable = selectors(flags.extend_fixable, "--extend-fixable");
  settings.unfixable = selectors(flags.unfixable, "--unfixable");
  if (!error.empty())
    return error;
  if (flags.respect_gitignore && flags.no_respect_gitignore)
    return "--respect-gitignore and --no-respect-gitignore exclude each other";
  if (flags.respect_gitignore || flags.no_respect_gitignore)
    settings.respect_gitignore = flags.respect_gitignore;
  if (flags.exclude_option && flags.exclude_option->count() > 0) {
    settings.exclude.emplace();
    for (const std::string &p : flags.exclude)
      settings.exclude->push_back(anchored(p));
  }
  for (const std::string &p : flags.extend_exclude)
    settings.extend_exclude.push_back(anchored(p));
  for (const std::string &entry : flags.per_file_ignores) {
    size_t colon = entry.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == entry.size())
      return "--per-file-ignores takes GLOB:CODES (`tests/*:DL005,DL007`), not `" + entry + "`";
    PerFileIgnore ignore{anchored(entry.substr(0, colon)), {}};
    std::string codes = entry.substr(colon + 1);
    for (size_t start = 0; start <= codes.size();) {
      size_t comma = codes.find(',', start);
      std::string code = codes.substr(start, comma == std::string::npos ? comma : comma - start);
      if (!code.empty()) {
        std::string resolved = resolve_selector(code);
        if (resolved.empty())
          return "unknown rule selector `" + code + "` in --per-file-ignores" +
                 selector_suggestion(code);
        ignore.codes.push_back(resolved);
      }
      if (comma == std::string::npos)
        break;
      start = comma + 1;
    }
    settings.per_file_ignores.push_back(std::move(ignore));
  }
  return "";
}

std::unique_ptr<ResultCache> open_result_cache(const AdoptionFlags &flags, bool quiet) {
  if (flags.no_cache)
    return nullptr;
  std::string problem;
  std::unique_ptr<ResultCache> cache =
      ResultCache::open(user_cache_directory(flags.cache_dir), current_project_root(), problem);
  if (!cache && !quiet)
    std::cerr << "warning: not using the result cache: " << problem << "\n";
  return cache;
}

SourceTexts read_stdin_paths(std::vector<std::string> &paths, const AdoptionFlags &flags,
                             std::string &error) {
  SourceTexts texts;
  for (std::string &path : paths) {
    if (path != "-")
      continue;
    path = flags.stdin_filename.empty() ? "-" : flags.stdin_filename;
    if (texts.count(path))
      continue;
    std::string why;
    std::optional<std::string> text = read_at_most(STDIN_FILENO, kMaxInputBytes, why);
    if (!text)
      error = "cannot read stdin: " + why;
    texts[path] = text ? std::move(*text) : std::string();
  }
  return texts;
}

void render_statistics(std::ostream &out, const std::vector<Finding> &findings,
                       const RenderOptions &options, bool as_json) {
  struct Count {
    std::string name;
    size_t total = 0, fixable = 0;
  };
  std::map<std::string, Count> counts;
  for (const Finding &f : findings) {
    Count &c = counts[f.code];
    c.name = f.rule_name;
    ++c.total;
    c.fixable += fix_available(f, options);
  }
  std::vector<std::pair<std::string, Count>> rows(counts.begin(), counts.end());
  // Invalid syntax counts as Ruff counts it: a row with no code.
  if (size_t syntax_errors = invalid_syntax_count(options.diagnostics))
    rows.push_back({"", Count{"invalid-syntax", syntax_errors, 0}});
  // Most frequent first, as Ruff; ties in code order.
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto &a, const auto &b) { return a.second.total > b.second.total; });
  if (as_json) {
    nlohmann::json all = nlohmann::json::array();
    for (const auto &[code, c] : rows)
      all.push_back({{"code", code.empty() ? nlohmann::json(nullptr) : nlohmann::json(code)},
                     {"name", c.name},
                     {"count", c.total},
                     {"fixable", c.fixable == c.total},
                     {"fixable_count", c.fixable}});
    out << all.dump(2) << "\n";
    return;
  }
  size_t width = 1;
  for (const auto &[code, c] : rows)
    width = std::max(width, std::to_string(c.total).size());
  size_t total = 0, fixable = 0;
  for (const auto &[code, c] : rows) {
    std::string count = std::to_string(c.total);
    const char *mark = c.fixable == 0 ? "[ ]" : c.fixable == c.total ? "[*]" : "[-]";
    out << std::string(width - count.size(), ' ') << count << "\t" << code << "\t" << mark << " "
        << c.name << "\n";
    total += c.total;
    fixable += c.fixable;
  }
  if (total == 0) { // "All checks passed!" only when something was checked and nothing failed
    render_summary(out, findings, options);
    return;
  }
  out << "Found " << total << (total == 1 ? " error" : " errors") << ".\n";
  if (fixable)
    out << "[*] " << fixable << " fixable with the `--fix` option.\n";
}

void render_files(std::ostream &out, const CheckResult &result) {
  std::set<std::string> paths;
  for (const auto &file : result.files)
    paths.insert(file->display_path);
  for (const std::string &p : paths)
    out << p << "\n";
}

void render_settings(std::ostream &out, ConfigResolver &resolver, const std::string &path) {
  std::error_code ec;
  fs::path directory = fs::is_directory(path, ec) ? fs::path(path) : fs::path(path).parent_path();
  if (directory.empty())
    directory = ".";
  const CheckOptions &o = resolver.options_for(directory.string());
  auto list = [&out](const char *key, const std::vector<std::string> &values) {
    nlohmann::json array = values;
    out << key << " = " << array.dump() << "\n";
  };
  const ConfigFile *config = resolver.config_for(directory.string());
  out << "# Settings for " << path << "\n";
  out << "# configuration file: " << (config ? config->path : "none (defaults)") << "\n";
  out << "base-directory = " << nlohmann::json(o.base_directory).dump() << "\n";
  list("select", o.selection.select.empty() ? std::vector<std::string>{"ALL"} : o.selection.select);
  list("ignore", o.selection.ignore);
  list("exclude", o.exclude);
  list("include", o.include);
  list("no-split-modules", o.overrides.extra_no_split_modules);
  list("skip-keys", o.overrides.extra_skip_keys);
  std::vector<std::string> search_paths = o.search_paths;
  if (o.search_python_environment)
    for (const std::string &p : python_environment_paths_once())
      search_paths.push_back(p);
  list("search-path", search_paths);
  list("fixable", o.fixable.empty() ? std::vector<std::string>{"ALL"} : o.fixable);
  list("unfixable", o.unfixable);
  out << "report-unused-suppressions = " << (o.report_unused_suppressions ? "true" : "false")
      << "\n";
  out << "force-exclude = " << (o.force_exclude ? "true" : "false") << "\n";
  out << "respect-gitignore = " << (o.respect_gitignore ? "true" : "false") << "\n";
  out << "hand-made-maps = " << (o.overrides.hand_made_maps ? "true" : "false") << "\n";
  out << "max-file-bytes = " << o.max_file_bytes << "\n";
  out << "[per-file-ignores]\n";
  for (const PerFileIgnore &entry : o.per_file_ignores) {
    nlohmann::json codes = entry.codes;
    out << nlohmann::json(entry.pattern).dump() << " = " << codes.dump() << "\n";
  }
}

size_t add_noqa_comments(const std::vector<Finding> &findings, bool &failed) {
  // file -> line -> codes to add; the last line of a finding, where its statement usually ends.
  std::map<const SourceFile *, std::map<uint32_t, std::set<std::string>>> wanted;
  for (const Finding &f : findings)
    wanted[f.file][std::max(f.range.line, f.range.end_line)].insert(f.code);
  size_t added = 0;
  for (const auto &[file, lines] : wanted) {
    std::string text = file->text;
    size_t file_added = 0;
    // Back to front, so earlier offsets stay valid.
    for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
      std::string why_not;
      std::optional<TextEdit> edit = noqa_edit(*file, it->first, it->second, why_not);
      if (!edit) {
        std::cerr << "warning: " << printable(file->display_path) << ":" << it->first
                  << ": cannot add a `# noqa` comment here (" << why_not
                  << "); suppress it by hand\n";
        continue;
      }
      text.replace(edit->begin, edit->end - edit->begin, edit->replacement);
      file_added += it->second.size();
    }
    if (!file_added)
      continue;
    WriteResult written = write_fixed_file(file->path, file->text, text);
    if (written.status == WriteStatus::Written || written.status == WriteStatus::AlreadyFixed) {
      added += file_added;
    } else {
      std::cerr << "error: " << written.message << "\n";
      failed = true;
    }
  }
  return added;
}

} // namespace devlint
