// The fix of a site finding (docs/DEVICE_MODEL.md section 4): move the other operands to the
// anchor's device, or create a fresh tensor there.
#pragma once

#include <optional>
#include <string>

#include "diagnostics/finding.h"
#include "placement/mismatch.h"
#include "placement/site.h"

namespace devlint {

enum class FixStrategy {
  MoveToAnchor,   // b -> b.to(a.device)
  CreateOnAnchor, // torch.zeros(...) -> torch.zeros(..., device=a.device), else MoveToAnchor
  None,
};

// Sets `finding.fix`, or `finding.no_fix_reason` when no safe edit exists.
void attach_site_fix(Finding &finding, FixStrategy strategy, const Site &site, const Mismatch &m);

// The same for a model placed on a literal device and called where code is placed explicitly
// (LibTorch): make each input on that device (or move it), written out (a module has no
// `.device()`).
void attach_model_input_fix(Finding &finding, const Site &site, const Mismatch &m);

} // namespace devlint
