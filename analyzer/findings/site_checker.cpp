#include "findings/site_checker.h"

#include <algorithm>

#include "fixes/device_move_fix.h"
#include "fixes/line_length.h"

namespace devlint {
namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::string shorten(std::string_view text, size_t width = 48) {
  std::string out;
  for (char c : text) {
    if (c == '\n' || c == '\r')
      c = ' ';
    if (c == ' ' && !out.empty() && out.back() == ' ')
      continue;
    out += c;
  }
  if (out.size() > width)
    out = out.substr(0, width - 3) + "...";
  return out;
}

// The function that received an argument: the caller's `forward`, not a helper it passed the
// value on to.
std::string function_name(const Origin &o, const Site &site) {
  const ModuleClass *unit = o.function ? o.unit : site.unit;
  const FunctionDef *function = o.function ? o.function : site.function;
  std::string out;
  if (unit)
    out += std::string(unit->name) + ".";
  if (function)
    out += std::string(function->name);
  return out;
}

// A ModuleList output read after the loop that ran it: no longer "this iteration's".
bool after_its_loop(const Origin &o, const Site &site) {
  return o.loop && o.file == site.file &&
         (site.expr->range.begin < o.loop->range.begin || site.expr->range.end > o.loop->range.end);
}

// A few words for the message's first line; the origins carry the full story.
std::string short_origin(const Origin &o, const Site &site) {
  std::string label(o.label);
  switch (o.kind) {
  case OriginKind::Input:
    return label == "self.device" ? "`self.device`" : "argument `" + label + "`";
  case OriginKind::Child:
    return "from `self." + label + "`";
  case OriginKind::LayerIteration:
    if (label.rfind("past", 0) == 0)
      return "one layer's cache";
    if (after_its_loop(o, site))
      return "a `self." + label + "` output";
    return o.earlier_iteration ? "earlier `self." + label + "` outputs"
                               : "this iteration's `self." + label + "` output";
  case OriginKind::Parameter:
    return "parameter `self." + label + "`";
  case OriginKind::PlainTensor:
    return "unregistered `self." + label + "`, on the CPU";
  case OriginKind::Fresh:
    return label == "cpu" ? "moved to the CPU" : "`" + label + "(...)` on the CPU";
  case OriginKind::Skip:
    return "skip key `" + label + "`";
  case OriginKind::LiteralDevice:
    return "on `" + label + "`";
  }
  return label;
}

// `self.bias` when `__init__` may set it to None (`self.bias = None` on some path).
bool assigns_none(const std::vector<Stmt *> &body, std::string_view attr) {
  for (const Stmt *stmt : body) {
    if (!stmt)
      continue;
    if (stmt->kind == StmtKind::Assign && stmt->value && stmt->value->kind == ExprKind::NoneLiteral)
      for (const Expr *t : stmt->targets)
        if (t->kind == ExprKind::Attribute && t->text == attr && is_name(t->operands[0], "self"))
          return true;
    if (assigns_none(stmt->body, attr) || assigns_none(stmt->orelse, attr))
      return true;
  }
  return false;
}

bool may_be_none_attribute(const ModuleClass *unit, const Expr *operand) {
  if (!unit || !operand || operand->kind != ExprKind::Attribute ||
      !is_name(operand->operands[0], "self"))
    return false;
  for (const ModuleClass *c = unit; c; c = c->bases.empty() ? nullptr : c->bases.front())
    for (const FunctionDef *method : c->def->methods)
      if (method->name == "__init__" && assigns_none(method->body, operand->text))
        return true;
  return false;
}

constexpr size_t kMaxFirstLine = 200; // message first lines stay short, like Ruff's

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
      bool shared = std::any_of(operands[anchor].groups.begin(), operands[anchor].groups.end(),
                                [&](const auto &p) { return p.second == group; });
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

std::string SiteChecker::first_line(const Site &site, const Mismatch &m) const {
  const SourceFile &file = *site.file->source;
  const Expr *anchor_expr = site.operands[m.anchor].expr;
  const Expr *moved_expr = site.operands[m.moved.front()].expr;
  std::string op = "`" + site.operation + "`";
  std::string tail = site.kind == SiteKind::ModelCall ? ", which sit on different devices"
                                                      : ", which may be on different devices";
  const Origin &moved = *m.moved_origin;
  const Origin &anchor = *m.anchor_origin;
  if (moved_expr == anchor_expr) {
    // One list holds both: name the list and what differs between its elements.
    std::string list = "`" + shorten(file.slice(anchor_expr->range)) + "`";
    if (moved.kind == OriginKind::LayerIteration && anchor.kind == OriginKind::LayerIteration &&
        moved.label == anchor.label)
      return op + " combines per-iteration outputs of `self." + std::string(moved.label) +
             "` collected in " + list + tail;
    return op + " combines elements of " + list + " " + short_origin(moved, site) + " and " +
           short_origin(anchor, site) + tail;
  }
  for (size_t width : {size_t(48), size_t(24)}) {
    auto text = [&](const Expr *e) { return "`" + shorten(file.slice(e->range), width) + "`"; };
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

std::string SiteChecker::describe(const Origin &o, const Site &site) const {
  std::string line = ", line " + std::to_string(o.range.line);
  std::string label(o.label);
  switch (o.kind) {
  case OriginKind::Input:
    if (label == "self.device")
      return "the module's `self.device`" + line;
    return "argument `" + label + "` of `" + function_name(o, site) + "`" + line;
  case OriginKind::Child:
    return "comes from `self." + label + "`" + line;
  case OriginKind::LayerIteration:
    if (label.rfind("past", 0) == 0)
      return "one layer's cache from `" + label + "`, on that layer's device" + line;
    if (after_its_loop(o, site))
      return "output of an element of `self." + label + "`, read after the loop over it" + line;
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
  // A list built elsewhere has no per-element expression to move.
  if (site.operands[m.moved.front()].expr == site.operands[m.anchor].expr) {
    finding.no_fix_reason = "the tensors are collected in a list built elsewhere";
    return;
  }
  // A safe fix only moves values proven to be tensors: `.to()` on an int, None or a list breaks.
  for (size_t i : m.moved) {
    const SiteOperand &operand = site.operands[i];
    std::string text = "`" + shorten(file.slice(operand.expr->range)) + "`";
    for (const Origin *o : operand.origins)
      if (o->maybe_not_tensor) {
        finding.no_fix_reason = text + " may be a Python number, None or a list rather than a "
                                       "tensor (an argument without a tensor annotation)";
        return;
      }
    if (may_be_none_attribute(site.unit, operand.expr)) {
      finding.no_fix_reason = text + " may be None (the module sets it to None in `__init__`)";
      return;
    }
  }
  Fix fix;
  bool created = false;
  std::vector<const Expr *> moved_operands;
  for (size_t i : m.moved) {
    const Expr *operand = site.operands[i].expr;
    if (!operand || operand->range.end <= operand->range.begin ||
        (operand->range.begin < site.expr->range.begin && site.kind != SiteKind::IndexPut)) {
      continue;
    }
    moved_operands.push_back(operand);
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
  // The fix keeps the file's style: a move that makes a line too long goes on a line of its own,
  // out of simple statements only; otherwise there is no fix.
  size_t limit = fix_line_limit(file);
  if (!fits_line_limit(file, fix.edits, limit)) {
    std::vector<TextEdit> hoisted;
    for (const Expr *operand : moved_operands) {
      auto edit = created || !site.statement
                      ? std::nullopt
                      : hoisted_move_edit(file, *site.statement, operand, anchor);
      if (!edit || !fits_line_limit(file, {*edit}, limit)) {
        finding.no_fix_reason = "the move would make a line longer than " + std::to_string(limit) +
                                " characters and cannot go on a line of its own here";
        return;
      }
      if (hoisted.empty() || hoisted.back().replacement != edit->replacement)
        hoisted.push_back(*edit);
    }
    fix.edits = std::move(hoisted);
  }
  const Expr *first = site.operands[m.moved.front()].expr;
  fix.title = "Move `" + shorten(file.slice(first->range)) + "` to `" + anchor + ".device`";
  if (created && fix.edits.size() == 1)
    fix.title =
        "Create `" + shorten(file.slice(first->range)) + "` on the device of `" + anchor + "`";
  if (m.moved.size() > 1)
    fix.title = "Move " + std::to_string(m.moved.size()) + " operands to `" + anchor + ".device`";
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
