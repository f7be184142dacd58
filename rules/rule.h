// A rule: a stable code, a name, a doc, the site kinds it listens to, and how it reports a site.
// Like a clang-tidy check, `site_kinds()` says what it wants (registerMatchers) and `report()`
// makes the finding (check); like a Ruff rule, each lives in one small file. `rules/registry.cpp`
// lists them in precedence order: the first enabled rule that claims a site reports it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "diagnostics/finding.h"
#include "fixes/site_fix.h"
#include "placement/mismatch.h"
#include "placement/site.h"
#include "placement/unit_placement.h"

namespace devlint {

struct RuleInfo {
  std::string_view code;
  std::string_view name;
  std::string_view summary; // one line
  std::string_view doc;     // Markdown: what, why, example, fix
  FixStrategy fix = FixStrategy::MoveToAnchor;
};

// What a rule sees of one site: the site, which operands may sit on different devices (for sites
// that combine operands, see combines_operands), and the placement facts of the unit running it.
struct SiteContext {
  const Site &site;
  const Mismatch &mismatch;
  const UnitFacts &facts;
};

class SiteRule;

class Rule {
public:
  virtual ~Rule() = default;
  virtual const RuleInfo &info() const = 0;
  // Null for a rule that no site triggers (DL900 is reported by findings/suppressions.cpp).
  virtual const SiteRule *site_rule() const { return nullptr; }
};

// A rule over the sites of the placement analysis.
class SiteRule : public Rule {
public:
  const SiteRule *site_rule() const final { return this; }
  // The site kinds this rule is offered.
  virtual std::vector<SiteKind> site_kinds() const = 0;
  // Whether this rule reports a site of one of its kinds.
  virtual bool claims(const SiteContext &) const { return true; }
  // The finding for a site this rule claimed: its message, origins and fix.
  virtual Finding report(const SiteContext &) const = 0;
  // Why the site fails, in one sentence (`Finding::why`). The default (site_finding.cpp) explains
  // by what made the operands and whether accelerate may split the running class; a rule with a
  // reason of its own says it.
  virtual std::string why(const SiteContext &context) const;

  bool listens_to(SiteKind kind) const;
};

const std::vector<const Rule *> &all_rules();
// By code ("DL001") or name ("cross-device-concat").
const Rule *find_rule(std::string_view code);

// A rule selector as written in `select`/`ignore` (a code, a code prefix, a rule name or "ALL"),
// in the form RuleSelection matches: a name becomes its code. Empty when it selects no rule, so
// that a typo is an error rather than a silently empty selection.
std::string resolve_selector(std::string_view selector);
// "; did you mean `DL001`?" for a selector that names no rule, or "" when nothing is close.
std::string selector_suggestion(std::string_view selector);

// A rule's full documentation in Markdown: title, summary, then its doc (`devlint rule`, SARIF
// help.markdown, the installed docs).
std::string rule_markdown(const RuleInfo &info);

} // namespace devlint
