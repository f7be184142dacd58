// Turns analysis sites into findings: decides which operands may sit on different devices
// (through the PlacementModel) and lets the rules claim the site; the rule that does reports it.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "diagnostics/finding.h"
#include "diagnostics/passed_argument.h"
#include "placement/site.h"
#include "placement/unit_placement.h"
#include "rules/rule.h"

namespace devlint {

// Whether the run reports a rule, by its code (the configuration's selection, config/).
using RuleEnabled = std::function<bool(std::string_view code)>;

class SiteChecker final : public SiteSink {
public:
  SiteChecker(const PlacementModel &placement, RuleEnabled enabled,
              const std::unordered_set<const SourceFile *> &reported_files);

  int on_site(const Site &site) override;
  void on_module_argument(const ModuleArgument &argument) override;

  std::vector<Finding> take_findings();
  // What the forwards of the package hand their submodules, every call of one parameter merged;
  // a parameter some call passes unknowably has no origins.
  std::vector<PassedArgument> take_passed_arguments();

private:
  // The first enabled rule, in registry order, that claims the site; `claimed` is set when any
  // rule does, enabled or not.
  const SiteRule *claiming_rule(const SiteContext &context, bool *claimed = nullptr) const;
  void add_alternatives(const SiteContext &context, Finding &report) const;

  const PlacementModel &placement_;
  RuleEnabled enabled_;
  const std::unordered_set<const SourceFile *> &reported_files_;
  struct Settled {
    int anchor = -1;
    int finding = -1;       // index in findings_, -1 when no enabled rule reported it
    bool first_pass = true; // settled in a loop's first pass: a later pass replaces it
  };
  std::map<std::tuple<const SourceFile *, uint32_t, uint32_t>, Settled> seen_;
  std::vector<Finding> findings_;
  std::map<std::tuple<std::string, std::string, std::string>,
           std::optional<std::vector<OperandOrigin>>>
      passed_; // (caller, child, parameter) -> origins, nullopt when unknown
};

} // namespace devlint
