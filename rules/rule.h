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
// By code ("DL001") or name ("cross-device-concat").
const Rule *find_rule(std::string_view code);

// A rule selector as written in `select`/`ignore` (a code, a code prefix, a rule name or "ALL"),
// in the form RuleSelection matches: a name becomes its code. Empty when it selects no rule, so
// that a typo is an error rather than a silently empty selection.
std::string resolve_selector(std::string_view selector);

// A rule's full documentation in Markdown: title, summary, then its doc (`devlint rule`, SARIF
// help.markdown, the installed docs).
std::string rule_markdown(const RuleInfo &info);

} // namespace devlint
