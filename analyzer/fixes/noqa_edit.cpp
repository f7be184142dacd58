#include "fixes/noqa_edit.h"

#include <algorithm>
#include <cctype>

#include "model/python_fragment.h"

namespace devlint {

namespace {

// Where the `#` comment of a line starts outside string literals, or npos.
size_t comment_start(std::string_view line) {
  std::vector<ByteClass> classes = lex_python_fragment(line);
  auto comment = std::find(classes.begin(), classes.end(), ByteClass::Comment);
  return comment == classes.end() ? std::string_view::npos
                                  : static_cast<size_t>(comment - classes.begin());
}

} // namespace

std::optional<TextEdit> noqa_edit(const SourceFile &file, uint32_t line,
                                  const std::set<std::string> &codes, std::string &why_not) {
  if (line == 0 || line > file.line_count() || codes.empty()) {
    why_not = "no such line";
    return std::nullopt;
  }
  std::string_view content = file.line_text(line);
  if (!content.empty() && content.back() == '\r')
    content.remove_suffix(1);
  uint32_t line_start = file.line_starts[line - 1];
  // A line that ends inside a string or continues with a backslash takes no comment.
  size_t quotes = 0;
  for (const char *q : {"\"\"\"", "'''"})
    for (size_t p = content.find(q); p != std::string_view::npos; p = content.find(q, p + 3))
      ++quotes;
  if (quotes % 2 == 1 || (!content.empty() && content.back() == '\\')) {
    why_not = "the line continues a string or a backslash continuation";
    return std::nullopt;
  }
  std::string list;
  for (const std::string &code : codes)
    list += (list.empty() ? "" : ", ") + code;
  size_t comment = comment_start(content);
  std::string_view existing =
      comment == std::string_view::npos ? std::string_view() : content.substr(comment);
  size_t noqa = existing.find("# noqa:");
  if (noqa != std::string_view::npos) {
    // Extend the code list of a `# noqa: X` already there (it ends where its codes end).
    size_t end = noqa + 7;
    while (end < existing.size() &&
           (std::isalnum(static_cast<unsigned char>(existing[end])) || existing[end] == ',' ||
            existing[end] == ' ' || existing[end] == '-' || existing[end] == '_'))
      ++end;
    while (end > noqa + 7 && existing[end - 1] == ' ')
      --end;
    uint32_t at = line_start + static_cast<uint32_t>(comment + end);
    return TextEdit{at, at, ", " + list};
  }
  size_t end = content.size();
  while (end > 0 && (content[end - 1] == ' ' || content[end - 1] == '\t'))
    --end;
  uint32_t at = line_start + static_cast<uint32_t>(end);
  return TextEdit{at, at, "  # noqa: " + list};
}

} // namespace devlint
