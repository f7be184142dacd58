// `github`: GitHub Actions workflow commands, which the runner turns into annotations on the diff:
//   ::error file=F,line=L,col=C,endLine=L2,endColumn=C2,title=DL001 (cross-device-concat)::message
#include <algorithm>
#include <string_view>

#include "model/text.h"
#include "render/renderer.h"

namespace devlint {
namespace {

// GitHub's escaping: data escapes %, \r and \n; property values also `:` and `,`. Each line is
// made printable first (the runner's log is a terminal too, and it runs the escapes it is shown);
// line breaks stay line breaks in the annotation.
std::string escape_data(const std::string &raw) {
  std::string text;
  for (size_t begin = 0; begin <= raw.size();) {
    size_t end = std::min(raw.find('\n', begin), raw.size());
    text += printable(std::string_view(raw).substr(begin, end - begin));
    if (end < raw.size())
      text += '\n';
    begin = end + 1;
  }
  std::string out;
  for (char c : text) {
    if (c == '%')
      out += "%25";
    else if (c == '\r')
      out += "%0D";
    else if (c == '\n')
      out += "%0A";
    else
      out += c;
  }
  return out;
}

std::string escape_property(const std::string &text) {
  std::string out;
  for (char c : escape_data(text)) {
    if (c == ':')
      out += "%3A";
    else if (c == ',')
      out += "%2C";
    else
      out += c;
  }
  return out;
}

} // namespace

void render_github(std::ostream &out, const std::vector<Finding> &findings,
                   const RenderOptions &options) {
  for (const Diagnostic &d : options.diagnostics) {
    std::string where = d.line ? ":" + std::to_string(d.line) + ":" + std::to_string(d.column) : "";
    out << "::error file=" << escape_property(d.path);
    if (d.line)
      out << ",line=" << d.line << ",col=" << d.column;
    out << ",title=" << escape_property(diagnostic_name(d))
        << "::" << escape_data(d.path + where + ": " + diagnostic_name(d) + ": " + d.message)
        << "\n";
  }
  for (const Finding &f : findings) {
    out << (f.level == FindingLevel::Warning ? "::warning" : "::error")
        << " file=" << escape_property(f.file->display_path) << ",line=" << f.range.line
        << ",col=" << f.range.column << ",endLine=" << f.range.end_line
        << ",endColumn=" << f.range.end_column
        << ",title=" << escape_property(f.code + " (" + f.rule_name + ")") << "::"
        << escape_data(f.file->display_path + ":" + std::to_string(f.range.line) + ":" +
                       std::to_string(f.range.column) + ": " + f.code + " " + f.message)
        << (f.placement.empty() ? "" : "%0A" + escape_data("placement: " + f.placement)) << "\n";
  }
}

} // namespace devlint
