// What a module's method hands a submodule's forward, kept for the placement ranking: a split
// module has no hook, so an argument it receives is where the expression its caller passed put
// it (docs/DEVICE_MODEL.md section 2).
#pragma once

#include <string>
#include <vector>

#include "diagnostics/finding.h"

namespace devlint {

struct PassedArgument {
  std::string caller_class; // the class whose forward makes the call
  std::string child;        // the callee as the caller names it: "reading_order", a list "layers"
  std::string parameter;    // the callee forward's parameter it binds
  // What made the value in the caller's frame. Empty: not known (a `**kwargs` that may pass
  // it, a value the analysis did not follow, an argument of a method other than forward).
  std::vector<OperandOrigin> origins;
};

} // namespace devlint
