// Renderers print findings; each output format lives in its own file under render/, and
// renderer.cpp picks one. Every format prints findings in the order given (check_paths sorts them
// by path, line, column and code), so output is deterministic.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "diagnostics/finding.h"

namespace devlint {

enum class OutputFormat { Full, Concise, Json, JsonLines, Sarif, Github, Gitlab, Junit };

std::optional<OutputFormat> parse_output_format(const std::string &name);
// "full, concise, json, ..." for help texts and error messages.
std::string output_format_names();

struct RenderOptions {
  bool color = false;
  bool unsafe_fixes = false; // whether unsafe fixes count as available
  std::string tool_version;  // "0.1.0", for SARIF
  std::string source_root;   // absolute directory paths are relative to ("": current)
  size_t fixed = 0;          // with --fix: findings fixed, counted in the text summary
  // What the text summary may claim: "All checks passed!" only when something was checked and
  // nothing failed.
  bool nothing_checked = false;
  size_t files_not_checked = 0;
  bool run_failed = false; // the run exits with 2
  // Where a team hosts the rule docs (`docs-url`): a URL with `{code}` or `{name}` in it, or a
  // base that `/<CODE>.md` is appended to. Empty: no links at all (devlint has no public home).
  std::string docs_url;
  // The input diagnostics every format reports beside the findings (reported_diagnostics).
  std::vector<Diagnostic> diagnostics;
};

// Which input diagnostics the reports show, in a stable order (by path and position): invalid
// syntax and inputs that could not be checked. Warnings stay on stderr. The one place that
// decides; every renderer prints what it returns.
std::vector<Diagnostic> reported_diagnostics(std::vector<Diagnostic> diagnostics);
// A reported diagnostic's name, where a finding has its rule: "invalid-syntax" or "not-checked".
// Neither is a rule code: neither can be selected, ignored or suppressed (as Ruff's syntax errors).
const char *diagnostic_name(const Diagnostic &d);
// How many reported diagnostics are invalid syntax (they count as errors in the summary).
size_t invalid_syntax_count(const std::vector<Diagnostic> &diagnostics);

void render_full(std::ostream &out, const std::vector<Finding> &findings,
                 const RenderOptions &options);
void render_concise(std::ostream &out, const std::vector<Finding> &findings,
                    const RenderOptions &options);
// The closing summary of the text formats ("Found 3 errors.").
void render_summary(std::ostream &out, const std::vector<Finding> &findings,
                    const RenderOptions &options);
void render_json(std::ostream &out, const std::vector<Finding> &findings,
                 const RenderOptions &options);
void render_json_lines(std::ostream &out, const std::vector<Finding> &findings,
                       const RenderOptions &options);
void render_sarif(std::ostream &out, const std::vector<Finding> &findings,
                  const RenderOptions &options);
void render_github(std::ostream &out, const std::vector<Finding> &findings,
                   const RenderOptions &options);
void render_gitlab(std::ostream &out, const std::vector<Finding> &findings,
                   const RenderOptions &options);
void render_junit(std::ostream &out, const std::vector<Finding> &findings,
                  const RenderOptions &options);

void render(OutputFormat format, std::ostream &out, const std::vector<Finding> &findings,
            const RenderOptions &options);

// Shared by renderers: whether the finding's fix would be applied by --fix.
bool fix_available(const Finding &f, const RenderOptions &options);

// Where the rule's documentation lives online (SARIF helpUri, JSON "url"); empty without a
// `docs-url` setting.
std::string rule_doc_url(const std::string &code, const RenderOptions &options);

} // namespace devlint
