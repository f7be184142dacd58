// `junit`: JUnit XML, which most CI systems show as test results: one test suite per file, one
// failing test case per finding, whatever its rank (warnings say so in the text); a run without
// findings is one passing test case.

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

void render_junit(std::ostream &out, const std::vector<Finding> &findings, const RenderOptions &) {
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  size_t tests = findings.empty() ? 1 : findings.size();
  out << "<testsuites name=\"devlint\" tests=\"" << tests << "\" failures=\"" << findings.size()
      << "\" errors=\"0\">\n";
  if (findings.empty()) {
    out << "  <testsuite name=\"devlint\" tests=\"1\" failures=\"0\" errors=\"0\">\n"
        << "    <testcase name=\"No findings\" classname=\"devlint\"/>\n"
        << "  </testsuite>\n</testsuites>\n";
    return;
  }
  // Findings arrive sorted by path, so each file's findings are contiguous.
  size_t i = 0;
  while (i < findings.size()) {
    const std::string &path = findings[i].file->display_path;
    size_t end = i;
    while (end < findings.size() && findings[end].file->display_path == path)
      ++end;
    std::string file = escape_xml(path);
    out << "  <testsuite name=\"" << file << "\" tests=\"" << end - i << "\" failures=\"" << end - i
        << "\" errors=\"0\">\n";
    for (; i < end; ++i) {
      const Finding &f = findings[i];
      std::string where = std::to_string(f.range.line) + ":" + std::to_string(f.range.column);
      out << "    <testcase name=\"" << escape_xml(f.code + " (" + f.rule_name + ") at " + where)
          << "\" classname=\"" << file << "\" file=\"" << file << "\" line=\"" << f.range.line
          << "\">\n"
          << "      <failure message=\"" << escape_xml(f.message) << "\" type=\"" << f.code << "\">"
          << escape_xml(path + ":" + where + ": " + f.code + " " +
                        (f.level == FindingLevel::Warning ? "(warning) " : "") + f.message +
                        (f.placement.empty() ? "" : "\nplacement: " + f.placement))
          << "</failure>\n"
          << "    </testcase>\n";
    }
    out << "  </testsuite>\n";
  }
  out << "</testsuites>\n";
}

} // namespace devlint
