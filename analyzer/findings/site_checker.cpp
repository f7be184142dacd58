#include "findings/site_checker.h"

#include <algorithm>

#include "findings/origin_text.h"
#include "fixes/site_fix.h"
#include "model/text.h"

namespace devlint {
namespace {

constexpr size_t kMaxFirstLine = 200; // message first lines stay short, like Ruff's

// "`torch.cat` combines `a` (from `self.x`) with `b` (argument `b`), which may be on different
// devices": the origins and the placement story (`why`) come after it.
std::string first_line(const Site &site, const Mismatch &m) {
  const SourceFile &file = *site.file->source;
  const Expr *anchor_expr = site.operands[m.anchor].expr;
  const Expr *moved_expr = site.operands[m.moved.front()].expr;
  std::string op =
      "`" + (site.file->explicit_placement ? cpp_spelling(site.operation) : site.operation) + "`";
  std::string tail = site.kind == SiteKind::ModelCall ? ", which sit on different devices"
                                                      : ", which may be on different devices";
  const Origin &moved = *m.moved_origin;
  const Origin &anchor = *m.anchor_origin;
  if (moved_expr == anchor_expr) {
    // One list holds both: name the list and what differs between its elements.
    std::string list = "`" + shorten_snippet(file.slice(anchor_expr->range)) + "`";
    if (moved.kind == OriginKind::LayerIteration && anchor.kind == OriginKind::LayerIteration &&
        moved.label == anchor.label)
      return op + " combines per-iteration outputs of `self." + std::string(moved.label) +
             "` collected in " + list + tail;
    return op + " combines elements of " + list + " " + short_origin(moved, site) + " and " +
           short_origin(anchor, site) + tail;
  }
  for (size_t width : {size_t(48), size_t(24)}) {
    auto text = [&](const Expr *e) {
      return "`" + shorten_snippet(file.slice(e->range), width) + "`";
    };
    std::string line = op + " combines " + text(moved_expr) + " (" + short_origin(moved, site) +
                       ") with " + text(anchor_expr) + " (" + short_origin(anchor, site) + ")" +
                       tail;
    if (line.size() <= kMaxFirstLine)
      return line;
    line = op + " combines " + text(moved_expr) + " with " + text(anchor_expr) + tail;
    if (line.size() <= kMaxFirstLine)
      return line;
  }
  return op + " combines operands" + tail;
}

} // namespace

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
  if (!find_mismatch(site, placement_, m))
    return -1;
  // One finding per site: the first enabled rule, in registry order, that claims it. A disabled
  // rule hands the site on (`--ignore DL004` leaves a torch.cat to DL001); a site that only
  // disabled rules claim is still settled, so its result sits with its anchor.
  bool claimed = false;
  const Rule *rule = nullptr;
  for (const Rule *r : all_rules()) {
    if (!r->claims(site, m))
      continue;
    claimed = true;
    if (selection_.enabled(r->info().code)) {
      rule = r;
      break;
    }
  }
  if (!claimed)
    return -1;
  int anchor = static_cast<int>(m.anchor);
  seen_.emplace(key, anchor);
  if (!rule)
    return anchor;
  const SourceFile &file = *site.file->source;
  Finding f;
  f.code = std::string(rule->info().code);
  f.rule_name = std::string(rule->info().name);
  f.file = &file;
  f.range = site.expr->range;
  const Expr *anchor_expr = site.operands[m.anchor].expr;
  const Expr *moved_expr = site.operands[m.moved.front()].expr;
  f.message = first_line(site, m);
  const UnitFacts &facts = placement_.facts(site.unit);
  bool state_or_fresh = m.moved_origin->kind == OriginKind::Fresh ||
                        m.moved_origin->kind == OriginKind::PlainTensor ||
                        m.anchor_origin->kind == OriginKind::Fresh;
  if (!state_or_fresh && !facts.why.empty())
    f.why = facts.why;
  if (site.kind == SiteKind::Loss && facts.may_split && facts.on_first_chain)
    f.why = "user inputs such as labels are moved to the first GPU, the head sits on the last";
  auto related = [&](const Origin *o, std::string role) {
    RelatedLocation r;
    r.path = o->file ? o->file->source->display_path : file.display_path;
    r.range = o->range;
    r.message = std::move(role);
    f.origins.push_back(std::move(r));
  };
  related(m.moved_origin, "`" + shorten_snippet(file.slice(moved_expr->range)) +
                              "`: " + describe_origin(*m.moved_origin, site));
  related(m.anchor_origin, "`" + shorten_snippet(file.slice(anchor_expr->range)) +
                               "`: " + describe_origin(*m.anchor_origin, site));
  attach_site_fix(f, rule->info().fix, site, m);
  if (site.unit)
    f.unit_class = std::string(site.unit->name);
  for (auto [origin, expr] :
       {std::pair{m.moved_origin, moved_expr}, {m.anchor_origin, anchor_expr}})
    f.operand_origins.push_back({static_cast<uint8_t>(origin->kind), std::string(origin->label),
                                 origin->earlier_iteration,
                                 std::string(shorten_snippet(file.slice(expr->range)))});
  findings_.push_back(std::move(f));
  return anchor;
}

void SiteChecker::on_hardcoded_device(const HardcodedDevice &event) {
  if (!event.file || !reported_files_.count(event.file->source))
    return;
  auto key = std::make_tuple(event.file->source, event.expr->range.begin, event.expr->range.end);
  if (!seen_.emplace(key, -1).second)
    return;
  const Rule *rule = nullptr;
  for (const Rule *r : all_rules())
    if (r->claims_hardcoded_device())
      rule = r;
  if (!rule || !selection_.enabled(rule->info().code))
    return;
  Finding f;
  f.code = std::string(rule->info().code);
  f.rule_name = std::string(rule->info().name);
  f.file = event.file->source;
  f.range = event.expr->range;
  // LibTorch has no device map: the module runs wherever its caller's `->to()` put it.
  f.message = "Hard-coded device `" + event.device + "` in `" + std::string(event.unit->name) +
              (event.file->explicit_placement
                   ? "`: the module runs wherever `->to(device)` puts it; take the device from a "
                     "tensor in scope"
                   : "`: under a device map this module may run on any GPU; take the device from "
                     "a tensor in scope");
  f.no_fix_reason = "the right device depends on intent";
  f.unit_class = std::string(event.unit->name);
  f.operand_origins.push_back(
      {static_cast<uint8_t>(OriginKind::LiteralDevice), event.device, false, event.device});
  f.operand_origins.push_back({static_cast<uint8_t>(OriginKind::Input), "", false, "its inputs"});
  findings_.push_back(std::move(f));
}

std::vector<Finding> SiteChecker::take_findings() { return std::move(findings_); }

} // namespace devlint
