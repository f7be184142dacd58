#include "model/source_file.h"

#include <algorithm>

#include <cstring>

namespace devlint {

void SourceFile::index_lines() {
  line_starts.clear();
  line_starts.push_back(0);
  // LF, CRLF and a lone CR (classic Mac OS) all end a line, as in Python's tokenizer.
  if (text.find('\r') == std::string::npos) {
    // The common case, LF only: memchr finds the line ends many bytes at a time.
    const char *begin = text.data(), *end = begin + text.size();
    for (const char *at = begin; (at = static_cast<const char *>(std::memchr(at, '\n', end - at)));)
      line_starts.push_back(static_cast<uint32_t>(++at - begin));
    return;
  }
  for (uint32_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' || (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] != '\n')))
      line_starts.push_back(i + 1);
  }
}

void SourceFile::position(uint32_t offset, uint32_t &line, uint32_t &column) const {
  auto it = std::upper_bound(line_starts.begin(), line_starts.end(), offset);
  line = static_cast<uint32_t>(it - line_starts.begin());
  column = line == 0 ? 1 : offset - line_starts[line - 1] + 1;
}

SourceRange SourceFile::range_of(uint32_t begin, uint32_t end) const {
  SourceRange r;
  r.begin = begin;
  r.end = end;
  position(begin, r.line, r.column);
  position(end, r.end_line, r.end_column);
  return r;
}

std::string_view SourceFile::line_text(uint32_t line) const {
  if (line == 0 || line > line_starts.size())
    return {};
  uint32_t begin = line_starts[line - 1];
  uint32_t end = line < line_starts.size() ? line_starts[line] : static_cast<uint32_t>(text.size());
  while (end > begin && (text[end - 1] == '\n' || text[end - 1] == '\r'))
    --end;
  return std::string_view(text).substr(begin, end - begin);
}

} // namespace devlint
