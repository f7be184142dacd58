// Suppressing a finding with a `# noqa` comment, as --add-noqa and the editor's quick fix do.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "diagnostics/finding.h"
#include "model/source_file.h"

namespace devlint {

// The edit that suppresses `codes` on `line` (1-based) of `file`: `  # noqa: CODES` at the end of
// the line, or the codes added to a `# noqa:` there. Null, with `why_not`, on a line that ends
// inside a string or with a backslash continuation. Shared by --add-noqa and the editor server.
std::optional<TextEdit> noqa_edit(const SourceFile &file, uint32_t line,
                                  const std::set<std::string> &codes, std::string &why_not);

} // namespace devlint
