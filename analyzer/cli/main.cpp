// The devlint command line: `devlint check PATH...` and `devlint rule CODE`.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <unistd.h>

#include "cli/devmap_command.h"
#include "cli/fix_mode.h"
#include "config/config_resolver.h"
#include "driver/check_run.h"
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
  devlint::FixFlags fix_flags;
  devlint::add_fix_flags(*check, fix_flags);
  check->add_option("--color", color, "Colorize output: auto, always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));

  auto *rule = app.add_subcommand("rule", "Explain a rule");
  std::string rule_code;
  bool all_rules = false;
  rule->add_option("code", rule_code, "Rule code (DL001) or name");
  rule->add_flag("--all", all_rules, "List every rule");

  devlint::DevmapFlags devmap_flags;
  auto *devmap = devlint::add_devmap_command(app, devmap_flags);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    int code = app.exit(e);
    return code == 0 ? kExitClean : kExitError;
  }

  if (devmap->parsed())
    return devlint::run_devmap(devmap_flags);

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
  devlint::FixModeOutcome fix_outcome;
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
    render_options.unsafe_fixes = fix_flags.unsafe(render_options.unsafe_fixes);
    if (fix_flags.active()) {
      fix_outcome = devlint::run_fix_mode(paths, run_options, &resolver, fix_flags,
                                          render_options.unsafe_fixes);
      result = std::move(fix_outcome.result);
      render_options.fixed = fix_outcome.fixed;
    } else {
      result = devlint::check_paths(paths, run_options, &resolver);
    }
  } catch (const devlint::ConfigError &e) {
    std::cerr << "devlint: error: " << e.what() << "\n";
    return kExitError;
  }
  render_options.tool_version = DEVLINT_VERSION;
  bool tty = output_file.empty() && isatty(STDOUT_FILENO) != 0;
  render_options.color =
      color == "always" || (color == "auto" && tty && std::getenv("NO_COLOR") == nullptr);
  print_diagnostics(result.diagnostics);
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
  if (!result.findings.empty() && !exit_zero)
    return kExitFindings;
  return kExitClean;
}
