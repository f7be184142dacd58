#include "fixes/site_fix.h"

#include <algorithm>

#include "fixes/device_move_fix.h"
#include "model/text.h"

namespace devlint {
namespace {

// A fresh tensor is best created on the right device (DEVICE_MODEL.md section 4): add
// `device=x.device` to its constructor, at the site or where the value was made earlier in the
// same function, with an `x` that holds the anchor's device at that point.
std::optional<TextEdit> create_fresh_on_anchor(const Site &site, const Mismatch &m, size_t moved,
                                               const std::string &anchor) {
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

} // namespace

void attach_site_fix(Finding &finding, FixStrategy strategy, const Site &site, const Mismatch &m) {
  const SourceFile &file = *site.file->source;
  if (strategy == FixStrategy::None) {
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
    if (strategy == FixStrategy::CreateOnAnchor)
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
  fix.title = "Move `" + shorten_snippet(file.slice(first->range)) + "` to `" + anchor + ".device`";
  if (created && fix.edits.size() == 1)
    fix.title = "Create `" + shorten_snippet(file.slice(first->range)) + "` on the device of `" +
                anchor + "`";
  if (m.moved.size() > 1)
    fix.title = "Move " + std::to_string(m.moved.size()) + " operands to `" + anchor + ".device`";
  // A list built elsewhere has no per-element expression to move.
  if (site.operands[m.moved.front()].expr == site.operands[m.anchor].expr) {
    finding.no_fix_reason = "the tensors are collected in a list built elsewhere";
    return;
  }
  finding.fix = std::move(fix);
}

} // namespace devlint
