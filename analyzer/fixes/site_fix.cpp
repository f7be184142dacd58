#include "fixes/site_fix.h"

#include <algorithm>

#include "fixes/device_move_fix.h"
#include "fixes/line_length.h"
#include "model/text.h"

namespace devlint {
namespace {

// `self.bias` when `__init__` may set it to None (`self.bias = None` on some path).
bool assigns_none(const std::vector<Stmt *> &body, std::string_view attr) {
  for (const Stmt *stmt : body) {
    if (!stmt)
      continue;
    if (stmt->kind == StmtKind::Assign && stmt->value && stmt->value->kind == ExprKind::NoneLiteral)
      for (const Expr *t : stmt->targets)
        if (t->kind == ExprKind::Attribute && t->text == attr && is_name(t->operands[0], "self"))
          return true;
    // self.register_parameter("bias", None)
    const Expr *call = stmt->value;
    if (stmt->kind == StmtKind::Expr && call && call->kind == ExprKind::Call &&
        call->operands.size() == 3 && call->operands[0]->kind == ExprKind::Attribute &&
        (call->operands[0]->text == "register_parameter" ||
         call->operands[0]->text == "register_buffer") &&
        call->operands[1]->kind == ExprKind::String && call->operands[1]->text == attr &&
        call->operands[2]->kind == ExprKind::NoneLiteral)
      return true;
    if (assigns_none(stmt->body, attr) || assigns_none(stmt->orelse, attr))
      return true;
  }
  return false;
}

// A batch of a `torch::data` loader: moved where it is used, never made elsewhere.
bool made_by_loader(const Origin &o) {
  return o.kind == OriginKind::Fresh && o.label.rfind("torch.data.", 0) == 0;
}

bool may_be_none_attribute(const ModuleClass *unit, const Expr *operand) {
  if (!unit || !operand || operand->kind != ExprKind::Attribute ||
      !is_name(operand->operands[0], "self"))
    return false;
  for (const ModuleClass *c = unit; c; c = c->bases.empty() ? nullptr : c->bases.front()) {
    for (const FunctionDef *method : c->def->methods)
      if (method->name == "__init__" && assigns_none(method->body, operand->text))
        return true;
    // nn.Linear, nn.Conv2d, ... built with bias=False hold `bias = None`.
    if (c->has_builtin_parameters && operand->text == "bias")
      return true;
  }
  return false;
}

// A fresh tensor is best created on the right device (docs/DEVICE_MODEL.md section 4): add
// `device=x.device` to its constructor, at the site or where the value was made earlier in the
// same function, with an `x` that holds the anchor's device at that point.
std::optional<TextEdit> create_fresh_on_anchor(const Site &site, const Mismatch &m, size_t moved,
                                               const std::string &anchor) {
  const SourceFile &file = *site.file->source;
  const SiteOperand &operand = site.operands[moved];
  const Origin *fresh = nullptr;
  for (const Origin *o : operand.origins) {
    if (o->kind != OriginKind::Fresh || moved_to_cpu(o) || fresh)
      return std::nullopt; // several origins, or a `.cpu()`: only a move fixes all of them
    fresh = o;
  }
  if (!fresh || made_by_loader(*fresh))
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

void attach_model_input_fix(Finding &finding, const Site &site, const Mismatch &m) {
  const SourceFile &file = *site.file->source;
  const Origin *placed = nullptr;
  for (const Origin *o : site.operands[m.anchor].origins)
    if (o->kind == OriginKind::LiteralDevice || o->kind == OriginKind::RunTimeDevice)
      placed = o;
  if (!placed || site.operands[m.anchor].origins.size() != 1) {
    finding.no_fix_reason = "the model's device is not one known device";
    return;
  }
  std::string label(placed->label);
  // A device chosen at run time is named by the variable that holds it, where it is in scope.
  const bool run_time = placed->kind == OriginKind::RunTimeDevice;
  if (run_time && placed->function != site.function) {
    finding.no_fix_reason = "the model's device `" + label + "` is not in scope here";
    return;
  }
  std::string device = run_time          ? label
                       : label == "cuda" ? "torch::kCUDA"
                                         : "torch::Device(\"" + label + "\")";
  Fix fix;
  for (size_t i : m.moved) {
    const Expr *operand = site.operands[i].expr;
    if (!operand || operand->range.end <= operand->range.begin)
      continue;
    // A tensor made on the CPU for the model is best made (or, for from_blob's host memory,
    // moved) where it is made: the operand may be a container of such tensors.
    const OriginSet &origins = site.operands[i].origins;
    // (Not for a device chosen at run time: the input is moved to the variable at the call.)
    const Origin *fresh = !run_time && origins.size() == 1 &&
                                  origins[0]->kind == OriginKind::Fresh &&
                                  origins[0]->label != "cpu" && !made_by_loader(*origins[0]) &&
                                  origins[0]->file == site.file && site.function
                              ? origins[0]
                              : nullptr;
    if (const Expr *made = fresh ? find_expr(*site.function, fresh->range) : nullptr)
      if (auto edit = create_on_device_text_edit(file, made, device)) {
        fix.edits.push_back(*edit);
        continue;
      }
    // Inside a module, a child placed on a literal device: its input is another child's output
    // (or an input of the module) and is moved at the call.
    if (site.unit || run_time || (origins.size() == 1 && made_by_loader(*origins[0])) ||
        (origins.size() == 1 && origins[0]->range.begin == operand->range.begin &&
         origins[0]->range.end == operand->range.end)) {
      if (auto why = unmovable_operand(operand)) {
        finding.no_fix_reason = "`" + shorten_snippet(file.slice(operand->range)) + "` " + *why;
        return;
      }
      fix.edits.push_back(move_to_device_text_edit(file, operand, device));
      continue;
    }
    finding.no_fix_reason = "the input is not made in this function, where it could be placed";
    return;
  }
  if (fix.edits.empty()) {
    finding.no_fix_reason = "the operand is not a single expression at the site";
    return;
  }
  fix.title = "Move `" + shorten_snippet(file.slice(site.operands[m.moved.front()].expr->range)) +
              "` to the model's device `" + device + "`";
  finding.fix = std::move(fix);
}

void attach_site_fix(Finding &finding, FixStrategy strategy, const Site &site, const Mismatch &m) {
  const SourceFile &file = *site.file->source;
  if (strategy == FixStrategy::None) {
    finding.no_fix_reason = "the right device depends on intent";
    return;
  }
  const SiteOperand &anchor_operand = site.operands[m.anchor];
  std::string anchor = anchor_operand.role == OperandRole::LayerWeights
                           ? std::string(file.slice(anchor_operand.expr->range)) + ".weight"
                           : device_anchor_text(file, anchor_operand.expr, site.tensor_subscripts);
  if (anchor.empty()) {
    // (said of the operand the others would move to: one of those may well be a plain name)
    finding.no_fix_reason = "`" + shorten_snippet(file.slice(anchor_operand.expr->range)) +
                            "`, the operand to move to, is not a plain name whose `" +
                            device_of(file, "").substr(1) + "` could anchor the move";
    return;
  }
  // A list built elsewhere has no per-element expression to move.
  if (site.operands[m.moved.front()].expr == site.operands[m.anchor].expr) {
    finding.no_fix_reason = "the tensors are collected in a list built elsewhere";
    return;
  }
  for (const Origin *o : site.operands[m.anchor].origins)
    if (o->has(OriginFact::MayBeNone)) {
      finding.no_fix_reason = "`" + anchor + "` may be None (argument `" + std::string(o->label) +
                              "` defaults to None), so its device cannot anchor the move";
      return;
    }
  // A safe fix only moves values proven to be tensors: `.to()` on an int, None or a list breaks.
  for (size_t i : m.moved) {
    const SiteOperand &operand = site.operands[i];
    std::string text = "`" + shorten_snippet(file.slice(operand.expr->range)) + "`";
    for (const Origin *o : operand.origins)
      if (o->has(OriginFact::MaybeNotTensor)) {
        finding.no_fix_reason = text + " may be a Python number, None or a list rather than a "
                                       "tensor (an argument without a tensor annotation)";
        return;
      }
    // Handed on as an argument, None is fine where a `.to()` is not.
    if (site.hand_parallel)
      for (const Origin *o : operand.origins)
        if (o->has(OriginFact::DefaultsToNone)) {
          finding.no_fix_reason = text + " may be None (argument `" + std::string(o->label) +
                                  "` defaults to None), which the call accepts: move it where "
                                  "it is a tensor";
          return;
        }
    // What the previous block returned is, before the first block, what the loop started with
    // (`position_bias = None`): a `.to()` there would break.
    if (site.hand_parallel && !operand.origins.empty() &&
        std::all_of(operand.origins.begin(), operand.origins.end(),
                    [](const Origin *o) { return o->has(OriginFact::LeftBehind); })) {
      finding.no_fix_reason = text +
                              " holds what the previous block returned; before the first block it "
                              "is what the loop started with, which a `.to()` may not accept: "
                              "move it where it is a tensor";
      return;
    }
    if (operand.move_limit == MoveLimit::UpdatedInPlace) {
      finding.no_fix_reason = "`" + site.operation + "` may update " + text +
                              " in place, and a moved copy would leave the holder's tensor "
                              "unchanged: allocate it on the device of the layer that reads it";
      return;
    }
    if (site.external_kernel && operand.expr->kind != ExprKind::Name &&
        operand.expr->kind != ExprKind::Attribute) {
      finding.no_fix_reason = text + " is computed in the call to `" + site.operation +
                              "`: move what it is computed from";
      return;
    }
    if (auto why = unmovable_operand(operand.expr)) {
      finding.no_fix_reason = text + " " + *why;
      return;
    }
    if (may_be_none_attribute(site.unit, operand.expr)) {
      finding.no_fix_reason = text + " may be None (the module sets it to None in `__init__`)";
      return;
    }
  }
  Fix fix;
  bool created = false;
  const SiteOperand *created_operand = nullptr; // made by the constructor given `device=`
  std::vector<const Expr *> moved_operands;
  for (size_t i : m.moved) {
    const Expr *operand = site.operands[i].expr;
    if (!operand || operand->range.end <= operand->range.begin ||
        (operand->range.begin < site.expr->range.begin && site.kind != SiteKind::IndexPut)) {
      continue;
    }
    moved_operands.push_back(operand);
    if (strategy == FixStrategy::CreateOnAnchor)
      if (auto edit = create_fresh_on_anchor(site, m, i, anchor)) {
        // `f(q, cu_seqlens, cu_seqlens)`: one tensor passed twice is created on the device once.
        auto same = [&](const TextEdit &e) {
          return e.begin == edit->begin && e.end == edit->end && e.replacement == edit->replacement;
        };
        if (std::none_of(fix.edits.begin(), fix.edits.end(), same))
          fix.edits.push_back(*edit);
        created = true;
        created_operand = &site.operands[i];
        continue;
      }
    if (site.operands[i].move_limit == MoveLimit::UnprovenElsewhere) {
      finding.no_fix_reason = "`" + shorten_snippet(file.slice(operand->range)) +
                              "` is, on another path, an argument that may be None or not a "
                              "tensor, and a `.to()` there would break";
      return;
    }
    fix.edits.push_back(move_to_device_edit(file, operand, anchor));
  }
  if (fix.edits.empty()) {
    finding.no_fix_reason = "the operand is not a single expression at the site";
    return;
  }
  // The fix keeps the file's style: a move that makes a line too long goes on a line of its own,
  // out of simple statements only; otherwise there is no fix. C++ fixes are left to clang-format
  // to wrap, as clang-tidy's are.
  size_t limit = fix_line_limit(file);
  if (file.language == Language::Python && !fits_line_limit(file, fix.edits, limit)) {
    std::vector<TextEdit> hoisted;
    for (const Expr *operand : moved_operands) {
      auto edit = created || !site.statement || site.file->explicit_placement
                      ? std::nullopt
                      : hoisted_move_edit(file, *site.statement, operand, anchor, moved_operands);
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
  fix.title = "Move `" + shorten_snippet(file.slice(first->range)) + "` to `" +
              device_of(file, anchor) + "`";
  if (created && fix.edits.size() == 1) {
    // Name what the fix creates: the operand when it names the new tensor (`noise`), else the
    // constructor it is computed from (`torch.sin(per_pos_features)` of a `torch.linspace(...)`).
    const Expr *made = created_operand->expr;
    const Origin *constructor = created_operand->origins.front();
    if (made->kind != ExprKind::Name && site.function &&
        (constructor->range.begin != made->range.begin ||
         constructor->range.end != made->range.end))
      if (const Expr *e = find_expr(*site.function, constructor->range))
        made = e;
    fix.title = "Create `" + shorten_snippet(file.slice(made->range)) + "` on the device of `" +
                anchor + "`";
  }
  if (m.moved.size() > 1 && !(created && fix.edits.size() == 1))
    fix.title =
        "Move " + std::to_string(m.moved.size()) + " operands to `" + device_of(file, anchor) + "`";
  finding.fix = std::move(fix);
}

} // namespace devlint
