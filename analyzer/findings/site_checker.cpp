#include "findings/site_checker.h"

#include <algorithm>
#include <utility>

#include "diagnostics/member_origin.h"
#include "placement/abstract_value.h"
#include "placement/condition_text.h"

namespace devlint {

namespace {

// Operands that meet apart only on paths through the unit's own child or parameter that its
// `__init__` builds under a setting (`self.embedder`, only when `config.num_static_categorical_
// features > 0`): the line fails only where that member exists, a run condition like a written
// `if self.embedder is not None:`, decided and ranked like one.
void add_build_condition(const Site &site, const Mismatch &m, std::vector<RunCondition> &tests) {
  const Origin *o = m.moved_origin;
  if (!o || !m.moved_origin_alone || !site.unit || o->unit != site.unit ||
      (o->kind != OriginKind::Child && o->kind != OriginKind::Parameter))
    return;
  std::optional<RunCondition> built = member_built_by_setting(*site.unit, o->label);
  if (!built || std::any_of(tests.begin(), tests.end(), [&](const RunCondition &t) {
        return t.attribute == built->attribute ||
               (!t.config_key.empty() && t.config_key == built->config_key);
      }))
    return;
  tests.push_back(std::move(*built));
}

} // namespace

// The finding told through each other origin of its two operands that a device map places (a
// member built on another branch, an argument), by the rule that claims the site so: the
// ranking reports one of these where the model does not build the member the first names.
void SiteChecker::add_alternatives(const SiteContext &context, Finding &report) const {
  constexpr size_t kPerOperand = 3;
  const Mismatch &m = context.mismatch;
  const ModuleClass *unit = context.site.unit;
  if (!m.moved_origin || !m.anchor_origin || m.moved.empty() || report.operand_origins.size() < 2)
    return;
  // A member the unit's `__init__` declares: an instance that lacks it built another branch.
  auto declared_member = [unit](const Origin *o) {
    return unit && declares_member(*unit, o->kind, o->label);
  };
  auto same_member = [](const Origin *a, const Origin *b) {
    return a->kind == b->kind && a->label == b->label;
  };
  const size_t operand_index[2] = {m.moved.front(), m.anchor};
  for (size_t slot = 0; slot < 2; ++slot) {
    const Origin *primary = slot == 0 ? m.moved_origin : m.anchor_origin;
    const Origin *other_operand = slot == 0 ? m.anchor_origin : m.moved_origin;
    const SiteOperand &operand = context.site.operands[operand_index[slot]];
    // Only a value joined from paths comes from elsewhere where one path's member is missing:
    // one made from both (`self.mask_token * mask`) is not made at all without it.
    const auto &paths = operand.paths ? operand.paths : operand.branches;
    if (!declared_member(primary) || !paths ||
        !member_built_conditionally(*unit, member_attribute(primary->label)))
      continue;
    auto on_a_path_without_primary = [&](const Origin *o) {
      return std::any_of(paths->begin(), paths->end(), [&](const OriginSet &path) {
        auto holds = [&path](const Origin *x) {
          return std::any_of(path.begin(), path.end(),
                             [x](const Origin *y) { return same_origin(x, y); });
        };
        return holds(o) && !holds(primary);
      });
    };
    std::vector<const Origin *> told;
    for (const Origin *o : operand.origins) {
      // (told as what the other operand is, the two would not differ)
      if (!(o->kind == OriginKind::Input || declared_member(o)) || same_origin(o, primary) ||
          same_member(o, other_operand) || !on_a_path_without_primary(o) ||
          std::any_of(told.begin(), told.end(), [&](const Origin *t) { return same_member(t, o); }))
        continue;
      if (told.size() == kPerOperand)
        break;
      told.push_back(o);
      Mismatch other = m;
      (slot == 0 ? other.moved_origin : other.anchor_origin) = o;
      SiteContext other_context{context.site, other, context.facts};
      const SiteRule *rule = claiming_rule(other_context);
      if (!rule)
        continue;
      Finding told_so = rule->report(other_context);
      if (told_so.operand_origins.size() == 2)
        report.alternatives.push_back({slot, std::move(told_so)});
    }
  }
}

const SiteRule *SiteChecker::claiming_rule(const SiteContext &context, bool *claimed) const {
  for (const Rule *r : all_rules()) {
    const SiteRule *candidate = r->site_rule();
    if (!candidate || !candidate->listens_to(context.site.kind) || !candidate->claims(context))
      continue;
    if (claimed)
      *claimed = true;
    if (enabled_(r->info().code))
      return candidate;
  }
  return nullptr;
}

SiteChecker::SiteChecker(const PlacementModel &placement, RuleEnabled enabled,
                         const std::unordered_set<const SourceFile *> &reported_files)
    : placement_(placement), enabled_(std::move(enabled)), reported_files_(reported_files) {}

int SiteChecker::on_site(const Site &site) {
  if (!site.file || !reported_files_.count(site.file->source))
    return -1;
  auto key = std::make_tuple(site.file->source, site.expr->range.begin, site.expr->range.end);
  // One finding per site. A site settled in a loop's first pass is reported again from a later
  // pass, which sees what the loop carries from one iteration to the next.
  auto settled = seen_.find(key);
  auto passed_here = [&](const RunCondition &t) {
    return std::any_of(
        site.run_conditions.begin(), site.run_conditions.end(),
        [&](const RunCondition &o) { return o.text == t.text && o.holds == t.holds; });
  };
  if (settled != seen_.end() && (!settled->second.first_pass || site.first_pass)) {
    // Reached again on another path where its operands may differ too: the finding holds
    // where either path runs, so only the tests both passed remain.
    if (settled->second.finding >= 0) {
      std::vector<RunCondition> &tests =
          findings_[static_cast<size_t>(settled->second.finding)].run_conditions;
      Mismatch again;
      if (!std::all_of(tests.begin(), tests.end(), passed_here) &&
          (!combines_operands(site.kind) || find_mismatch(site, placement_, again)))
        tests.erase(std::remove_if(tests.begin(), tests.end(),
                                   [&](const RunCondition &t) { return !passed_here(t); }),
                    tests.end());
    }
    return settled->second.anchor;
  }
  Mismatch m;
  bool combines = combines_operands(site.kind);
  const int kept = settled != seen_.end() ? settled->second.anchor : -1;
  if (combines && !find_mismatch(site, placement_, m))
    return kept;
  SiteContext context{site, m, placement_.facts(site.unit)};
  // One finding per site: the first enabled rule, in registry order, that claims it. A disabled
  // rule hands the site on (`--ignore DL004` leaves a torch.cat to DL001); a site that only
  // disabled rules claim is still settled, so its result sits with its anchor.
  bool claimed = false;
  const SiteRule *rule = claiming_rule(context, &claimed);
  if (!claimed)
    return kept;
  int anchor = combines ? static_cast<int>(m.anchor) : -1;
  Settled now{anchor, -1, site.first_pass};
  if (settled != seen_.end())
    now.finding = settled->second.finding;
  if (rule) {
    Finding report = rule->report(context);
    add_alternatives(context, report);
    report.run_conditions = site.run_conditions;
    add_build_condition(site, m, report.run_conditions);
    if (now.finding >= 0) {
      // A later pass of the loop replaces the report; the tests the first passed stay only
      // where this one passed them too.
      std::vector<RunCondition> &before =
          findings_[static_cast<size_t>(now.finding)].run_conditions;
      report.run_conditions.erase(
          std::remove_if(report.run_conditions.begin(), report.run_conditions.end(),
                         [&](const RunCondition &t) {
                           return std::none_of(before.begin(), before.end(),
                                               [&](const RunCondition &o) {
                                                 return o.text == t.text && o.holds == t.holds;
                                               });
                         }),
          report.run_conditions.end());
      findings_[static_cast<size_t>(now.finding)] = std::move(report);
    } else {
      now.finding = static_cast<int>(findings_.size());
      findings_.push_back(std::move(report));
    }
  }
  seen_[key] = now;
  return anchor;
}

std::vector<Finding> SiteChecker::take_findings() { return std::move(findings_); }

void SiteChecker::on_module_argument(const ModuleArgument &argument) {
  auto key = std::make_tuple(std::string(argument.caller->name), std::string(argument.child),
                             std::string(argument.parameter));
  auto [it, inserted] = passed_.try_emplace(key, std::vector<OperandOrigin>{});
  if (!it->second)
    return;
  if (argument.origins.empty()) {
    it->second.reset();
    return;
  }
  for (const Origin *o : argument.origins) {
    OperandOrigin passed{o->kind, std::string(o->label), o->has(OriginFact::EarlierIteration), "",
                         std::string(o->through_empty_child)};
    auto same = [&](const OperandOrigin &p) {
      return p.kind == passed.kind && p.label == passed.label &&
             p.earlier_iteration == passed.earlier_iteration &&
             p.through_empty_child == passed.through_empty_child;
    };
    if (std::none_of(it->second->begin(), it->second->end(), same))
      it->second->push_back(std::move(passed));
  }
}

std::vector<PassedArgument> SiteChecker::take_passed_arguments() {
  std::vector<PassedArgument> out;
  for (auto &[key, origins] : passed_)
    out.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key),
                   origins ? std::move(*origins) : std::vector<OperandOrigin>{}});
  passed_.clear();
  return out;
}

} // namespace devlint
