// Module classes that Python can never build: their constructor asserts a condition that every
// construction the package shows contradicts.
#pragma once

#include <unordered_set>

#include "model/module_model.h"

namespace devlint {

// A class whose `__init__` (its own or a package base's) asserts `C` at its top level
// (`assert getattr(config, "use_flash", False)`) raises wherever `C` is false; where every
// construction of it in the package is under a guard that says `C` is false (`if not C:`, the
// else branch of `if C:`, `X(config) if not C else Y(config)`), it never exists and nothing of it
// runs. Classes the package also names in any other way (passed as a value, in a dict of classes,
// called as `X.from_config`) or never constructs are not listed: who builds them is not known.
// Conditions are compared as text (condition_text.h).
std::unordered_set<const ModuleClass *> never_built_classes(const Package &package);

} // namespace devlint
