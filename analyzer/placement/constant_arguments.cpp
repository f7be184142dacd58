// Conditions the package itself decides: a module attribute `__init__` sets to a literal that
// nothing changes again (`self.z_steps = 0`), and a `forward` argument that defaults to None and
// that every call of the submodule that can run leaves None (DeBERTa hands `query_states` from
// its encoder to every layer and attention, and only a branch behind `if self.z_steps > 1:`
// passes anything else). A branch behind `if query_states is not None:` then never runs, and its
// operands are never the cause of a finding. docs/DEVICE_MODEL.md section 3.
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <string>

#include "placement/interpreter.h"

namespace devlint {

namespace {

bool is_literal(const Expr *e) {
  if (!e)
    return false;
  if (e->kind == ExprKind::UnaryOp && e->text == "-" && e->operands.size() == 1)
    return e->operands[0]->kind == ExprKind::Number;
  return e->kind == ExprKind::Number || e->kind == ExprKind::Bool ||
         e->kind == ExprKind::NoneLiteral || e->kind == ExprKind::String;
}

// `self.X` -> "X"; empty for anything else.
std::string_view self_attribute(const Expr *e) {
  return e && e->kind == ExprKind::Attribute && is_name(e->operands[0], "self")
             ? e->text
             : std::string_view();
}

std::optional<double> number_of(const SyntaxFile &file, const Expr *e) {
  if (!e)
    return std::nullopt;
  bool negative = false;
  if (e->kind == ExprKind::UnaryOp && e->text == "-" && e->operands.size() == 1) {
    negative = true;
    e = e->operands[0];
  }
  if (e->kind == ExprKind::Bool)
    return file.source->slice(e->range) == "True" ? 1.0 : 0.0;
  if (e->kind != ExprKind::Number)
    return std::nullopt;
  std::string text(file.source->slice(e->range));
  text.erase(std::remove(text.begin(), text.end(), '_'), text.end());
  char *end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || !end || *end != '\0')
    return std::nullopt;
  return negative ? -value : value;
}

// Python's truth of a literal.
std::optional<bool> literal_truth(const SyntaxFile &file, const Expr *e) {
  if (!e)
    return std::nullopt;
  if (e->kind == ExprKind::NoneLiteral)
    return false;
  if (e->kind == ExprKind::String)
    return !e->text.empty();
  if (std::optional<double> n = number_of(file, e))
    return *n != 0.0;
  return std::nullopt;
}

std::optional<bool> compare_numbers(std::string_view op, double a, double b) {
  if (op == "==")
    return a == b;
  if (op == "!=")
    return a != b;
  if (op == "<")
    return a < b;
  if (op == "<=")
    return a <= b;
  if (op == ">")
    return a > b;
  if (op == ">=")
    return a >= b;
  return std::nullopt;
}

// Every statement of a package's code: class bodies, methods, free functions, nested ones.
void each_statement(const std::vector<Stmt *> &body, const std::function<void(const Stmt *)> &f,
                    int depth = 0) {
  if (depth > 64)
    return;
  for (const Stmt *s : body) {
    if (!s)
      continue;
    f(s);
    for (const std::vector<Stmt *> *nested : {&s->body, &s->orelse, &s->finalbody})
      each_statement(*nested, f, depth + 1);
    for (const std::vector<Stmt *> &handler : s->handlers)
      each_statement(handler, f, depth + 1);
    if (s->function)
      each_statement(s->function->body, f, depth + 1);
    if (s->class_def)
      each_statement(s->class_def->body, f, depth + 1);
  }
}

// Attributes transformers and diffusers set on every module that has them, from outside the
// package: `gradient_checkpointing_enable()` stores `module.gradient_checkpointing = True`.
bool set_by_library(std::string_view name) {
  return name == "gradient_checkpointing" || name == "_gradient_checkpointing_func";
}

} // namespace

void Interpreter::find_constant_attributes() {
  // Candidates: `self.X = <literal>` among the top-level statements of a module's `__init__`.
  std::unordered_map<std::string_view, ConstantAttribute> candidates;
  std::unordered_set<std::string_view> stored_twice;
  for (const auto &cls : pkg_.classes) {
    if (!cls->is_module || !cls->def || !cls->file)
      continue;
    for (const FunctionDef *m : cls->def->methods) {
      if (m->name != "__init__")
        continue;
      auto holder = file_of_.find(m);
      const SyntaxFile *init_file = holder != file_of_.end() ? holder->second : cls->file;
      for (const Stmt *s : m->body)
        if (s && s->kind == StmtKind::Assign && s->targets.size() == 1 && is_literal(s->value))
          if (std::string_view name = self_attribute(s->targets[0]); !name.empty()) {
            if (!candidates.emplace(name, ConstantAttribute{cls.get(), init_file, s->value}).second)
              stored_twice.insert(name);
          }
    }
  }
  if (candidates.empty())
    return;
  // Any other store to an attribute of that name, on any object, anywhere in the package, or a
  // `setattr` whose name is not a literal, keeps it from being a constant.
  std::unordered_map<std::string_view, size_t> stores;
  bool computed_setattr = false;
  auto count_targets = [&](const Expr *target) {
    any_subexpression(
        target,
        [&](const Expr *x) {
          if (x->kind == ExprKind::Attribute && candidates.count(x->text))
            ++stores[x->text];
          return false;
        },
        8, false);
  };
  auto count_setattr = [&](const Expr *e) {
    any_subexpression(
        e,
        [&](const Expr *x) {
          if (x->kind != ExprKind::Call || callee_leaf(x) != "setattr" ||
              x->operands[0]->kind != ExprKind::Name)
            return false;
          if (x->operands.size() < 3 || x->operands[2]->kind != ExprKind::String)
            computed_setattr = true;
          else if (candidates.count(x->operands[2]->text))
            stored_twice.insert(x->operands[2]->text);
          return false;
        },
        64, false);
  };
  auto scan = [&](const Stmt *s) {
    if (s->kind == StmtKind::Assign || s->kind == StmtKind::AugAssign || s->kind == StmtKind::For ||
        s->kind == StmtKind::With || s->kind == StmtKind::Delete)
      for (const Expr *t : s->targets)
        count_targets(t);
    count_setattr(s->value);
    for (const Expr *item : s->items)
      count_setattr(item);
  };
  for (const SyntaxFile *file : pkg_.files)
    each_statement(file->body, scan);
  if (computed_setattr)
    return;
  for (const auto &[name, attribute] : candidates)
    if (!stored_twice.count(name) && stores[name] == 1 && !set_by_library(name))
      constant_attributes_.emplace(name, attribute);
}

const Interpreter::ConstantAttribute *Interpreter::constant_attribute(const ModuleClass *cls,
                                                                      std::string_view name) const {
  auto it = constant_attributes_.find(name);
  if (it == constant_attributes_.end() || !cls)
    return nullptr;
  // The class that set it, or a subclass of it (bases in the package).
  std::vector<const ModuleClass *> stack{cls};
  for (size_t steps = 0; !stack.empty() && steps < 64; ++steps) {
    const ModuleClass *c = stack.back();
    stack.pop_back();
    if (c == it->second.owner)
      return &it->second;
    stack.insert(stack.end(), c->bases.begin(), c->bases.end());
  }
  return nullptr;
}

std::optional<bool> Interpreter::decided_condition(const Expr *e, const FunctionDef &fn,
                                                   const ModuleClass *cls, bool none_unchecked,
                                                   int depth) const {
  if (!e || depth > 16)
    return std::nullopt;
  // The file holding `fn`'s body: an inherited method's may not be its class's.
  auto holder = file_of_.find(&fn);
  const SyntaxFile *file = holder != file_of_.end() ? holder->second : nullptr;
  if (e->kind == ExprKind::BoolOp && !e->operands.empty()) {
    if (e->text == "not") {
      std::optional<bool> inner =
          decided_condition(e->operands[0], fn, cls, none_unchecked, depth + 1);
      return inner ? std::optional<bool>(!*inner) : std::nullopt;
    }
    const bool decisive = e->text == "or";
    bool all_known = true;
    for (const Expr *operand : e->operands) {
      std::optional<bool> value = decided_condition(operand, fn, cls, none_unchecked, depth + 1);
      if (value && *value == decisive)
        return decisive;
      all_known = all_known && value.has_value();
    }
    return all_known ? std::optional<bool>(!decisive) : std::nullopt;
  }
  if (e->kind == ExprKind::Bool && file)
    return literal_truth(*file, e);
  // An argument every running call leaves None.
  auto always_none = [&](const Expr *x) {
    if (!x || x->kind != ExprKind::Name)
      return false;
    for (const Parameter &p : fn.parameters)
      if (p.name == x->text)
        return always_none_arguments_.count(&p) &&
               (none_unchecked || !rebound_where_run(fn, cls, p.name, x->range));
    return false;
  };
  if (e->kind == ExprKind::Name && always_none(e))
    return false;
  if (e->kind == ExprKind::Compare && e->operands.size() == 2 &&
      (e->text == "is" || e->text == "is not")) {
    const Expr *a = e->operands[0], *b = e->operands[1];
    if (a->kind == ExprKind::NoneLiteral)
      std::swap(a, b);
    if (b->kind == ExprKind::NoneLiteral && always_none(a))
      return e->text == "is";
  }
  // A module attribute set once to a literal.
  if (!file)
    return std::nullopt;
  if (std::string_view name = self_attribute(e); !name.empty())
    if (const ConstantAttribute *constant = constant_attribute(cls, name))
      return literal_truth(*constant->file, constant->value);
  if (e->kind == ExprKind::Compare && e->operands.size() == 2) {
    const Expr *a = e->operands[0], *b = e->operands[1];
    std::string_view name = self_attribute(a);
    const ConstantAttribute *constant = name.empty() ? nullptr : constant_attribute(cls, name);
    if (!constant)
      return std::nullopt;
    const SyntaxFile &owner_file = *constant->file;
    if (e->text == "is" || e->text == "is not") {
      if (b->kind != ExprKind::NoneLiteral)
        return std::nullopt;
      bool is_none = constant->value->kind == ExprKind::NoneLiteral;
      return e->text == "is" ? is_none : !is_none;
    }
    std::optional<double> left = number_of(owner_file, constant->value);
    std::optional<double> right = number_of(*file, b);
    if (left && right)
      return compare_numbers(e->text, *left, *right);
  }
  return std::nullopt;
}

namespace {

// Whether `range` lies in code of `body` that runs: the branches of `if`s `decide` settles the
// other way are skipped.
bool runs(const std::vector<Stmt *> &body, const SourceRange &range,
          const std::function<std::optional<bool>(const Expr *)> &decide, int depth = 0) {
  if (depth > 64)
    return true;
  for (const Stmt *s : body) {
    if (!s || s->range.begin > range.begin || range.end > s->range.end)
      continue;
    auto holds = [&](const std::vector<Stmt *> &branch) {
      return std::any_of(branch.begin(), branch.end(), [&](const Stmt *b) {
        return b && b->range.begin <= range.begin && range.end <= b->range.end;
      });
    };
    if (s->kind == StmtKind::If) {
      if (holds(s->body) || holds(s->orelse)) {
        std::optional<bool> taken = decide(s->value);
        bool then_branch = holds(s->body);
        if (taken && *taken != then_branch)
          return false;
        return runs(then_branch ? s->body : s->orelse, range, decide, depth + 1);
      }
      return true; // in the condition
    }
    for (const std::vector<Stmt *> *nested : {&s->body, &s->orelse, &s->finalbody})
      if (holds(*nested))
        return runs(*nested, range, decide, depth + 1);
    for (const std::vector<Stmt *> &handler : s->handlers)
      if (holds(handler))
        return runs(handler, range, decide, depth + 1);
    return true;
  }
  return true;
}

} // namespace

bool Interpreter::rebound_where_run(const FunctionDef &fn, const ModuleClass *cls,
                                    std::string_view name, const SourceRange &at) const {
  // Conditions here are decided taking the arguments to be None still.
  auto decide = [&](const Expr *c) { return decided_condition(c, fn, cls, true); };
  auto covers = [](const SourceRange &outer, const SourceRange &inner) {
    return outer.begin <= inner.begin && inner.end <= outer.end;
  };
  // A store reaches `at` when it comes first, or when a loop holds both.
  auto reaches = [&](const Stmt *store) {
    if (store->range.begin < at.begin)
      return true;
    return find_statement(fn.body, [&](const Stmt *s) {
             return (s->kind == StmtKind::For || s->kind == StmtKind::While) &&
                    covers(s->range, store->range) && covers(s->range, at);
           }) != nullptr;
  };
  return find_statement(fn.body, [&](const Stmt *s) {
           return binds_name(s, name) && reaches(s) && runs(fn.body, s->range, decide);
         }) != nullptr;
}

bool Interpreter::call_runs(const Expr *call, const ModuleClass *caller,
                            const FunctionDef **method) const {
  if (!caller || !caller->def)
    return true;
  for (const FunctionDef *m : caller->def->methods)
    if (m->range.begin <= call->range.begin && call->range.end <= m->range.end) {
      *method = m;
      return runs(m->body, call->range,
                  [&](const Expr *c) { return decided_condition(c, *m, caller); });
    }
  return true;
}

void Interpreter::find_always_none_arguments() {
  always_none_arguments_.insert(unpassed_arguments_.begin(), unpassed_arguments_.end());
  if (known_calls_.empty())
    return;
  // What each call passes for a None-default parameter: None when it leaves it out, passes
  // `None`, or hands on an argument of its own method that is always None where it runs.
  auto passes_none = [&](const Parameter &p, size_t index, const Expr *call,
                         const ModuleClass *caller, const FunctionDef *method) {
    std::optional<const Expr *> argument = argument_passed(call, index, p.name);
    if (!argument)
      return false;
    const Expr *passed = *argument;
    if (!passed || passed->kind == ExprKind::NoneLiteral)
      return true;
    if (passed->kind != ExprKind::Name || !method)
      return false;
    for (const Parameter &q : method->parameters)
      if (q.name == passed->text)
        return always_none_arguments_.count(&q) &&
               !rebound_where_run(*method, caller, q.name, call->range);
    return false;
  };
  // Grows to a fixed point: an argument found always None makes the calls it guards never run
  // and the arguments handed on from it None too.
  for (int round = 0; round < 8; ++round) {
    bool grew = false;
    for (const KnownCalls &known : known_calls_) {
      const FunctionDef &forward = *known.forward;
      if (std::any_of(known.other_uses.begin(), known.other_uses.end(), [&](const auto &use) {
            const FunctionDef *method = nullptr;
            return call_runs(use.first, use.second, &method);
          }))
        continue;
      for (size_t i = 1; i < forward.parameters.size(); ++i) {
        const Parameter &p = forward.parameters[i];
        if (p.variadic || !p.default_value || p.default_value->kind != ExprKind::NoneLiteral ||
            always_none_arguments_.count(&p))
          continue;
        bool every_call = true;
        for (const auto &[call, caller] : known.calls) {
          const FunctionDef *method = nullptr;
          if (!call_runs(call, caller, &method))
            continue;
          if (!passes_none(p, i, call, caller, method)) {
            every_call = false;
            break;
          }
        }
        if (every_call) {
          always_none_arguments_.insert(&p);
          grew = true;
        }
      }
    }
    if (!grew)
      break;
  }
}

void Interpreter::find_package_handed_arguments() {
  // A call hands the parameter a value of the package's making unless it passes None, leaves it
  // out, or hands on an argument of its own method that no model of the package fills either.
  auto hands_made_value = [&](const Parameter &p, size_t index, const Expr *call,
                              const ModuleClass *caller, const FunctionDef *method) {
    std::optional<const Expr *> argument = argument_passed(call, index, p.name);
    if (!argument)
      return true; // a splat: unknown
    const Expr *passed = *argument;
    if (!passed || passed->kind == ExprKind::NoneLiteral)
      return false;
    if (passed->kind != ExprKind::Name || !method)
      return true;
    for (const Parameter &q : method->parameters)
      if (q.name == passed->text)
        return package_handed_arguments_.count(&q) > 0 ||
               rebound_where_run(*method, caller, q.name, call->range);
    return true; // a local the caller made
  };
  for (int round = 0; round < 8; ++round) {
    bool grew = false;
    for (const KnownCalls &known : known_calls_) {
      const FunctionDef &forward = *known.forward;
      for (size_t i = 1; i < forward.parameters.size(); ++i) {
        const Parameter &p = forward.parameters[i];
        if (p.variadic || !p.default_value || p.default_value->kind != ExprKind::NoneLiteral ||
            package_handed_arguments_.count(&p))
          continue;
        for (const auto &[call, caller] : known.calls) {
          const FunctionDef *method = nullptr;
          if (call_runs(call, caller, &method) && hands_made_value(p, i, call, caller, method)) {
            package_handed_arguments_.insert(&p);
            grew = true;
            break;
          }
        }
      }
    }
    if (!grew)
      break;
  }
}

} // namespace devlint
