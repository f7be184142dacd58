// The human formats: `full` (Ruff-style code frame with origins and the fix) and `concise`.
// Every text taken from a file, a file name or a cache entry goes through printable(): control
// characters are shown (as Ruff shows them in source lines), never sent to the terminal.
#include <algorithm>

#include "model/text.h"
#include "render/renderer.h"

namespace devlint {
namespace {

struct Palette {
  const char *bold = "", *red = "", *cyan = "", *blue = "", *green = "", *reset = "";
  explicit Palette(bool color) {
    if (color) {
      bold = "\x1b[1m";
      red = "\x1b[31m";
      cyan = "\x1b[36m";
      blue = "\x1b[34m";
      green = "\x1b[32m";
      reset = "\x1b[0m";
    }
  }
};

void header(std::ostream &out, const Finding &f, const RenderOptions &options, const Palette &p) {
  out << p.bold << printable(f.file->display_path) << p.reset << p.cyan << ":" << p.reset
      << f.range.line << p.cyan << ":" << p.reset << f.range.column << p.cyan << ":" << p.reset
      << " " << p.red << p.bold << f.code << p.reset << " ";
  if (f.level == FindingLevel::Warning) // errors stay unmarked, as every finding was before
    out << p.cyan << "(warning) " << p.reset;
  if (fix_available(f, options))
    out << p.cyan << "[*] " << p.reset;
  out << printable(f.summary.empty() ? f.message : f.summary) << "\n";
}

// An input diagnostic, as a finding's first line: `path:line:column: invalid-syntax: message`.
void diagnostic_header(std::ostream &out, const Diagnostic &d, const Palette &p) {
  out << p.bold << printable(d.path) << p.reset << p.cyan << ":" << p.reset;
  if (d.line)
    out << d.line << p.cyan << ":" << p.reset << d.column << p.cyan << ":" << p.reset;
  out << " " << p.red << p.bold << diagnostic_name(d) << p.reset << ": " << printable(d.message)
      << "\n";
}

} // namespace

void render_concise(std::ostream &out, const std::vector<Finding> &findings,
                    const RenderOptions &options) {
  Palette p(options.color);
  for (const Diagnostic &d : options.diagnostics)
    diagnostic_header(out, d, p);
  for (const Finding &f : findings)
    header(out, f, options, p);
}

void render_full(std::ostream &out, const std::vector<Finding> &findings,
                 const RenderOptions &options) {
  Palette p(options.color);
  for (const Diagnostic &d : options.diagnostics) {
    diagnostic_header(out, d, p);
    out << "\n";
  }
  for (const Finding &f : findings) {
    header(out, f, options, p);
    uint32_t first = f.range.line > 1 ? f.range.line - 1 : f.range.line;
    uint32_t last = std::min(f.range.end_line, f.range.line + 3);
    size_t width = std::to_string(last).size();
    std::string pad(width, ' ');
    out << p.blue << pad << " |" << p.reset << "\n";
    for (uint32_t line = first; line <= last && line <= f.file->line_count(); ++line) {
      std::string number = std::to_string(line);
      out << p.blue << std::string(width - number.size(), ' ') << number << " |" << p.reset << " "
          << printable(f.file->line_text(line)) << "\n";
      if (line == f.range.line) {
        uint32_t end_col = f.range.end_line == f.range.line
                               ? f.range.end_column
                               : static_cast<uint32_t>(f.file->line_text(line).size()) + 1;
        uint32_t len = end_col > f.range.column ? end_col - f.range.column : 1;
        out << p.blue << pad << " |" << p.reset << " " << std::string(f.range.column - 1, ' ')
            << p.red << std::string(len, '^') << " " << f.code << p.reset << "\n";
      }
    }
    out << p.blue << pad << " |" << p.reset << "\n";
    for (const RelatedLocation &r : f.origins)
      out << p.blue << pad << " = " << p.reset << p.bold << "origin" << p.reset << ": "
          << printable(r.path) << ":" << r.range.line << ":" << r.range.column << ": "
          << printable(r.message) << "\n";
    if (!f.why.empty())
      out << p.blue << pad << " = " << p.reset << p.bold << "why" << p.reset << ": "
          << printable(f.why) << "\n";
    if (!f.placement.empty())
      out << p.blue << pad << " = " << p.reset << p.bold << "placement" << p.reset << ": "
          << printable(f.placement) << "\n";
    if (f.fix)
      out << p.blue << pad << " = " << p.reset << p.green << "help" << p.reset << ": "
          << printable(f.fix->title)
          << (f.fix->applicability == Applicability::Unsafe ? " (unsafe fix)" : "") << "\n";
    else if (!f.no_fix_reason.empty())
      out << p.blue << pad << " = " << p.reset
          << "note: no automatic fix: " << printable(f.no_fix_reason) << "\n";
    out << "\n";
  }
}

void render_summary(std::ostream &out, const std::vector<Finding> &findings,
                    const RenderOptions &options) {
  size_t syntax_errors = invalid_syntax_count(options.diagnostics);
  if (findings.empty() && options.fixed == 0 && syntax_errors == 0) {
    if (options.files_not_checked)
      out << "No findings in the files checked, but " << options.files_not_checked
          << (options.files_not_checked == 1 ? " file" : " files")
          << " could not be checked (see the errors above).\n";
    else if (options.run_failed)
      out << "No findings in the files checked, but the run failed (see the errors above).\n";
    else if (options.nothing_checked)
      out << "No files were checked.\n";
    else
      out << "All checks passed!\n";
    return;
  }
  size_t fixable = std::count_if(findings.begin(), findings.end(),
                                 [&](const Finding &f) { return fix_available(f, options); });
  size_t remaining = findings.size() + syntax_errors;
  size_t total = remaining + options.fixed;
  out << "Found " << total << (total == 1 ? " error" : " errors");
  if (options.fixed) // as Ruff: "Found 3 errors (2 fixed, 1 remaining)."
    out << " (" << options.fixed << " fixed, " << remaining << " remaining)";
  out << ".\n";
  if (syntax_errors)
    out << syntax_errors << (syntax_errors == 1 ? " of them is" : " of them are")
        << " invalid syntax (devlint checked the parts of those files that parse).\n";
  size_t warnings = std::count_if(findings.begin(), findings.end(), [](const Finding &f) {
    return f.level == FindingLevel::Warning;
  });
  if (warnings) // the summary counts both ranks
    out << findings.size() - warnings << " at level error, " << warnings
        << " at level warning (for the model as configured, no device_map=\"auto\" placement "
           "is known to separate their operands).\n";
  if (fixable)
    out << "[*] " << fixable << " fixable with the `--fix` option.\n";
  if (options.files_not_checked)
    out << options.files_not_checked << (options.files_not_checked == 1 ? " file" : " files")
        << " could not be checked (see the errors above).\n";
}

} // namespace devlint
