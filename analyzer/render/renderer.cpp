// Picks the renderer for an output format.
#include "render/renderer.h"

#include <algorithm>
#include <tuple>

#include "rules/rule.h"

namespace devlint {
namespace {

struct FormatName {
  const char *name;
  OutputFormat format;
};

constexpr FormatName kFormats[] = {
    {"full", OutputFormat::Full},     {"concise", OutputFormat::Concise},
    {"json", OutputFormat::Json},     {"json-lines", OutputFormat::JsonLines},
    {"sarif", OutputFormat::Sarif},   {"github", OutputFormat::Github},
    {"gitlab", OutputFormat::Gitlab}, {"junit", OutputFormat::Junit},
};

} // namespace

std::optional<OutputFormat> parse_output_format(const std::string &name) {
  for (const FormatName &f : kFormats)
    if (name == f.name)
      return f.format;
  return std::nullopt;
}

std::string output_format_names() {
  std::string names;
  for (const FormatName &f : kFormats)
    names += (names.empty() ? "" : ", ") + std::string(f.name);
  return names;
}

std::vector<Diagnostic> reported_diagnostics(std::vector<Diagnostic> diagnostics) {
  diagnostics.erase(
      std::remove_if(diagnostics.begin(), diagnostics.end(),
                     [](const Diagnostic &d) { return d.severity == Severity::Warning; }),
      diagnostics.end());
  std::stable_sort(diagnostics.begin(), diagnostics.end(),
                   [](const Diagnostic &a, const Diagnostic &b) {
                     return std::tie(a.path, a.line, a.column) < std::tie(b.path, b.line, b.column);
                   });
  return diagnostics;
}

const char *diagnostic_name(const Diagnostic &d) {
  return d.severity == Severity::InvalidSyntax ? "invalid-syntax" : "not-checked";
}

size_t invalid_syntax_count(const std::vector<Diagnostic> &diagnostics) {
  return static_cast<size_t>(
      std::count_if(diagnostics.begin(), diagnostics.end(),
                    [](const Diagnostic &d) { return d.severity == Severity::InvalidSyntax; }));
}

bool fix_available(const Finding &f, const RenderOptions &options) {
  return f.fix && (f.fix->applicability == Applicability::Safe ||
                   (options.unsafe_fixes && f.fix->applicability == Applicability::Unsafe));
}

std::string rule_doc_url(const std::string &code, const RenderOptions &options) {
  std::string url = options.docs_url;
  if (url.empty())
    return url;
  auto substitute = [&url](const std::string &placeholder, const std::string &value) {
    for (size_t at = url.find(placeholder); at != std::string::npos;
         at = url.find(placeholder, at + value.size()))
      url.replace(at, placeholder.size(), value);
  };
  if (url.find("{code}") == std::string::npos && url.find("{name}") == std::string::npos) {
    if (url.back() != '/')
      url += '/';
    return url + code + ".md";
  }
  const Rule *rule = find_rule(code);
  substitute("{code}", code);
  substitute("{name}", rule ? std::string(rule->info().name) : code);
  return url;
}

void render(OutputFormat format, std::ostream &out, const std::vector<Finding> &findings,
            const RenderOptions &options) {
  switch (format) {
  case OutputFormat::Full:
    render_full(out, findings, options);
    render_summary(out, findings, options);
    break;
  case OutputFormat::Concise:
    render_concise(out, findings, options);
    render_summary(out, findings, options);
    break;
  case OutputFormat::Json:
    render_json(out, findings, options);
    break;
  case OutputFormat::JsonLines:
    render_json_lines(out, findings, options);
    break;
  case OutputFormat::Sarif:
    render_sarif(out, findings, options);
    break;
  case OutputFormat::Github:
    render_github(out, findings, options);
    break;
  case OutputFormat::Gitlab:
    render_gitlab(out, findings, options);
    break;
  case OutputFormat::Junit:
    render_junit(out, findings, options);
    break;
  }
}

} // namespace devlint
