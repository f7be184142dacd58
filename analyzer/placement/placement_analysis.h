// The placement analysis: a flow-sensitive abstract interpretation of every method of every
// module class (and of free functions and script code), tracking each tensor's origins and
// reporting every operation whose operands need one device (docs/DEVICE_MODEL.md section 3).
#pragma once

#include "model/module_model.h"
#include "placement/site.h"
#include "placement/unit_placement.h"

namespace devlint {

struct AnalysisLimits {
  int max_inline_depth = 3; // self-method and helper-function calls followed
  size_t max_origins = 8;   // per value; beyond this the value keeps the first ones
};

// Runs the analysis over a package and reports to `sink`. Sites reached through several call
// paths are reported once per path; the sink deduplicates. The analysis does not know the
// placement: the sink decides which operands may sit on different devices.
void analyze_package(const Package &package, SiteSink &sink, const AnalysisLimits &limits = {});

} // namespace devlint
