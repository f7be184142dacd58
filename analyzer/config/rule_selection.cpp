#include "config/rule_selection.h"

#include <algorithm>
#include <utility>

#include "model/text.h"

namespace devlint {

bool RuleSelection::enabled(std::string_view code) const {
  auto matches = [&](const std::vector<std::string> &list) {
    size_t best = 0;
    bool found = false;
    for (const std::string &prefix : list)
      if (prefix == "ALL" || starts_with(code, prefix)) {
        found = true;
        best = std::max(best, prefix == "ALL" ? size_t(0) : prefix.size());
      }
    return std::make_pair(found, best);
  };
  auto [selected, select_len] = select.empty() ? std::make_pair(true, size_t(0)) : matches(select);
  auto [ignored, ignore_len] = matches(ignore);
  if (!selected)
    return false;
  // The more specific entry wins, as in Ruff.
  return !ignored || select_len > ignore_len;
}

} // namespace devlint
