#include "findings/site_checker.h"

#include <algorithm>

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

SiteChecker::SiteChecker(const PlacementModel &placement, const RuleSelection &selection,
                         const std::unordered_set<const SourceFile *> &reported_files)
    : placement_(placement), selection_(selection), reported_files_(reported_files) {}

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
    if (selection_.enabled(r->info().code)) {
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
