// Which rules a run reports: `select` and `ignore` as in Ruff (codes or prefixes, "ALL").
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace devlint {

struct RuleSelection {
  // Empty: every rule. Codes or prefixes ("DL00", "DL0") as in Ruff's select/ignore.
  std::vector<std::string> select;
  std::vector<std::string> ignore;
  bool enabled(std::string_view code) const;
};

} // namespace devlint
