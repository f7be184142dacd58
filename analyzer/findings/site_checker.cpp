#include "findings/site_checker.h"

#include <algorithm>

#include "fixes/device_move_fix.h"

namespace devlint {
namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::string shorten(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\n' || c == '\r')
      c = ' ';
    if (c == ' ' && !out.empty() && out.back() == ' ')
      continue;
    out += c;
  }
  if (out.size() > 48)
    out = out.substr(0, 45) + "...";
  return out;
}

std::string function_name(const Site &site) {
  std::string out;
  if (site.unit)
    out += std::string(site.unit->name) + ".";
  if (site.function)
    out += std::string(site.function->name);
  return out;
}

bool is_activation(const Origin *o) {
  return o->kind == OriginKind::Input || o->kind == OriginKind::Child ||
         o->kind == OriginKind::LayerIteration || o->kind == OriginKind::Skip;
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

bool SiteChecker::find_mismatch(const Site &site, Mismatch &out) const {
  struct Grouped {
    std::vector<std::pair<const Origin *, std::string>> groups;
  };
  std::vector<Grouped> operands(site.operands.size());
  for (size_t i = 0; i < site.operands.size(); ++i) {
    for (const Origin *o : site.operands[i].origins) {
      std::string g = placement_.group_of(*o, site.unit);
      bool literal = starts_with(g, "literal:");
      if (g.empty() || literal != (site.kind == SiteKind::ModelCall))
        continue;
      // PyTorch accepts CPU index tensors for a tensor on any device.
      if (site.operands[i].is_index && g == "cpu")
        continue;
      operands[i].groups.emplace_back(o, std::move(g));
    }
  }
  // An unannotated argument next to a CPU tensor is as likely a Python number as a tensor.
  bool any_cpu = false;
  for (const Grouped &g : operands)
    for (const auto &p : g.groups)
      any_cpu |= p.second == "cpu";
  if (any_cpu)
    for (Grouped &g : operands)
      g.groups.erase(std::remove_if(g.groups.begin(), g.groups.end(),
                                    [](const auto &p) { return p.first->maybe_not_tensor; }),
                     g.groups.end());
  // The anchor keeps its device: logits for a loss, the indexed tensor for indexing, else the
  // first operand made by the model's activations (DEVICE_MODEL.md section 4).
  size_t anchor = site.operands.size();
  for (size_t i = 0; i < site.operands.size(); ++i)
    if (site.operands[i].keeps_device && !operands[i].groups.empty()) {
      anchor = i;
      break;
    }
  for (size_t i = 0; i < site.operands.size() && anchor == site.operands.size(); ++i) {
    if (operands[i].groups.empty() || site.operands[i].is_target || site.operands[i].is_index)
      continue;
    bool activation = std::all_of(operands[i].groups.begin(), operands[i].groups.end(),
                                  [](const auto &p) { return is_activation(p.first); });
    if (activation || site.kind == SiteKind::Indexing || site.kind == SiteKind::IndexPut)
      anchor = i;
  }
  if (anchor == site.operands.size())
    for (size_t i = 0; i < site.operands.size(); ++i)
      if (!operands[i].groups.empty() && !site.operands[i].is_target) {
        anchor = i;
        break;
      }
  if (anchor == site.operands.size())
    return false;
  out.anchor = anchor;
  out.anchor_origin = operands[anchor].groups.front().first;
  for (size_t i = 0; i < site.operands.size(); ++i) {
    if (i == anchor)
      continue;
    // A value joined from several paths that can sit with the anchor is only flagged for a CPU
    // tensor made on a path of this very method: helpers' edge cases are not the caller's bug.
    bool overlaps =
        std::any_of(operands[i].groups.begin(), operands[i].groups.end(), [&](const auto &mine) {
          return std::any_of(operands[anchor].groups.begin(), operands[anchor].groups.end(),
                             [&](const auto &theirs) { return theirs.second == mine.second; });
        });
    for (const auto &[origin, group] : operands[i].groups) {
      const auto &own_group = group; // C++17 lambdas cannot capture a structured binding
      bool shared = std::any_of(operands[anchor].groups.begin(), operands[anchor].groups.end(),
                                [&](const auto &p) { return p.second == own_group; });
      if (!shared && overlaps && !(origin->kind == OriginKind::Fresh && !origin->in_helper))
        continue;
      if (!shared) {
        if (!out.moved_origin) {
          out.moved_origin = origin;
          // Explain with an anchor origin on another device, an activation when there is one.
          const Origin *witness = nullptr;
          for (const auto &[anchor_origin, anchor_group] : operands[anchor].groups)
            if (anchor_group != group &&
                (!witness || (is_activation(anchor_origin) && !is_activation(witness))))
              witness = anchor_origin;
          out.anchor_origin = witness ? witness : operands[anchor].groups.front().first;
        }
        out.moved.push_back(i);
        break;
      }
    }
  }
  return !out.moved.empty();
}

std::string SiteChecker::describe(const Origin &o, const Site &site) const {
  std::string line = ", line " + std::to_string(o.range.line);
  std::string label(o.label);
  switch (o.kind) {
  case OriginKind::Input:
    if (label == "self.device")
      return "the module's `self.device`" + line;
    return "argument `" + label + "` of `" + function_name(site) + "`" + line;
  case OriginKind::Child:
    return "comes from `self." + label + "`" + line;
  case OriginKind::LayerIteration:
    if (label.rfind("past", 0) == 0)
      return "one layer's cache from `" + label + "`, on that layer's device" + line;
    if (o.earlier_iteration)
      return "holds outputs of earlier iterations over `self." + label + "`" + line;
    return "output of this iteration's element of `self." + label + "`" + line;
  case OriginKind::Parameter:
    if (label.find('.') != std::string::npos)
      return "parameter `self." + label + "` read directly, which no hook moves" + line;
    return "parameter `self." + label + "`" + line;
  case OriginKind::PlainTensor:
    return "plain tensor attribute `self." + label +
           "`, not a registered buffer, so dispatch leaves it on the CPU" + line;
  case OriginKind::Fresh:
    if (label == "cpu")
      return "moved to the CPU" + line;
    return "created by `" + label + "(...)` without `device=`, on the CPU" + line;
  case OriginKind::Skip:
    return "skip-key argument `" + label + "`, left where it was created" + line;
  case OriginKind::LiteralDevice:
    return "placed on `" + label + "`" + line;
  }
  return label + line;
}

// A fresh tensor is best created on the right device (DEVICE_MODEL.md section 4): add
// `device=x.device` to its constructor, at the site or where the value was made earlier in the
// same function, with an `x` that holds the anchor's device at that point.
std::optional<TextEdit> SiteChecker::create_fresh_on_anchor(const Site &site, const Mismatch &m,
                                                            size_t moved,
                                                            const std::string &anchor) const {
  const SourceFile &file = *site.file->source;
  const SiteOperand &operand = site.operands[moved];
  const Origin *fresh = nullptr;
  for (const Origin *o : operand.origins) {
    if (o->kind != OriginKind::Fresh || o->label == "cpu" || fresh)
      return std::nullopt; // several origins, or a `.cpu()`: only a move fixes all of them
    fresh = o;
  }
  if (!fresh)
    return std::nullopt;
  if (fresh->range.begin == operand.expr->range.begin &&
      fresh->range.end == operand.expr->range.end)
    return create_on_device_edit(file, operand.expr, anchor);
  if (!site.function || fresh->file != site.file || fresh->range.end > site.expr->range.begin)
    return std::nullopt;
  const Expr *constructor = find_expr(*site.function, fresh->range);
  if (!constructor)
    return std::nullopt;
  // The anchor's own name if it already holds its final value there, else the argument the
  // anchor's device comes from.
  if (anchor.find('.') == std::string::npos &&
      final_binding_at(*site.function, anchor, constructor->range.begin))
    return create_on_device_edit(file, constructor, anchor);
  const OriginSet &anchor_origins = site.operands[m.anchor].origins;
  bool one_argument =
      !anchor_origins.empty() &&
      std::all_of(anchor_origins.begin(), anchor_origins.end(), [&](const Origin *o) {
        return o->kind == OriginKind::Input && o->label == anchor_origins[0]->label;
      });
  std::string argument(anchor_origins.empty() ? std::string_view{} : anchor_origins[0]->label);
  if (one_argument && parameter_binding_at(*site.function, argument, constructor->range.begin))
    return create_on_device_edit(file, constructor, argument);
  return std::nullopt;
}

void SiteChecker::attach_fix(Finding &finding, const Rule &rule, const Site &site,
                             const Mismatch &m) const {
  const SourceFile &file = *site.file->source;
  if (rule.info().fix == FixStrategy::None) {
    finding.no_fix_reason = "the right device depends on intent";
    return;
  }
  std::string anchor = device_anchor_text(file, site.operands[m.anchor].expr);
  if (anchor.empty()) {
    finding.no_fix_reason = "no operand is a plain name whose `.device` could anchor the move";
    return;
  }
  Fix fix;
  bool created = false;
  for (size_t i : m.moved) {
    const Expr *operand = site.operands[i].expr;
    if (!operand || operand->range.end <= operand->range.begin ||
        (operand->range.begin < site.expr->range.begin && site.kind != SiteKind::IndexPut)) {
      continue;
    }
    if (rule.info().fix == FixStrategy::CreateOnAnchor)
      if (auto edit = create_fresh_on_anchor(site, m, i, anchor)) {
        fix.edits.push_back(*edit);
        created = true;
        continue;
      }
    fix.edits.push_back(move_to_device_edit(file, operand, anchor));
  }
  if (fix.edits.empty()) {
    finding.no_fix_reason = "the operand is not a single expression at the site";
    return;
  }
  const Expr *first = site.operands[m.moved.front()].expr;
  fix.title = "Move `" + shorten(file.slice(first->range)) + "` to `" + anchor + ".device`";
  if (created && fix.edits.size() == 1)
    fix.title =
        "Create `" + shorten(file.slice(first->range)) + "` on the device of `" + anchor + "`";
  if (m.moved.size() > 1)
    fix.title = "Move " + std::to_string(m.moved.size()) + " operands to `" + anchor + ".device`";
  // A list built elsewhere has no per-element expression to move.
  if (site.operands[m.moved.front()].expr == site.operands[m.anchor].expr) {
    finding.no_fix_reason = "the tensors are collected in a list built elsewhere";
    return;
  }
  finding.fix = std::move(fix);
}

int SiteChecker::on_site(const Site &site) {
  if (!site.file || !reported_files_.count(site.file->source))
    return -1;
  auto key = std::make_tuple(site.file->source, site.expr->range.begin, site.expr->range.end);
  if (auto it = seen_.find(key); it != seen_.end())
    return it->second;
  Mismatch m;
  if (!find_mismatch(site, m))
    return -1;
  const Rule *rule = nullptr;
  for (const Rule *r : all_rules())
    if (r->claims(site, m)) {
      rule = r;
      break;
    }
  if (!rule)
    return -1;
  int anchor = static_cast<int>(m.anchor);
  seen_.emplace(key, anchor);
  if (!selection_.enabled(rule->info().code))
    return anchor;
  const SourceFile &file = *site.file->source;
  Finding f;
  f.code = std::string(rule->info().code);
  f.rule_name = std::string(rule->info().name);
  f.file = &file;
  f.range = site.expr->range;
  const Expr *anchor_expr = site.operands[m.anchor].expr;
  const Expr *moved_expr = site.operands[m.moved.front()].expr;
  std::string op = "`" + site.operation + "`";
  f.message = op + " combines `" + shorten(file.slice(moved_expr->range)) + "` (" +
              describe(*m.moved_origin, site) + ") with `" +
              shorten(file.slice(anchor_expr->range)) + "` (" + describe(*m.anchor_origin, site) +
              ")" +
              (site.kind == SiteKind::ModelCall ? ", which sit on different devices"
                                                : ", which may be on a different device");
  const UnitFacts &facts = placement_.facts(site.unit);
  bool state_or_fresh = m.moved_origin->kind == OriginKind::Fresh ||
                        m.moved_origin->kind == OriginKind::PlainTensor ||
                        m.anchor_origin->kind == OriginKind::Fresh;
  if (!state_or_fresh && !facts.why.empty())
    f.why = facts.why;
  if (site.kind == SiteKind::Loss && facts.may_split && facts.on_first_chain)
    f.why = "user inputs such as labels are moved to the first GPU, the head sits on the last";
  if (!f.why.empty())
    f.message += "; " + f.why;
  auto related = [&](const Origin *o, std::string role) {
    RelatedLocation r;
    r.path = o->file ? o->file->source->display_path : file.display_path;
    r.range = o->range;
    r.message = std::move(role);
    f.origins.push_back(std::move(r));
  };
  related(m.moved_origin,
          "`" + shorten(file.slice(moved_expr->range)) + "`: " + describe(*m.moved_origin, site));
  related(m.anchor_origin,
          "`" + shorten(file.slice(anchor_expr->range)) + "`: " + describe(*m.anchor_origin, site));
  attach_fix(f, *rule, site, m);
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
  f.message = "Hard-coded device `" + event.device + "` in `" + std::string(event.unit->name) +
              "`: under a device map this module may run on any GPU; take the device from a "
              "tensor in scope";
  f.no_fix_reason = "the right device depends on intent";
  findings_.push_back(std::move(f));
}

std::vector<Finding> SiteChecker::take_findings() { return std::move(findings_); }

} // namespace devlint
