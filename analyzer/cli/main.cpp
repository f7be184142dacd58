// The devlint command line: `devlint check PATH...` and `devlint rule CODE`.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <unistd.h>

#include "cli/adoption.h"
#include "cli/cli_mistakes.h"
#include "cli/devmap_command.h"
#include "cli/fix_mode.h"
#include "cli/run_progress.h"
#include "config/config_resolver.h"
#include "driver/cache_location.h"
#include "driver/check_run.h"
#include "driver/result_cache.h"
#include "driver/search_paths.h"
#include "model/text.h"
#include "render/renderer.h"
#include "rules/rule.h"
#include "server/lsp_server.h"
#include "simulation/device_map_simulation.h"

namespace {

// Exit codes, as Ruff's: 0 no findings, 1 findings, 2 the run itself failed.
constexpr int kExitClean = 0;
constexpr int kExitFindings = 1;
constexpr int kExitError = 2;

// `--select DL001,DL002 --select DL004`: every code of every value.
std::vector<std::string> codes_of(const std::vector<std::string> &values) {
  std::vector<std::string> out;
  for (const std::string &v : values)
    for (std::string &code : devlint::split_codes(std::string_view(v)))
      out.push_back(std::move(code));
  return out;
}

// Warnings and inputs not checked, on stderr; invalid syntax too where no report shows it
// (--fix-only, --diff, --add-noqa, --show-files), since it fails the run.
void print_diagnostics(const std::vector<devlint::Diagnostic> &diagnostics, bool errors_only,
                       bool report_shows_syntax) {
  for (const devlint::Diagnostic &d : diagnostics) {
    bool syntax = d.severity == devlint::Severity::InvalidSyntax;
    if ((errors_only && d.severity == devlint::Severity::Warning) ||
        (syntax && report_shows_syntax))
      continue;
    // A path or a message may quote a file name or file text: shown, never run on the terminal.
    std::cerr << (d.severity == devlint::Severity::Warning ? "warning"
                  : syntax                                 ? "error: invalid-syntax"
                                                           : "error")
              << ": " << devlint::printable(d.path);
    if (d.line)
      std::cerr << ":" << d.line << ":" << d.column;
    std::cerr << ": " << devlint::printable(d.message) << "\n";
  }
}

int print_rule(const std::string &code, bool all) {
  if (all) {
    // all_rules() is in precedence order; people read the list in code order.
    std::vector<const devlint::Rule *> rules = devlint::all_rules();
    std::sort(rules.begin(), rules.end(), [](const devlint::Rule *a, const devlint::Rule *b) {
      return a->info().code < b->info().code;
    });
    for (const devlint::Rule *r : rules)
      std::cout << r->info().code << "  " << r->info().name << "  " << r->info().summary << "\n";
    return kExitClean;
  }
  const devlint::Rule *rule = devlint::find_rule(code);
  if (!rule) {
    std::cerr << "devlint: error: unknown rule `" << code << "`"
              << devlint::selector_suggestion(code) << " (see `devlint rule --all`)\n";
    return kExitError;
  }
  std::cout << devlint::rule_markdown(rule->info());
  return kExitClean;
}

// The rule docs installed under share/doc/devlint/rules, and what a team hosts for `docs-url`.
int write_rule_docs(const std::string &directory) {
  std::error_code ec;
  std::filesystem::create_directories(directory, ec);
  std::ofstream index(std::filesystem::path(directory) / "index.md");
  index << "# devlint rules\n\n| code | name | summary |\n| --- | --- | --- |\n";
  std::vector<const devlint::Rule *> rules = devlint::all_rules();
  std::sort(rules.begin(), rules.end(), [](const devlint::Rule *a, const devlint::Rule *b) {
    return a->info().code < b->info().code;
  });
  for (const devlint::Rule *rule : rules) {
    const devlint::RuleInfo &info = rule->info();
    std::ofstream doc(std::filesystem::path(directory) / (std::string(info.code) + ".md"));
    doc << devlint::rule_markdown(info);
    index << "| [" << info.code << "](" << info.code << ".md) | " << info.name << " | "
          << info.summary << " |\n";
    if (!doc) {
      std::cerr << "devlint: error: cannot write the rule docs to `" << directory << "`\n";
      return kExitError;
    }
  }
  if (!index) {
    std::cerr << "devlint: error: cannot write the rule docs to `" << directory << "`\n";
    return kExitError;
  }
  return kExitClean;
}

// `devlint clean`, as `ruff clean`: removes the current project's cache entries and says so.
int clean_project_cache(const std::string &cache_dir) {
  std::string directory = devlint::user_cache_directory(cache_dir);
  std::string project = devlint::current_project_root();
  devlint::CleanOutcome outcome = devlint::remove_project_entries(directory, project);
  if (!outcome.error.empty()) {
    std::cerr << "devlint: error: " << outcome.error << "\n";
    return kExitError;
  }
  if (outcome.removed_from.empty())
    std::cerr << "No cache entries for " << devlint::printable(project) << " in "
              << devlint::printable(directory) << ".\n";
  else
    std::cerr << "Removed " << outcome.removed << (outcome.removed == 1 ? " entry" : " entries")
              << " for " << devlint::printable(project) << ": "
              << devlint::printable(outcome.removed_from) << "\n";
  return kExitClean;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"devlint: finds multi-device placement bugs in PyTorch model code"};
  app.require_subcommand(1);
  app.set_version_flag("-V,--version", std::string("devlint ") + DEVLINT_VERSION);

  auto *check = app.add_subcommand("check", "Check PyTorch model code: Python and LibTorch C++");
  std::vector<std::string> paths;
  std::string format = "full";
  bool exit_zero = false;
  std::vector<std::string> select, ignore, extend_select, no_split, skip_keys;
  unsigned jobs = 0;
  std::string color = "auto";
  check->add_option("paths", paths, "Files or directories to check (default: .)");
  check->add_option("--output-format", format, "Output format: " + devlint::output_format_names())
      ->capture_default_str();
  std::string output_file, config_path;
  bool isolated = false, force_exclude = false, report_unused = false;
  check->add_option("-o,--output-file", output_file, "Write the findings to this file");
  check->add_option("--config", config_path, "Use this configuration file for every path");
  check->add_flag("--isolated", isolated,
                  "Ignore all configuration files and the Python environment's search paths");
  std::vector<std::string> search_paths;
  check
      ->add_option("--search-path", search_paths,
                   "Look for absolutely imported modules (base classes) here first (repeatable)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  check->add_flag("--force-exclude", force_exclude,
                  "Apply `exclude` to paths given explicitly too (for pre-commit)");
  check->add_flag("--report-unused-suppressions", report_unused,
                  "Report suppression comments that silence nothing (DL900)");
  check->add_flag("--exit-zero", exit_zero, "Exit with 0 even when findings are reported");
  devlint::PlacementSettings placement;
  std::string min_level = "warning";
  bool no_placement = false;
  check
      ->add_option("--gpus", placement.gpus,
                   "Report only sites whose operands device_map=\"auto\" on N GPUs separates")
      ->check(CLI::Range(1, 1024));
  check->add_option("--max-memory", placement.max_memory,
                    "As --gpus, for accelerate's max_memory (0=20GiB,1=24GiB,cpu=64GiB)");
  check->add_option("--device-map", placement.device_map,
                    "As --gpus, for this map (JSON dict, .json file, FILE.py[:FUNCTION])");
  check->add_option("--model-config", placement.model_config,
                    "The model's config.json for sizes (default: config.json beside the code)");
  check->add_option("--dtype", placement.dtype, "bf16, fp16, fp32... (default: torch_dtype)");
  check->add_option("--min-level", min_level, "Report `error` findings only, or `warning` too")
      ->check(CLI::IsMember({"error", "warning"}))
      ->capture_default_str();
  check->add_flag("--no-placement", no_placement,
                  "Do not rank findings by simulated placements (every finding an error)");
  bool hand_made_maps = false;
  check->add_flag("--hand-made-maps", hand_made_maps,
                  "Also check models that refuse device_map=\"auto\" (a PreTrainedModel without "
                  "_no_split_modules) as hand-written maps split them; reported as warnings");
  check->add_option("--select", select, "Rule codes or prefixes to enable (comma-separated)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  check->add_option("--extend-select", extend_select, "Rule codes to enable in addition")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  check->add_option("--ignore", ignore, "Rule codes or prefixes to disable")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  check
      ->add_option("--no-split-module", no_split,
                   "Treat this class as listed in _no_split_modules (repeatable)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  check
      ->add_option("--skip-key", skip_keys,
                   "Treat this argument as a skip key, like past_key_values (repeatable)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  check->add_option("-j,--jobs", jobs, "Worker threads (default: one per core)");
  devlint::FixFlags fix_flags;
  devlint::add_fix_flags(*check, fix_flags);
  check->add_option("--color", color, "Colorize output: auto, always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  std::string libtorch_dir, build_dir;
  check->add_option("--libtorch", libtorch_dir,
                    "C++: the LibTorch directory whose include/ holds torch/torch.h");
  check->add_option("-p,--build-path", build_dir,
                    "C++: a build directory with compile_commands.json (default: "
                    "`compile-database` in the configuration, else the nearest one above each "
                    "file)");
  devlint::AdoptionFlags adoption;
  devlint::add_adoption_flags(*check, adoption);

  auto *server = app.add_subcommand(
      "server", "Run the Language Server Protocol server on stdio (for editors; see the README)");
  auto *clean = app.add_subcommand("clean", "Remove this project's entries from the result cache");
  std::string clean_cache_dir;
  clean->add_option("--cache-dir", clean_cache_dir, "The cache directory (default as for check)");

  auto *rule = app.add_subcommand("rule", "Explain a rule");
  std::string rule_code;
  bool all_rules = false;
  rule->add_option("code", rule_code, "Rule code (DL001) or name");
  rule->add_flag("--all", all_rules, "List every rule");
  std::string docs_directory;
  rule->add_option("--write-docs", docs_directory,
                   "Write every rule's doc to DIR/<CODE>.md and an index to DIR/index.md");

  devlint::DevmapFlags devmap_flags;
  auto *devmap = devlint::add_devmap_command(app, devmap_flags);

  // CLI11 says "A subcommand is required" for `devlint chek`: name the mistake and the fix.
  if (std::string mistake = devlint::unknown_subcommand_message(app, argc, argv);
      !mistake.empty()) {
    std::cerr << "devlint: error: " << mistake << "\n";
    return kExitError;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    if (std::string mistake = devlint::unknown_option_message(app, argc, argv);
        !mistake.empty() && e.get_exit_code() != 0) {
      std::cerr << "devlint: error: " << mistake << "\n";
      return kExitError;
    }
    int code = app.exit(e);
    return code == 0 ? kExitClean : kExitError;
  }

  if (devmap->parsed())
    return devlint::run_devmap(devmap_flags);

  if (server->parsed()) {
    // std::cin then buffers on its own and can tell the server what input already waits (so that
    // a burst of changes is analyzed once).
    std::ios::sync_with_stdio(false);
    return devlint::run_language_server(std::cin, std::cout);
  }
  if (clean->parsed())
    return clean_project_cache(clean_cache_dir);
  if (rule->parsed()) {
    if (!docs_directory.empty())
      return write_rule_docs(docs_directory);
    if (!all_rules && rule_code.empty()) {
      std::cerr << "devlint: error: give a rule code or --all\n";
      return kExitError;
    }
    return print_rule(rule_code, all_rules);
  }

  auto parsed_format = devlint::parse_output_format(format);
  if (!parsed_format) {
    std::cerr << "devlint: error: " << devlint::unknown_output_format_message(format) << "\n";
    return kExitError;
  }
  devlint::CommandLineSettings cli;
  if (!select.empty())
    cli.select = codes_of(select);
  cli.extend_select = codes_of(extend_select);
  cli.ignore = codes_of(ignore);
  // As in a configuration file: rule names select their codes, and a selector that names no rule
  // is an error rather than a silently empty selection.
  std::vector<std::string> no_select;
  for (std::vector<std::string> *codes :
       {cli.select ? &*cli.select : &no_select, &cli.extend_select, &cli.ignore}) {
    for (std::string &code : *codes) {
      std::string resolved = devlint::resolve_selector(code);
      if (resolved.empty()) {
        std::cerr << "devlint: error: unknown rule selector `" << code << "`"
                  << devlint::selector_suggestion(code) << " (see `devlint rule --all`)\n";
        return kExitError;
      }
      code = resolved;
    }
  }
  if (std::string error = devlint::apply_adoption_settings(adoption, cli); !error.empty()) {
    std::cerr << "devlint: error: " << error << "\n";
    return kExitError;
  }
  cli.no_split_modules = no_split;
  cli.skip_keys = skip_keys;
  cli.jobs = jobs;
  cli.force_exclude = force_exclude;
  placement.enabled = !no_placement;
  if (!placement.max_memory.empty()) {
    try {
      devlint::parse_max_memory(placement.max_memory);
    } catch (const std::invalid_argument &e) {
      std::cerr << "devlint: error: --max-memory: " << e.what() << "\n";
      return kExitError;
    }
  }
  cli.placement = placement;
  cli.hand_made_maps = hand_made_maps;
  cli.libtorch_dir = libtorch_dir;
  cli.build_dir = build_dir;
  // The precompiled LibTorch header is shared by every run (and by the test suite).
  cli.pch_dir =
      devlint::precompiled_header_directory(devlint::user_cache_directory(adoption.cache_dir));
  if (report_unused)
    cli.report_unused_suppressions = true;
  if (isolated && !config_path.empty()) {
    std::cerr << "devlint: error: --config and --isolated exclude each other\n";
    return kExitError;
  }
  for (const std::string &p : search_paths)
    cli.search_paths.push_back(std::filesystem::absolute(p).lexically_normal().generic_string());
  // The active Python environment's site-packages, as type checkers find it: asked once a run,
  // when an import is not found on the other search paths.
  cli.python_environment = !isolated;
  if (paths.empty())
    paths.push_back(".");
  std::string stdin_error;
  devlint::SourceTexts stdin_texts = devlint::read_stdin_paths(paths, adoption, stdin_error);
  if (!stdin_error.empty()) {
    std::cerr << "devlint: error: " << stdin_error << "\n";
    return kExitError;
  }
  if (!stdin_texts.empty() && (adoption.add_noqa || (fix_flags.active() && paths.size() > 1))) {
    std::cerr << "devlint: error: --add-noqa needs files, not stdin; fixes on stdin (`--fix -`) "
                 "take stdin alone\n";
    return kExitError;
  }
  bool human_format = *parsed_format == devlint::OutputFormat::Full ||
                      *parsed_format == devlint::OutputFormat::Concise;
  std::unique_ptr<devlint::ResultCache> cache =
      devlint::open_result_cache(adoption, adoption.silent);
  devlint::RunProgress progress(human_format && !adoption.quiet && !adoption.silent &&
                                    output_file.empty() && isatty(STDOUT_FILENO) &&
                                    isatty(STDERR_FILENO),
                                /*notes=*/!adoption.quiet && !adoption.silent);

  devlint::CheckResult result;
  devlint::RenderOptions render_options;
  devlint::FixModeOutcome fix_outcome;
  try {
    devlint::ConfigResolver resolver(cli,
                                     isolated              ? devlint::ConfigDiscovery::Isolated
                                     : config_path.empty() ? devlint::ConfigDiscovery::WalkUp
                                                           : devlint::ConfigDiscovery::ExplicitFile,
                                     config_path);
    if (adoption.show_settings) {
      devlint::render_settings(std::cout, resolver, paths.front());
      return kExitClean;
    }
    devlint::CheckOptions run_options;
    run_options.jobs = jobs;
    run_options.discover_only = adoption.show_files;
    run_options.on_progress = [&progress](size_t done, size_t total) {
      progress.update(done, total);
    };
    run_options.on_pch_build = [&progress](devlint::PchBuild event, const std::string &path) {
      progress.pch_build(event, path);
    };
    if (const devlint::ConfigFile *config = resolver.config_for_current_directory()) {
      render_options.unsafe_fixes = config->unsafe_fixes.value_or(false);
      render_options.docs_url = config->docs_url.value_or("");
    }
    render_options.unsafe_fixes = fix_flags.unsafe(render_options.unsafe_fixes);
    if (fix_flags.active() && !stdin_texts.empty()) {
      // As Ruff: the fixed text on stdout, what remains on stderr.
      fix_outcome = devlint::fix_stdin(paths, stdin_texts, run_options, &resolver, fix_flags,
                                       render_options.unsafe_fixes);
      print_diagnostics(fix_outcome.result.diagnostics, adoption.silent, false);
      render_options.diagnostics.clear(); // printed just above
      if (fix_flags.reports_findings() && !adoption.silent)
        devlint::render_concise(std::cerr, fix_outcome.result.findings, render_options);
      return devlint::fix_mode_exit_code(fix_outcome, fix_outcome.result, fix_flags, exit_zero);
    }
    if (fix_flags.active()) {
      fix_outcome = devlint::run_fix_mode(paths, run_options, &resolver, fix_flags,
                                          render_options.unsafe_fixes);
      result = std::move(fix_outcome.result);
      render_options.fixed = fix_outcome.fixed;
    } else {
      // Only here: the fix modes re-analyze text that changes from pass to pass (and --diff
      // writes nothing at all).
      devlint::RunCaches caches;
      caches.results = cache.get();
      result = devlint::check_paths(paths, run_options, &resolver,
                                    stdin_texts.empty() ? nullptr : &stdin_texts, caches);
    }
    progress.finish();
  } catch (const devlint::ConfigError &e) {
    std::cerr << "devlint: error: " << e.what() << "\n";
    return kExitError;
  }
  render_options.tool_version = DEVLINT_VERSION;
  bool tty = output_file.empty() && isatty(STDOUT_FILENO) != 0;
  render_options.color =
      color == "always" || (color == "auto" && tty && std::getenv("NO_COLOR") == nullptr);
  print_diagnostics(result.diagnostics, adoption.silent,
                    !adoption.silent && !adoption.show_files && !adoption.add_noqa &&
                        (!fix_flags.active() || fix_flags.reports_findings()));
  if (result.files_checked == 0 && !result.had_error && !adoption.silent)
    std::cerr << "warning: no Python files to check were found under the given paths\n";
  render_options.nothing_checked = result.files_checked == 0;
  render_options.files_not_checked = result.files_not_checked;
  render_options.run_failed = result.had_error || fix_outcome.failed;
  render_options.diagnostics = devlint::reported_diagnostics(result.diagnostics);
  const size_t syntax_errors = devlint::invalid_syntax_count(render_options.diagnostics);
  if (adoption.show_files) {
    devlint::render_files(std::cout, result);
    return result.had_error ? kExitError : kExitClean;
  }
  if (adoption.add_noqa) {
    bool failed = false;
    size_t added = devlint::add_noqa_comments(result.findings, failed);
    if (!adoption.silent)
      std::cerr << "Added " << added << " noqa " << (added == 1 ? "directive" : "directives")
                << ".\n";
    return failed || result.had_error ? kExitError : kExitClean;
  }
  if (fix_flags.active() && !fix_flags.reports_findings())
    return devlint::fix_mode_exit_code(fix_outcome, result, fix_flags, exit_zero);
  std::ofstream file_out;
  if (!output_file.empty()) {
    file_out.open(output_file, std::ios::binary);
    if (!file_out) {
      std::cerr << "devlint: error: cannot write `" << output_file << "`\n";
      return kExitError;
    }
  }
  std::ostream &out = output_file.empty() ? std::cout : file_out;
  if (min_level == "error")
    result.findings.erase(std::remove_if(result.findings.begin(), result.findings.end(),
                                         [](const devlint::Finding &f) {
                                           return f.level == devlint::FindingLevel::Warning;
                                         }),
                          result.findings.end());
  if (adoption.silent) // the exit code tells
    out.flush();
  else if (adoption.statistics)
    devlint::render_statistics(out, result.findings, render_options,
                               *parsed_format == devlint::OutputFormat::Json);
  else if (adoption.quiet && *parsed_format == devlint::OutputFormat::Full)
    devlint::render_full(out, result.findings, render_options);
  else if (adoption.quiet && *parsed_format == devlint::OutputFormat::Concise)
    devlint::render_concise(out, result.findings, render_options);
  else
    devlint::render(*parsed_format, out, result.findings, render_options);
  out.flush();
  if (!out) {
    std::cerr << "devlint: error: writing the findings failed\n";
    return kExitError;
  }
  if (fix_flags.active())
    return devlint::fix_mode_exit_code(fix_outcome, result, fix_flags, exit_zero);
  if (result.had_error)
    return kExitError;
  if ((!result.findings.empty() || syntax_errors) && !exit_zero)
    return kExitFindings;
  return kExitClean;
}
