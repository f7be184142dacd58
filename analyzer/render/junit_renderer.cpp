// `junit`: JUnit XML, which most CI systems show as test results: one test suite per file, one
// failing test case per finding, whatever its rank (warnings say so in the text); a run without
// findings is one passing test case. Input diagnostics (invalid syntax, files not checked) fail
// like findings.

#include <algorithm>
#include <map>

#include "model/utf8.h"
#include "render/renderer.h"

namespace devlint {
namespace {

// XML text must be valid UTF-8 (file names need not be): invalid bytes become U+FFFD.
std::string escape_xml(const std::string &raw) {
  std::string text = to_valid_utf8(raw);
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    // U+FFFE and U+FFFF are not XML characters either.
    if (text.compare(i, 2, "\xEF\xBF") == 0 && i + 2 < text.size() &&
        (text[i + 2] == '\xBE' || text[i + 2] == '\xBF')) {
      out += "\xEF\xBF\xBD";
      i += 2;
      continue;
    }
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&apos;";
      break;
    default:
      // XML 1.0 forbids most control characters even when escaped.
      if (static_cast<unsigned char>(c) >= 0x20 || c == '\n' || c == '\t')
        out += c;
    }
  }
  return out;
}

} // namespace

void render_junit(std::ostream &out, const std::vector<Finding> &findings,
                  const RenderOptions &options) {
  // One failing test case per finding and per reported input diagnostic, grouped by file (in
  // path order, as findings arrive).
  struct Case {
    std::string name, type, message, text;
    uint32_t line = 0;
  };
  std::map<std::string, std::vector<Case>> files;
  for (const Diagnostic &d : options.diagnostics) {
    std::string where = d.line ? std::to_string(d.line) + ":" + std::to_string(d.column) : "";
    std::string name = diagnostic_name(d);
    files[d.path].push_back(
        {name + (where.empty() ? "" : " at " + where), name, d.message,
         d.path + (where.empty() ? "" : ":" + where) + ": " + name + ": " + d.message, d.line});
  }
  for (const Finding &f : findings) {
    std::string where = std::to_string(f.range.line) + ":" + std::to_string(f.range.column);
    files[f.file->display_path].push_back(
        {f.code + " (" + f.rule_name + ") at " + where, f.code, f.message,
         f.file->display_path + ":" + where + ": " + f.code + " " +
             (f.level == FindingLevel::Warning ? "(warning) " : "") + f.message +
             (f.placement.empty() ? "" : "\nplacement: " + f.placement),
         f.range.line});
  }
  size_t failures = findings.size() + options.diagnostics.size();
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << "<testsuites name=\"devlint\" tests=\"" << std::max<size_t>(failures, 1)
      << "\" failures=\"" << failures << "\" errors=\"0\">\n";
  if (failures == 0) {
    out << "  <testsuite name=\"devlint\" tests=\"1\" failures=\"0\" errors=\"0\">\n"
        << "    <testcase name=\"No findings\" classname=\"devlint\"/>\n"
        << "  </testsuite>\n</testsuites>\n";
    return;
  }
  for (const auto &[path, cases] : files) {
    std::string file = escape_xml(path);
    out << "  <testsuite name=\"" << file << "\" tests=\"" << cases.size() << "\" failures=\""
        << cases.size() << "\" errors=\"0\">\n";
    for (const Case &c : cases) {
      out << "    <testcase name=\"" << escape_xml(c.name) << "\" classname=\"" << file
          << "\" file=\"" << file << "\"";
      if (c.line)
        out << " line=\"" << c.line << "\"";
      out << ">\n"
          << "      <failure message=\"" << escape_xml(c.message) << "\" type=\""
          << escape_xml(c.type) << "\">" << escape_xml(c.text) << "</failure>\n"
          << "    </testcase>\n";
    }
    out << "  </testsuite>\n";
  }
  out << "</testsuites>\n";
}

} // namespace devlint
