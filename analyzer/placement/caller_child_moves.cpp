// Member modules that LibTorch script code moves on their own (docs/CPP_DEVICE_MODEL.md section
// 1): `model->head->to(torch::kCUDA, 1)` in `main` or in a helper `main` calls. The head then
// computes there while the rest of the model stays where `model->to(...)` put it (or on the CPU),
// so inside the model's `forward` its outputs meet the other modules' outputs on another device.
// The classes are analysed before the script code, so the script functions first run muted,
// only to find these moves.
#include <algorithm>

#include "placement/interpreter.h"

namespace devlint {
namespace {

// `Net`, `const Net &`, `struct NetImpl` as a parameter's type is written: the class name.
std::string_view class_name_of_type(std::string_view type) {
  for (std::string_view prefix : {"const ", "struct ", "class "})
    if (type.substr(0, prefix.size()) == prefix)
      type.remove_prefix(prefix.size());
  while (!type.empty() && (type.back() == '&' || type.back() == '*' || type.back() == ' '))
    type.remove_suffix(1);
  return type;
}

// The device a placing value names: its literal or run-time device origin, else null.
const Origin *placing_device(const Value &v) {
  for (const Origin *o : v.origins)
    if (o->kind == OriginKind::LiteralDevice || o->kind == OriginKind::RunTimeDevice)
      return o;
  return nullptr;
}

std::string literal_name(const Origin &o) {
  return o.label == "cuda" ? "cuda:0" : std::string(o.label);
}

// Whether a module moved to `moved` sits apart from a model left on `model` (null: the model
// was never moved, so it is on the CPU). A device chosen at run time is not the CPU but may be
// any GPU, a literal one included; two run-time devices may differ.
bool apart(const Origin *moved, const Origin *model) {
  const bool moved_literal = moved->kind == OriginKind::LiteralDevice;
  if (!model)
    return !(moved_literal && literal_name(*moved) == "cpu");
  const bool model_literal = model->kind == OriginKind::LiteralDevice;
  if (moved_literal && model_literal)
    return literal_name(*moved) != literal_name(*model);
  if (!moved_literal && !model_literal)
    return moved->device_key != model->device_key;
  // One literal, one run-time: apart only when the literal one is the CPU.
  const Origin &literal = moved_literal ? *moved : *model;
  return literal_name(literal) == "cpu";
}

// Whether `s` (or a statement nested in it) assigns `name` a new instance of a class the
// package defines (`Net model;`, `auto model = Net(10)`): that class, else null.
const ModuleClass *constructed_class(const Package &pkg, const SyntaxFile *file,
                                     const std::vector<Stmt *> &body, std::string_view name,
                                     int depth = 0) {
  if (depth > 32)
    return nullptr;
  for (const Stmt *s : body) {
    if (s->kind == StmtKind::Assign && s->targets.size() == 1 &&
        s->targets[0]->kind == ExprKind::Name && s->targets[0]->text == name && s->value &&
        s->value->kind == ExprKind::Call && s->value->operands[0]->kind == ExprKind::Name) {
      std::string_view callee = s->value->operands[0]->text;
      const ModuleClass *cls = pkg.find_class(callee, file);
      if (!cls)
        cls = pkg.find_class(std::string(callee) + "Impl", file);
      if (cls && cls->is_module)
        return cls;
    }
    for (const std::vector<Stmt *> *nested : {&s->body, &s->orelse})
      if (const ModuleClass *cls = constructed_class(pkg, file, *nested, name, depth + 1))
        return cls;
  }
  return nullptr;
}

} // namespace

void Interpreter::collect_caller_child_moves() {
  bool any = std::any_of(pkg_.files.begin(), pkg_.files.end(),
                         [](const SyntaxFile *f) { return f->explicit_placement; });
  if (!any)
    return;
  collecting_caller_moves_ = true;
  ++muted_sites_;
  for (const SyntaxFile *file : pkg_.files) {
    if (!file->explicit_placement)
      continue;
    for (const FunctionDef *f : file->functions)
      if (f->runs_as_script)
        analyze_entry(f, nullptr);
    analyze_script(file);
  }
  --muted_sites_;
  collecting_caller_moves_ = false;
  // A model moved as a whole after its member takes the member along.
  caller_child_moves_.erase(std::remove_if(caller_child_moves_.begin(), caller_child_moves_.end(),
                                           [](const CallerChildMove &m) { return m.cancelled; }),
                            caller_child_moves_.end());
}

Interpreter::ScriptModel Interpreter::script_model(std::string_view name) const {
  const FunctionDef *fn = frame_->function;
  if (fn)
    for (const Parameter &p : fn->parameters)
      if (p.name == name) {
        std::string_view type = class_name_of_type(p.annotation);
        const ModuleClass *cls = pkg_.find_class(type, frame_->file);
        if (!cls)
          cls = pkg_.find_class(std::string(type) + "Impl", frame_->file);
        // Analysed on its own, a helper cannot tell where its caller put the model.
        return {cls && cls->is_module ? cls : nullptr, frame_->depth > 0};
      }
  const std::vector<Stmt *> &body = fn ? fn->body : frame_->file->body;
  return {constructed_class(pkg_, frame_->file, body, name), true};
}

void Interpreter::note_caller_move(const Expr *target, const Value &value, const Expr *value_expr) {
  if (!collecting_caller_moves_ || !frame_->script || !places_explicitly())
    return;
  // `model->to(device)` (lowered `model = model.to(device)`): the whole model, its members too.
  if (target->kind == ExprKind::Name) {
    if (value_expr && value_expr->kind == ExprKind::Call && value_expr->text == "to" &&
        value_expr->operands[0]->kind == ExprKind::Attribute &&
        is_name(value_expr->operands[0]->operands[0], target->text))
      for (CallerChildMove &m : caller_child_moves_)
        if (m.function == frame_->function && m.variable == target->text)
          m.cancelled = true;
    return;
  }
  // `model->head->to(d)` (lowered `model.head = model.head.to(d)`).
  if (target->kind != ExprKind::Attribute || target->operands[0]->kind != ExprKind::Name ||
      !value_expr || value_expr->kind != ExprKind::Call || value_expr->text != "to")
    return;
  std::string_view variable = target->operands[0]->text;
  ScriptModel model = script_model(variable);
  const Origin *device = placing_device(value);
  if (!model.cls || !model.placement_known || !device || !model.cls->find_child(target->text))
    return;
  auto held = frame_->env.find(variable);
  const Origin *model_device = held == frame_->env.end() ? nullptr : placing_device(held->second);
  if (!apart(device, model_device))
    return;
  for (const CallerChildMove &m : caller_child_moves_)
    if (m.unit == model.cls && m.child == target->text && !m.cancelled)
      return; // the first move found tells
  caller_child_moves_.push_back(
      {model.cls, target->text, device, frame_->function, variable, false});
}

const Origin *Interpreter::caller_moved_child(const ModuleClass *unit,
                                              std::string_view path) const {
  if (!unit || caller_child_moves_.empty())
    return nullptr;
  std::string_view first = path.substr(0, path.find('.'));
  for (const CallerChildMove &m : caller_child_moves_)
    if (m.unit == unit && m.child == first)
      return m.device;
  return nullptr;
}

void Interpreter::caller_moved_child_call(const Expr *call, const Origin *child_output,
                                          const Args &args) {
  const Expr *child_expr = call->operands[0];
  Site site;
  site.kind = SiteKind::ModelCall;
  site.expr = call;
  site.operation = call_spelling(call, child_expr);
  site.operands.push_back({child_expr, {child_output}, OperandRole::Anchor});
  for (size_t i = 0; i < args.positional.size() && i + 1 < call->operands.size(); ++i)
    if (args.positional[i].has_origins())
      site.operands.push_back({call->operands[i + 1], origins_of(args.positional[i])});
  if (site.operands.size() > 1)
    emit(site);
}

} // namespace devlint
