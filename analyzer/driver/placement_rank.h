// Findings narrowed and ranked by real placements (issue 12). The package's module tree is built
// from its configuration and accelerate's placement simulated; each finding's two operands are
// resolved to the devices they sit on. Without a placement given, balanced maps on 2 to 8 GPUs
// rank it: `error` when one of them separates the operands, `warning` when none does (only a
// hand-made or unusual map would). With --gpus / --max-memory / --device-map, findings whose
// operands share a device under that placement are dropped. Unknown sizes keep today's `error`.
#pragma once

#include <string>
#include <vector>

#include "config/check_options.h"
#include "diagnostics/finding.h"
#include "diagnostics/passed_argument.h"
#include "model/module_model.h"

namespace devlint {

class SimulationMemo; // simulation/simulation_memo.h

// `directory`: where config.json and configuration_*.py are looked for. With `memo`, placements
// simulated before for the same module tree are taken from it. `passed`: what the package's
// forwards hand their submodules (the analysis's), where a split callee receives it.
void place_findings(std::vector<Finding> &findings, const Package &package,
                    const std::string &directory, const PlacementSettings &settings,
                    std::vector<Diagnostic> *diagnostics, SimulationMemo *memo = nullptr,
                    const std::vector<PassedArgument> &passed = {});

} // namespace devlint
