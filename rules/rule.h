// A rule: a stable code, a name, a doc, and a predicate over a checked site. Like a Ruff rule,
// each lives in one small file; `rules/registry.cpp` lists them in precedence order, and the
// first rule that claims a site reports it.
#pragma once

#include <string_view>
#include <vector>

#include "fixes/site_fix.h"
#include "placement/mismatch.h"
#include "placement/site.h"

namespace devlint {

struct RuleInfo {
  std::string_view code;
  std::string_view name;
  std::string_view summary; // one line
  std::string_view doc;     // Markdown: what, why, example, fix
  FixStrategy fix = FixStrategy::MoveToAnchor;
};

class Rule {
public:
  virtual ~Rule() = default;
  virtual const RuleInfo &info() const = 0;
  // Site rules: does this mismatch belong to this rule?
  virtual bool claims(const Site &, const Mismatch &) const { return false; }
  // Event rules: hard-coded devices inside module methods.
  virtual bool claims_hardcoded_device() const { return false; }
};

const std::vector<const Rule *> &all_rules();
const Rule *find_rule(std::string_view code);

} // namespace devlint
