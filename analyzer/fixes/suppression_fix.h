// The fix of an unused suppression (DL900): remove the directive, and its line when nothing else
// is on it.
#pragma once

#include <cstdint>

#include "diagnostics/finding.h"
#include "model/source_file.h"

namespace devlint {

// Where a suppression directive sits: the directive's text and the whole comment holding it (byte
// offsets), so that removing the directive never leaves the rest of the comment outside one.
struct SuppressionComment {
  SourceRange directive;
  uint32_t comment_begin = 0;
  uint32_t comment_end = 0;
};

Fix suppression_removal_fix(const SourceFile &file, const SuppressionComment &comment);

} // namespace devlint
