// How long a line a fix may write (issue 11): the project's Ruff or Black `line-length` when one
// is configured, else the file's own longest line, so a fix never makes a file's style worse.
#pragma once

#include <cstddef>
#include <string_view>

#include "model/source_file.h"

namespace devlint {

// Characters (not bytes) in one line of text.
size_t display_width(std::string_view line);

// The limit for new lines in `file`: `line-length` from the nearest `.ruff.toml`, `ruff.toml` or
// `pyproject.toml` ([tool.ruff], then [tool.black]) above the file, else its longest line (at
// least 88, Ruff's default).
size_t fix_line_limit(const SourceFile &file);

} // namespace devlint
