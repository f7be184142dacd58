// The devlint command line: `devlint check PATH...` and `devlint rule CODE`.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <unistd.h>

#include "config/config_resolver.h"
#include "driver/check_run.h"
#include "fixes/fix_files.h"
#include "render/renderer.h"
#include "rules/rule.h"

namespace {

// Exit codes, as Ruff's: 0 no findings, 1 findings, 2 the run itself failed.
constexpr int kExitClean = 0;
constexpr int kExitFindings = 1;
constexpr int kExitError = 2;

std::vector<std::string> split_codes(const std::vector<std::string> &values) {
  std::vector<std::string> out;
  for (const std::string &v : values) {
    size_t start = 0;
    while (start <= v.size()) {
      size_t comma = v.find(',', start);
      std::string item =
          v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!item.empty())
        out.push_back(item);
      if (comma == std::string::npos)
        break;
      start = comma + 1;
    }
  }
  return out;
}

void print_diagnostics(const std::vector<devlint::Diagnostic> &diagnostics) {
  for (const devlint::Diagnostic &d : diagnostics) {
    std::cerr << (d.severity == devlint::Severity::Error ? "error" : "warning") << ": " << d.path;
    if (d.line)
      std::cerr << ":" << d.line << ":" << d.column;
    std::cerr << ": " << d.message << "\n";
  }
}

// --fix / --fix-only / --diff, with Ruff's exit codes: 1 when findings remain (--fix), when a
// diff is non-empty (--diff), or when anything was fixed (--exit-non-zero-on-fix).
int finish_fix_run(devlint::FixOutcome &outcome, bool diff, bool fix_only, bool show_fixes,
                   bool exit_non_zero_on_fix, bool exit_zero, devlint::OutputFormat format,
                   devlint::RenderOptions render_options) {
  print_diagnostics(outcome.remaining.diagnostics);
  if (!outcome.converged)
    std::cerr << "warning: fixes did not settle after the pass limit; some were not applied\n";
  if (diff) {
    for (const devlint::FixedFile &file : outcome.files)
      std::cout << devlint::unified_diff(file);
    std::cerr << "Would fix " << outcome.fixes_applied
              << (outcome.fixes_applied == 1 ? " error.\n" : " errors.\n");
    if (outcome.remaining.had_error)
      return kExitError;
    return outcome.files.empty() || exit_zero ? kExitClean : kExitFindings;
  }
  bool write_failed = false;
  for (const devlint::FixedFile &file : outcome.files) {
    std::string error = devlint::write_fixed_file(file);
    if (!error.empty()) {
      std::cerr << "error: " << error << "\n";
      write_failed = true;
    }
  }
  if (show_fixes && !outcome.files.empty()) {
    std::cout << "Fixed " << outcome.fixes_applied
              << (outcome.fixes_applied == 1 ? " error:\n" : " errors:\n");
    for (const devlint::FixedFile &file : outcome.files) {
      std::cout << "- " << file.display_path << ":\n";
      for (const auto &[code, count] : file.fixed_codes) {
        const devlint::Rule *rule = devlint::find_rule(code);
        std::cout << "    " << count << " x " << code << " ("
                  << (rule ? std::string(rule->info().name) : code) << ")\n";
      }
    }
  }
  if (fix_only) {
    std::cout << "Fixed " << outcome.fixes_applied
              << (outcome.fixes_applied == 1 ? " error.\n" : " errors.\n");
  } else {
    devlint::render(format, std::cout, outcome.remaining.findings, render_options);
    if (outcome.fixes_applied)
      std::cerr << "Fixed " << outcome.fixes_applied
                << (outcome.fixes_applied == 1 ? " error" : " errors") << ", "
                << outcome.remaining.findings.size() << " remaining.\n";
  }
  if (write_failed || outcome.remaining.had_error)
    return kExitError;
  if (exit_non_zero_on_fix && outcome.fixes_applied > 0)
    return kExitFindings;
  if (!fix_only && !outcome.remaining.findings.empty() && !exit_zero)
    return kExitFindings;
  return kExitClean;
}

int print_rule(const std::string &code, bool all) {
  if (all) {
    for (const devlint::Rule *r : devlint::all_rules())
      std::cout << r->info().code << "  " << r->info().name << "  " << r->info().summary << "\n";
    return kExitClean;
  }
  const devlint::Rule *rule = devlint::find_rule(code);
  if (!rule) {
    std::cerr << "devlint: error: unknown rule `" << code << "` (see `devlint rule --all`)\n";
    return kExitError;
  }
  const auto &info = rule->info();
  std::cout << "# " << info.name << " (" << info.code << ")\n\n"
            << info.summary << "\n\n"
            << info.doc;
  return kExitClean;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"devlint: finds multi-device placement bugs in PyTorch model code"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("devlint ") + DEVLINT_VERSION);

  auto *check = app.add_subcommand("check", "Check Python model files and directories");
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
  check->add_flag("--isolated", isolated, "Ignore all configuration files");
  check->add_flag("--force-exclude", force_exclude,
                  "Apply `exclude` to paths given explicitly too (for pre-commit)");
  check->add_flag("--report-unused-suppressions", report_unused,
                  "Report suppression comments that silence nothing (DL900)");
  check->add_flag("--exit-zero", exit_zero, "Exit with 0 even when findings are reported");
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
  bool fix = false, unsafe_fixes = false, diff = false, fix_only = false, show_fixes = false,
       exit_non_zero_on_fix = false;
  check->add_flag("--fix", fix, "Apply safe fixes in place");
  check->add_flag("--unsafe-fixes", unsafe_fixes, "Also apply (and count) unsafe fixes");
  check->add_flag("--diff", diff, "Print the fixes as a unified diff; write nothing");
  check->add_flag("--fix-only", fix_only, "Apply fixes and report nothing else");
  check->add_flag("--show-fixes", show_fixes, "List the fixes that were applied");
  check->add_flag("--exit-non-zero-on-fix", exit_non_zero_on_fix,
                  "Exit with 1 when a fix was applied, even if nothing remains");
  check->add_option("--color", color, "Colorize output: auto, always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));

  auto *rule = app.add_subcommand("rule", "Explain a rule");
  std::string rule_code;
  bool all_rules = false;
  rule->add_option("code", rule_code, "Rule code (DL001) or name");
  rule->add_flag("--all", all_rules, "List every rule");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    int code = app.exit(e);
    return code == 0 ? kExitClean : kExitError;
  }

  if (rule->parsed()) {
    if (!all_rules && rule_code.empty()) {
      std::cerr << "devlint: error: give a rule code or --all\n";
      return kExitError;
    }
    return print_rule(rule_code, all_rules);
  }

  auto parsed_format = devlint::parse_output_format(format);
  if (!parsed_format) {
    std::cerr << "devlint: error: unknown output format `" << format << "`\n";
    return kExitError;
  }
  devlint::CommandLineSettings cli;
  if (!select.empty())
    cli.select = split_codes(select);
  cli.extend_select = split_codes(extend_select);
  cli.ignore = split_codes(ignore);
  for (const auto &codes :
       {cli.select.value_or(std::vector<std::string>{}), cli.extend_select, cli.ignore})
    for (const std::string &code : codes)
      if (code != "ALL" && code.rfind("DL", 0) != 0) {
        std::cerr << "devlint: error: unknown rule selector `" << code << "`\n";
        return kExitError;
      }
  cli.no_split_modules = no_split;
  cli.skip_keys = skip_keys;
  cli.jobs = jobs;
  cli.force_exclude = force_exclude;
  if (report_unused)
    cli.report_unused_suppressions = true;
  if (isolated && !config_path.empty()) {
    std::cerr << "devlint: error: --config and --isolated exclude each other\n";
    return kExitError;
  }
  if (paths.empty())
    paths.push_back(".");

  devlint::CheckResult result;
  devlint::RenderOptions render_options;
  try {
    devlint::ConfigResolver resolver(cli,
                                     isolated              ? devlint::ConfigDiscovery::Isolated
                                     : config_path.empty() ? devlint::ConfigDiscovery::WalkUp
                                                           : devlint::ConfigDiscovery::ExplicitFile,
                                     config_path);
    devlint::CheckOptions run_options;
    run_options.jobs = jobs;
    if (const devlint::ConfigFile *config = resolver.config_for_current_directory())
      render_options.unsafe_fixes = config->unsafe_fixes.value_or(false);
    render_options.unsafe_fixes |= unsafe_fixes;
    if (fix || fix_only || diff) {
      devlint::FixSettings settings;
      settings.unsafe_fixes = render_options.unsafe_fixes;
      devlint::FixOutcome outcome =
          devlint::fix_until_stable(paths, run_options, &resolver, settings);
      return finish_fix_run(outcome, diff, fix_only, show_fixes, exit_non_zero_on_fix, exit_zero,
                            *parsed_format, render_options);
    }
    result = devlint::check_paths(paths, run_options, &resolver);
  } catch (const devlint::ConfigError &e) {
    std::cerr << "devlint: error: " << e.what() << "\n";
    return kExitError;
  }
  render_options.tool_version = DEVLINT_VERSION;
  bool tty = output_file.empty() && isatty(STDOUT_FILENO) != 0;
  render_options.color =
      color == "always" || (color == "auto" && tty && std::getenv("NO_COLOR") == nullptr);
  for (const devlint::Diagnostic &d : result.diagnostics) {
    std::cerr << (d.severity == devlint::Severity::Error ? "error" : "warning") << ": " << d.path;
    if (d.line)
      std::cerr << ":" << d.line << ":" << d.column;
    std::cerr << ": " << d.message << "\n";
  }
  std::ofstream file_out;
  if (!output_file.empty()) {
    file_out.open(output_file, std::ios::binary);
    if (!file_out) {
      std::cerr << "devlint: error: cannot write `" << output_file << "`\n";
      return kExitError;
    }
  }
  std::ostream &out = output_file.empty() ? std::cout : file_out;
  devlint::render(*parsed_format, out, result.findings, render_options);
  out.flush();
  if (!out) {
    std::cerr << "devlint: error: writing the findings failed\n";
    return kExitError;
  }
  if (result.had_error)
    return kExitError;
  if (!result.findings.empty() && !exit_zero)
    return kExitFindings;
  return kExitClean;
}
