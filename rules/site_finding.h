// What the site rules share when they report: the first line naming the combined operands and
// their origins, and the finding around it (location, origins as related locations, the
// placement story, the fix of the rule's strategy).
#pragma once

#include <string>
#include <string_view>

#include "rules/rule.h"

namespace devlint {

// "`torch.cat` combines `a` (from `self.x`) with `b` (argument `b`)" + `tail`, at most 200
// characters: the origins and the placement story come after it.
std::string combines_message(const SiteContext &context, std::string_view tail);

constexpr std::string_view kMayDiffer = ", which may be on different devices";

// The finding of `rule` at a site that combines operands, with `message` as its first line.
Finding site_finding(const Rule &rule, const SiteContext &context, std::string message);

// The same with the first line `combines_message(context, tail)` and, where that is longer than
// a terminal line (~100 characters), the operands alone as the summary the human formats print.
Finding combines_finding(const Rule &rule, const SiteContext &context, std::string_view tail);

} // namespace devlint
