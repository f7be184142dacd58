// Applies fixes to text: non-overlapping edits in a deterministic order; overlapping ones wait
// for the next pass, as in Ruff.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "diagnostics/finding.h"

namespace devlint {

struct AppliedFixes {
  std::string text;
  size_t applied = 0;                            // findings whose fix was applied
  size_t skipped = 0;                            // fixes left for a later pass (overlap)
  std::vector<const Finding *> applied_findings; // in text order, for `--show-fixes`
  std::vector<TextEdit> edits;                   // what was applied: sorted, non-overlapping
};

// Applies the fixes of `findings` (all for the same file text) that `allowed` accepts.
AppliedFixes apply_fixes(const std::string &text, const std::vector<const Finding *> &findings,
                         const std::function<bool(const Finding &)> &allowed);

} // namespace devlint
