#include "findings/site_checker.h"

#include <utility>

namespace devlint {

SiteChecker::SiteChecker(const PlacementModel &placement, RuleEnabled enabled,
                         const std::unordered_set<const SourceFile *> &reported_files)
    : placement_(placement), enabled_(std::move(enabled)), reported_files_(reported_files) {}

int SiteChecker::on_site(const Site &site) {
  if (!site.file || !reported_files_.count(site.file->source))
    return -1;
  auto key = std::make_tuple(site.file->source, site.expr->range.begin, site.expr->range.end);
  if (auto it = seen_.find(key); it != seen_.end())
    return it->second;
  Mismatch m;
  bool combines = combines_operands(site.kind);
  if (combines && !find_mismatch(site, placement_, m))
    return -1;
  SiteContext context{site, m, placement_.facts(site.unit)};
  // One finding per site: the first enabled rule, in registry order, that claims it. A disabled
  // rule hands the site on (`--ignore DL004` leaves a torch.cat to DL001); a site that only
  // disabled rules claim is still settled, so its result sits with its anchor.
  bool claimed = false;
  const SiteRule *rule = nullptr;
  for (const Rule *r : all_rules()) {
    const SiteRule *candidate = r->site_rule();
    if (!candidate || !candidate->listens_to(site.kind) || !candidate->claims(context))
      continue;
    claimed = true;
    if (enabled_(r->info().code)) {
      rule = candidate;
      break;
    }
  }
  if (!claimed)
    return -1;
  int anchor = combines ? static_cast<int>(m.anchor) : -1;
  seen_.emplace(key, anchor);
  if (rule)
    findings_.push_back(rule->report(context));
  return anchor;
}

std::vector<Finding> SiteChecker::take_findings() { return std::move(findings_); }

} // namespace devlint
