// Turns analysis sites into findings: decides which operands may sit on different devices
// (through the PlacementModel) and lets the rules claim the site; the rule that does reports it.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "findings/finding.h"
#include "placement/site.h"
#include "placement/unit_placement.h"
#include "rules/rule.h"

namespace devlint {

struct RuleSelection {
  // Empty: every rule. Codes or prefixes ("DL00", "DL0") as in Ruff's select/ignore.
  std::vector<std::string> select;
  std::vector<std::string> ignore;
  bool enabled(std::string_view code) const;
};

class SiteChecker final : public SiteSink {
public:
  SiteChecker(const PlacementModel &placement, const RuleSelection &selection,
              const std::unordered_set<const SourceFile *> &reported_files);

  int on_site(const Site &site) override;

  std::vector<Finding> take_findings();

private:
  const PlacementModel &placement_;
  const RuleSelection &selection_;
  const std::unordered_set<const SourceFile *> &reported_files_;
  std::map<std::tuple<const SourceFile *, uint32_t, uint32_t>, int> seen_; // site -> anchor
  std::vector<Finding> findings_;
};

} // namespace devlint
