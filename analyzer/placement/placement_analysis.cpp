// Entries of the placement analysis: which methods and functions run as entries, the origins
// of their inputs, and the interpreter's own bookkeeping.
#include "placement/placement_analysis.h"

#include <algorithm>
#include <string>
#include <unordered_set>

#include "model/torch_catalog.h"
#include "placement/interpreter.h"

namespace devlint {
namespace {

bool tensorish_annotation(std::string_view annotation) {
  for (std::string_view word :
       {"Tensor", "Cache", "Any", "Module", "Output", "Parameter", "torch."})
    if (annotation.find(word) != std::string_view::npos)
      return true;
  return false;
}

// A tensor constructor given a device: `torch.zeros(..., device=device)`.
bool allocates_on_device(const Expr *e, int depth = 0) {
  if (!e || depth > 32)
    return false;
  if (e->kind == ExprKind::Call && torch_catalog::is_tensor_constructor(callee_leaf(e)) &&
      e->keyword("device"))
    return true;
  for (const Expr *operand : e->operands)
    if (allocates_on_device(operand, depth + 1))
      return true;
  for (const Keyword &k : e->keywords)
    if (allocates_on_device(k.value, depth + 1))
      return true;
  return false;
}

bool is_self_attribute(const Expr *e) {
  return e && e->kind == ExprKind::Attribute && is_name(e->operands[0], "self");
}

// `self.x = ...`, `self.x += [...]`, `self.x.append(...)` with tensors allocated on a device.
void collect_held_state(const std::vector<Stmt *> &body,
                        std::unordered_set<std::string_view> &attributes) {
  for (const Stmt *s : body) {
    if (!s)
      continue;
    if ((s->kind == StmtKind::Assign || s->kind == StmtKind::AugAssign) &&
        allocates_on_device(s->value))
      for (const Expr *target : s->targets)
        if (is_self_attribute(target))
          attributes.insert(target->text);
    if (s->kind == StmtKind::Expr && s->value && s->value->kind == ExprKind::Call &&
        allocates_on_device(s->value)) {
      const Expr *callee = s->value->operands[0];
      if (callee->kind == ExprKind::Attribute &&
          (callee->text == "append" || callee->text == "extend") &&
          is_self_attribute(callee->operands[0]))
        attributes.insert(callee->operands[0]->text);
    }
    collect_held_state(s->body, attributes);
    collect_held_state(s->orelse, attributes);
  }
}

} // namespace

Interpreter::Interpreter(const Package &pkg, SiteSink &sink, const AnalysisLimits &limits)
    : pkg_(pkg), sink_(sink), limits_(limits) {
  for (const SyntaxFile *file : pkg.files) {
    for (const FunctionDef *f : file->functions)
      file_of_[f] = file;
    for (const ClassDef *c : file->classes)
      for (const FunctionDef *m : c->methods)
        file_of_[m] = m->body_file ? m->body_file : file;
  }
  for (const auto &cls : pkg.classes)
    if (!cls->is_module)
      if (const FunctionDef *init = cls->find_method("__init__"))
        collect_held_state(init->body, held_state_attributes_);
}

bool Interpreter::is_setup_method(std::string_view name) {
  return name == "__init__" || name == "_init_weights" || name == "init_weights" ||
         name == "_initialize_weights" || name == "reset_parameters" || name == "post_init" ||
         name == "_set_gradient_checkpointing" || name == "_reset_parameters" ||
         name == "__repr__" || name == "extra_repr";
}

void Interpreter::run() {
  for (const auto &cls : pkg_.classes) {
    if (!cls->is_module)
      continue;
    std::unordered_set<std::string_view> seen;
    for (const FunctionDef *m : cls->def->methods) {
      seen.insert(m->name);
      if (!is_setup_method(m->name))
        analyze_entry(m, cls.get());
    }
    // Mixin methods (from package bases that are not modules) run with this class's members.
    for (const ModuleClass *base : cls->bases) {
      if (base->is_module)
        continue;
      for (const FunctionDef *m : base->def->methods)
        if (!is_setup_method(m->name) && seen.insert(m->name).second)
          analyze_entry(m, cls.get());
    }
  }
  for (const SyntaxFile *file : pkg_.files) {
    for (const FunctionDef *f : file->functions)
      analyze_entry(f, nullptr);
    analyze_script(file);
  }
}

std::string_view Interpreter::intern(std::string s) { return strings_.emplace_back(std::move(s)); }

const Origin *Interpreter::make_origin(OriginKind kind, std::string_view label, SourceRange range) {
  Origin &o = origins_.emplace_back();
  o.kind = kind;
  o.label = label;
  o.range = range;
  o.file = frame_->file;
  o.function = frame_->function;
  o.unit = frame_->unit;
  o.in_helper = frame_->depth > 0;
  return &o;
}

Value Interpreter::tensor(const Origin *o) {
  Value v;
  v.kind = Value::Kind::Tensor;
  v.origins.push_back(o);
  return v;
}

Value Interpreter::input_for(const Parameter &p) {
  if (p.default_value) {
    ExprKind k = p.default_value->kind;
    if (k == ExprKind::Number || k == ExprKind::Bool || k == ExprKind::String)
      return Value::neutral();
  }
  if (!p.annotation.empty() && !tensorish_annotation(p.annotation))
    return Value::neutral();
  const auto &skip = frame_->unit ? frame_->unit->scope->skip_key_set : pkg_.skip_key_set;
  bool skipped =
      skip.count(std::string(p.name)) != 0 || (skip.empty() && p.name == "past_key_values");
  // A free function's arguments may come from anywhere, the CPU included: only its callers,
  // which inline it with real origins, can tell.
  bool unknown = frame_->unit == nullptr;
  const Origin *origin =
      make_origin(skipped || unknown ? OriginKind::Skip : OriginKind::Input, p.name, p.range);
  const_cast<Origin *>(origin)->maybe_not_tensor =
      p.annotation.find("Tensor") == std::string_view::npos;
  const_cast<Origin *>(origin)->defaults_to_none =
      p.default_value && p.default_value->kind == ExprKind::NoneLiteral;
  Value v = tensor(origin);
  if (p.variadic)
    v.kind = Value::Kind::Tuple;
  return v;
}

void Interpreter::analyze_entry(const FunctionDef *fn, const ModuleClass *unit) {
  statements_run_ = 0;
  loop_depth_ = 0;
  Frame frame;
  frame.unit = unit;
  frame.function = fn;
  frame.file = file_of_.count(fn) ? file_of_[fn] : nullptr;
  frame.script = fn->runs_as_script;
  Frame *saved = frame_;
  frame_ = &frame;
  bool method = unit && !fn->is_staticmethod;
  for (size_t i = 0; i < fn->parameters.size(); ++i) {
    const Parameter &p = fn->parameters[i];
    if (i == 0 && method) {
      Value self;
      self.kind = Value::Kind::Self;
      frame.env[p.name] = self;
      continue;
    }
    frame.env[p.name] = input_for(p);
    // `_reorder_cache(past, beam_idx)` is called by `generate` alone, with the caches the layers
    // returned, whatever the argument is named: one cache per layer, on that layer's device.
    if (method && fn->name == "_reorder_cache" && i == 1) {
      const Origin *caches = make_origin(OriginKind::Skip, p.name, p.range);
      const_cast<Origin *>(caches)->layer_caches = true;
      frame.env[p.name] = tensor(caches);
    }
  }
  call_stack_.push_back(fn);
  exec_block(fn->body);
  call_stack_.pop_back();
  frame_ = saved;
}

void Interpreter::analyze_script(const SyntaxFile *file) {
  statements_run_ = 0;
  loop_depth_ = 0;
  Frame frame;
  frame.file = file;
  frame.script = true;
  Frame *saved = frame_;
  frame_ = &frame;
  for (const Stmt *s : file->body)
    if (s->kind != StmtKind::FunctionDef && s->kind != StmtKind::ClassDef)
      exec(s);
  frame_ = saved;
}

void analyze_package(const Package &package, SiteSink &sink, const AnalysisLimits &limits) {
  Interpreter interpreter(package, sink, limits);
  interpreter.run();
}

} // namespace devlint
