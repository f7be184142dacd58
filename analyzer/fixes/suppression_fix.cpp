#include "fixes/suppression_fix.h"

#include <algorithm>

namespace devlint {

// Deletes a directive and the blanks before it; a comment left empty goes with its line. Text
// after the directive in the same comment stays a comment (`# noqa: DL002 (checked)` becomes
// `# (checked)`), never code.
Fix suppression_removal_fix(const SourceFile &file, const SuppressionComment &s) {
  uint32_t begin = s.directive.begin;
  while (begin > 0 && (file.text[begin - 1] == ' ' || file.text[begin - 1] == '\t'))
    --begin;
  uint32_t end = s.directive.end;
  uint32_t line_begin = file.line_starts[s.directive.line - 1];
  uint32_t line_stop = line_begin + static_cast<uint32_t>(file.line_text(s.directive.line).size());
  uint32_t comment_stop = std::max(s.comment_end, end);
  size_t rest = file.text.find_first_not_of(" \t", end);
  bool rest_of_comment_blank = rest == std::string::npos || rest >= comment_stop;
  Fix fix;
  fix.applicability = Applicability::Safe;
  fix.title = "Remove the unused suppression";
  // `/* NOLINT(DL008) */` holding nothing else: the whole comment goes, and its line when it
  // held nothing more.
  bool whole_block = rest != std::string::npos && file.text.compare(rest, 2, "*/") == 0 &&
                     file.text.compare(s.comment_begin, 2, "/*") == 0 &&
                     file.text.find_first_not_of(" \t", s.comment_begin + 2) == s.directive.begin;
  if (whole_block) {
    begin = s.comment_begin;
    while (begin > line_begin && (file.text[begin - 1] == ' ' || file.text[begin - 1] == '\t'))
      --begin;
    end = static_cast<uint32_t>(rest) + 2;
    size_t after = file.text.find_first_not_of(" \t", end);
    if (begin == line_begin && (after == std::string::npos || after >= line_stop))
      end = line_stop + static_cast<uint32_t>(file.text.compare(line_stop, 2, "\r\n") == 0 ? 2
                                              : line_stop < file.text.size()               ? 1
                                                                                           : 0);
    fix.edits.push_back({begin, end, ""});
    return fix;
  }
  if (!rest_of_comment_blank) {
    // Keep the rest as a comment: it already is one when the directive sat after the comment's
    // own marker (`# type: ignore # noqa: DL001`) or the rest starts a comment of its own.
    bool directive_opens_comment = s.directive.begin <= s.comment_begin;
    bool rest_is_comment = file.text[rest] == '#' || file.text.compare(rest, 2, "//") == 0;
    if (!directive_opens_comment || rest_is_comment) {
      fix.edits.push_back({s.directive.begin, static_cast<uint32_t>(rest), ""});
    } else {
      std::string marker = file.text.compare(s.directive.begin, 2, "//") == 0 ? "// " : "# ";
      fix.edits.push_back({s.directive.begin, static_cast<uint32_t>(rest), marker});
    }
    return fix;
  }
  bool rest_blank = rest == std::string::npos || rest >= line_stop;
  if (begin == line_begin && rest_blank) // the directive was the whole line: remove the line
    end = line_stop + static_cast<uint32_t>(file.text.compare(line_stop, 2, "\r\n") == 0 ? 2
                                            : line_stop < file.text.size()               ? 1
                                                                                         : 0);
  else
    end = comment_stop;
  fix.edits.push_back({begin, end, ""});
  return fix;
}

} // namespace devlint
