// Where an argument of a split module comes from: followed up the chain of callers while each
// passes down its own argument unchanged (docs/DEVICE_MODEL.md section 2: a split module has no
// hook, so what it is handed arrives where the caller had it).
#pragma once

#include <optional>
#include <string>

#include "model/module_model.h"
#include "simulation/module_tree.h"

namespace devlint {

struct PassedDownArgument {
  std::string module_path; // the highest module that received it as an argument ("" = root)
  std::string parameter;   // its name there
};

// `parameter` of the forward of the module at `module_path` in `root`'s tree, followed to the
// highest caller that has it as its own forward's argument: every call of each module on the way
// passes the caller's argument of one name, never reassigned in the calling method. Nullopt when
// a module on the way is not a class of the package or is called in a way not read here.
std::optional<PassedDownArgument> passed_down_argument(const ModuleNode *root,
                                                       const std::string &module_path,
                                                       const std::string &parameter);

} // namespace devlint
