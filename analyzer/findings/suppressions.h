// Suppression comments: a finding the user has looked at and accepted stays quiet.
//   Python:  `# noqa`, `# noqa: DL001, DL002`, `# devlint: ignore[DL001]` on a line the finding
//            spans; `# devlint: noqa: DL001` or `# devlint: ignore-file[DL001]` on a line of its
//            own silences the whole file (no codes: every rule).
//   C++:     `// NOLINT(devlint-DL001)`, `// NOLINTNEXTLINE(devlint-cross-device-concat)`,
//            `// NOLINTBEGIN(devlint-DL001)` ... `// NOLINTEND(devlint-DL001)` (the lines between,
//            as clang-tidy), and the `// devlint: ...` forms above.
// Codes may be given as rule codes or rule names. A suppression that silences nothing can be
// reported as DL900 (unused-suppression), with a fix that removes it.
#pragma once

#include <string>
#include <vector>

#include "diagnostics/finding.h"
#include "findings/site_checker.h"

namespace devlint {

struct Suppression {
  enum class Scope { Line, NextLine, File, Range };
  Scope scope = Scope::Line;
  uint32_t line = 0;              // the line it silences (for File: the line it is written on)
  uint32_t end_line = 0;          // Range: the NOLINTEND's line (the file's end if none)
  SourceRange comment;            // the directive's text, for DL900 and its fix
  std::vector<std::string> codes; // empty: every rule
  bool shared_with_other_tools = false; // a bare `# noqa` or `NOLINT` also serves other linters
  bool closes_range = false;            // a NOLINTEND while parsing (never returned)
  // The whole comment holding the directive (byte offsets), so that removing the directive
  // never leaves the rest of the comment outside a comment.
  uint32_t comment_begin = 0;
  uint32_t comment_end = 0;
  std::string malformed; // non-empty: what is wrong; such a directive silences nothing
};

// Every suppression directive in a file; the comment syntax follows the file's extension.
std::vector<Suppression> parse_suppressions(const SourceFile &file);

struct SuppressionPolicy {
  RuleEnabled enabled; // this file's selection (with its per-file-ignores)
  // The same selection without its `select`: DL900 is reported unless it is ignored.
  RuleEnabled not_ignored;
  bool report_unused = false; // add DL900 findings for suppressions that silence nothing
};

// Drops the findings of `file` that `policy.enabled` rejects or that a comment suppresses, and
// adds DL900 findings for unused suppressions when asked. `findings` all belong to `file`.
// Malformed directives are reported as warnings in `diagnostics` when it is given.
std::vector<Finding> apply_suppressions(std::vector<Finding> findings, const SourceFile &file,
                                        const SuppressionPolicy &policy,
                                        std::vector<Diagnostic> *diagnostics = nullptr);

} // namespace devlint
