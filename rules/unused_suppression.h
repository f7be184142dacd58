// DL900's report: findings/suppressions.cpp finds which codes of a directive silenced nothing,
// the rule says so (rules/DL900_unused_suppression.cpp).
#pragma once

#include <string>
#include <vector>

#include "diagnostics/finding.h"
#include "fixes/suppression_fix.h"

namespace devlint {

struct UnusedSuppression {
  const SourceFile *file = nullptr;
  SuppressionComment comment;
  bool bare = false; // no codes (`# noqa`): nothing to suppress on its lines
  std::vector<std::string> unused, disabled, unknown; // the directive's codes by why
  bool other_codes_in_use = false; // the directive still silences something: keep it
};

Finding report_unused_suppression(const UnusedSuppression &unused);

} // namespace devlint
