// Entries of the placement analysis: which methods and functions run as entries, the origins
// of their inputs, and the interpreter's own bookkeeping.
#include "placement/placement_analysis.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "model/torch_catalog.h"
#include "model/transformers_summary.h"
#include "placement/condition_text.h"
#include "placement/installed_methods.h"
#include "placement/interpreter.h"
#include "placement/never_built_classes.h"

namespace devlint {
namespace {

// A tensor constructor given a device: `torch.zeros(..., device=device)`.
bool allocates_on_device(const Expr *e) {
  return any_subexpression(
      e,
      [](const Expr *x) {
        return x->kind == ExprKind::Call && torch_catalog::is_tensor_constructor(callee_leaf(x)) &&
               x->keyword("device");
      },
      32, false);
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

// What the package's code does with a submodule held in an attribute: the calls that run it
// (`self.encoding(dims, device=d)`, `self.encoding.forward(...)`) and whether it escapes them
// (passed on, stored, `self.encoding.__call__` handed to checkpointing), when the calls seen are
// not all that run it.
struct ChildUses {
  struct CallShape {
    size_t positional = 0;
    bool star = false; // `*args` or `**kwargs`: any argument may be passed
    std::vector<std::string_view> keywords;
    const Expr *call = nullptr;
    const ModuleClass *caller = nullptr; // the class whose method makes the call
  };
  std::vector<CallShape> calls;
  bool escapes = false;
};

class ChildUseScanner {
public:
  ChildUseScanner(const std::unordered_set<std::string_view> &names,
                  std::unordered_map<std::string_view, ChildUses> &uses,
                  std::unordered_map<std::string_view, size_t> &class_mentions)
      : names_(names), uses_(uses), class_mentions_(class_mentions) {}

  // The class whose methods are scanned next: its `self.x` names a child only where it declares
  // one. Null outside classes.
  void set_owner(const ModuleClass *owner) { owner_ = owner; }
  void function(const FunctionDef *fn) {
    if (!fn || !visited_.insert(fn).second)
      return;
    for (const Parameter &p : fn->parameters)
      expr(p.default_value, nullptr);
    stmts(fn->body);
  }
  void stmts(const std::vector<Stmt *> &body) {
    for (const Stmt *s : body)
      stmt(s);
  }

private:
  const std::unordered_set<std::string_view> &names_;
  std::unordered_map<std::string_view, ChildUses> &uses_;
  std::unordered_map<std::string_view, size_t> &class_mentions_;
  std::unordered_set<const FunctionDef *> visited_;
  const ModuleClass *owner_ = nullptr;

  void stmt(const Stmt *s) {
    if (!s)
      return;
    // `self.encoding = Encoding(...)` declares (or replaces) the child: not a use of it.
    for (const Expr *t : s->targets)
      if (!(s->kind == StmtKind::Assign && t && t->kind == ExprKind::Attribute))
        expr(t, nullptr);
      else
        expr(t->operands[0], nullptr);
    for (const Expr *e : s->items)
      expr(e, nullptr);
    // `if self.conv_module:` tests whether the child was built; it hands it nowhere.
    bool tested_child = (s->kind == StmtKind::If || s->kind == StmtKind::While) && s->value &&
                        s->value->kind == ExprKind::Attribute &&
                        is_name(s->value->operands[0], "self");
    if (!tested_child)
      expr(s->value, nullptr);
    stmts(s->body);
    stmts(s->orelse);
    for (const auto &h : s->handlers)
      stmts(h);
    stmts(s->finalbody);
    if (s->function)
      function(s->function);
    if (s->class_def) {
      for (const Expr *b : s->class_def->bases)
        expr(b, nullptr);
      stmts(s->class_def->body);
    }
  }
  // `self.x` in a class that holds no child `x` (a parameter, an embedding of another name).
  bool foreign_self(const Expr *e) const {
    return owner_ && is_name(e->operands[0], "self") && !owner_->find_child(e->text);
  }
  void record_call(std::string_view child, const Expr *call) {
    ChildUses::CallShape shape;
    shape.call = call;
    shape.caller = owner_;
    for (size_t i = 1; i < call->operands.size(); ++i) {
      if (call->operands[i]->kind == ExprKind::Starred)
        shape.star = true;
      else
        ++shape.positional;
    }
    for (const Keyword &k : call->keywords) {
      if (k.name.empty())
        shape.star = true;
      else
        shape.keywords.push_back(k.name);
    }
    uses_[child].calls.push_back(std::move(shape));
  }
  // `parent`: the expression `e` is the object or callee of, when it is one.
  void expr(const Expr *e, const Expr *parent, int depth = 0) {
    if (!e || depth > 64)
      return;
    if (e->kind == ExprKind::Name && class_mentions_.count(e->text))
      ++class_mentions_[e->text];
    if (e->kind == ExprKind::Attribute && names_.count(e->text) && !foreign_self(e)) {
      bool called = parent && parent->kind == ExprKind::Call && parent->operands[0] == e;
      bool member = parent && parent->kind == ExprKind::Attribute;
      // `self.conv is not None`, `not self.conv`: a test of whether the child was built.
      bool tested = parent && ((parent->kind == ExprKind::Compare &&
                                (parent->text == "is" || parent->text == "is not")) ||
                               parent->kind == ExprKind::BoolOp);
      if (called)
        record_call(e->text, parent);
      else if ((!member || parent->text == "__call__") && !tested)
        uses_[e->text].escapes = true;
    }
    // `self.encoding.forward(...)` runs it as a call does.
    if (e->kind == ExprKind::Call && e->operands[0]->kind == ExprKind::Attribute &&
        e->operands[0]->text == "forward") {
      const Expr *object = e->operands[0]->operands[0];
      if (object->kind == ExprKind::Attribute && names_.count(object->text) &&
          !foreign_self(object))
        record_call(object->text, e);
    }
    // `isinstance(module, Encoding)` tests a type; it builds nothing.
    bool type_test = e->kind == ExprKind::Call && (is_name(e->operands[0], "isinstance") ||
                                                   is_name(e->operands[0], "issubclass"));
    for (size_t i = 0; i < e->operands.size(); ++i)
      if (!(type_test && i == 2))
        expr(e->operands[i], e, depth + 1);
    for (const Keyword &k : e->keywords)
      expr(k.value, e, depth + 1);
  }
};

} // namespace

// A submodule's `forward` argument that defaults to None and that no call of the submodule in
// the package passes is None whenever it runs (`pos=None` in a position encoding its parent
// calls as `self.encoding(dims, device=d)`): its origins come from the call sites. Only for
// classes whose every use the package shows: a child held in plain attributes, never a root
// model, a base class, an element of a list, a factory's product nor a child that escapes.
namespace {

// Module classes the package builds as single children, with the attributes that hold them, and
// the classes whose calls cannot all be seen (bases, list elements, classes in a dict of classes,
// explicit placement).
struct ChildClasses {
  std::unordered_map<const ModuleClass *, std::vector<std::string_view>> child_names;
  std::unordered_set<const ModuleClass *> excluded;
};

ChildClasses single_child_classes(const Package &pkg) {
  ChildClasses out;
  auto &child_names = out.child_names;
  auto &excluded = out.excluded;
  for (const auto &cls : pkg.classes) {
    if (cls->file && cls->file->explicit_placement)
      excluded.insert(cls.get());
    for (const ModuleClass *base : cls->bases)
      excluded.insert(base);
    for (const ChildDecl &child : cls->children) {
      if (!child.resolved)
        continue;
      if (child.kind != ChildKind::Single)
        excluded.insert(child.resolved);
      else
        child_names[child.resolved].push_back(child.name);
    }
  }
  for (const auto &[dict, classes] : pkg.class_dicts)
    for (std::string_view name : classes)
      if (const ModuleClass *c = pkg.find_class(name))
        excluded.insert(c);
  return out;
}

} // namespace

namespace {

struct Guard {
  const Expr *condition = nullptr;
  bool taken = true; // in the `if` body (true) or its `else` (false)
};

bool covers(const SourceRange &outer, const SourceRange &inner) {
  return outer.begin <= inner.begin && inner.end <= outer.end;
}

// The innermost `if` of `body` whose branch holds `range`.
std::optional<Guard> innermost_guard(const std::vector<Stmt *> &body, const SourceRange &range,
                                     int depth = 0) {
  if (depth > 64)
    return std::nullopt;
  for (const Stmt *s : body) {
    if (!s || !covers(s->range, range))
      continue;
    if (s->kind == StmtKind::If) {
      for (bool taken : {true, false}) {
        const std::vector<Stmt *> &branch = taken ? s->body : s->orelse;
        if (auto inner = innermost_guard(branch, range, depth + 1))
          return inner;
        for (const Stmt *b : branch)
          if (b && covers(b->range, range))
            return Guard{s->value, taken};
      }
      return std::nullopt;
    }
    for (const std::vector<Stmt *> *nested : {&s->body, &s->orelse, &s->finalbody})
      if (auto inner = innermost_guard(*nested, range, depth + 1))
        return inner;
    for (const std::vector<Stmt *> &handler : s->handlers)
      if (auto inner = innermost_guard(handler, range, depth + 1))
        return inner;
    return std::nullopt;
  }
  return std::nullopt;
}

// A guard's condition as text, `self.config.x` read as the `config.x` a constructor tests.
std::string guard_text(const SyntaxFile &file, const Guard &guard) {
  std::string text = condition_text(file, guard.condition);
  for (size_t at = text.find("self."); at != std::string::npos; at = text.find("self.", at))
    text.erase(at, 5);
  return text;
}

// Whether `call` (in a method of `shape.caller`) runs only where `__init__` built another class
// than `cls` for the attribute: the call sits in the other branch of the flag test the
// declaration of `cls` sits under (`if config.use_x: self.a = A(...)`, `else: self.a = B(...)`;
// in forward `if self.config.use_x: self.a(..., reverse=True)`, `else: self.a(...)`).
bool calls_another_class(const ChildUses::CallShape &shape, const ModuleClass &cls) {
  const ModuleClass *owner = shape.caller;
  if (!owner || !owner->file || !shape.call)
    return false;
  const FunctionDef *init = owner->find_method("__init__");
  if (!init)
    return false;
  std::optional<Guard> declared;
  for (const ChildDecl &child : owner->children)
    if (child.resolved == &cls)
      declared = innermost_guard(init->body, child.range);
  if (!declared)
    return false;
  std::optional<Guard> called;
  for (const FunctionDef *method : owner->def->methods)
    if (covers(method->range, shape.call->range))
      called = innermost_guard(method->body, shape.call->range);
  return called && called->taken != declared->taken &&
         guard_text(*owner->file, *called) == guard_text(*owner->file, *declared);
}

// The literal every call in `calls` passes for `forward`'s parameter `p` (at `index`, counting
// `self`), its default where a call leaves it out; nullopt when a call splats arguments
// (`*args`, `**kwargs`) or passes anything but True/False, or when calls disagree.
std::optional<bool> flag_passed_by_every_call(const Parameter &p, size_t index,
                                              const std::vector<const Expr *> &calls) {
  auto literal = [](const Expr *e) -> std::optional<bool> {
    if (!e || e->kind != ExprKind::Bool)
      return std::nullopt;
    return e->text == "True";
  };
  std::optional<bool> fallback = p.variadic ? std::nullopt : literal(p.default_value);
  if (!fallback || calls.empty())
    return std::nullopt;
  std::optional<bool> value;
  for (const Expr *call : calls) {
    std::optional<const Expr *> passed = argument_passed(call, index, p.name);
    if (!passed)
      return std::nullopt;
    std::optional<bool> here = *passed ? literal(*passed) : fallback;
    if (!here || (value && *value != *here))
      return std::nullopt;
    value = here;
  }
  return value;
}

// A `forward` flag (`reverse=False`) that every call of the submodule in the package sets to the
// same literal, or leaves at its default, has that value whenever the submodule runs: VITS
// calls its duration predictor only with `reverse=True`, so the `if not reverse:` branch never
// runs. The calls are those find_unpassed_arguments reads: every use of the class is seen.
void find_constant_flags(const ModuleClass &cls, const FunctionDef &forward,
                         const std::vector<const ChildUses::CallShape *> &calls,
                         std::unordered_map<const Parameter *, bool> &flags) {
  std::vector<const Expr *> of_this_class;
  for (const ChildUses::CallShape *shape : calls) {
    if (!shape->call)
      return;
    if (!calls_another_class(*shape, cls))
      of_this_class.push_back(shape->call);
  }
  for (size_t i = 1; i < forward.parameters.size(); ++i)
    if (auto value = flag_passed_by_every_call(forward.parameters[i], i, of_this_class))
      flags[&forward.parameters[i]] = *value;
}

} // namespace

void Interpreter::find_unpassed_arguments() {
  ChildClasses classes = single_child_classes(pkg_);
  const auto &child_names = classes.child_names;
  const auto &excluded = classes.excluded;
  std::unordered_set<std::string_view> names;
  std::unordered_map<std::string_view, size_t> class_mentions;
  for (const auto &[cls, attrs] : child_names) {
    if (excluded.count(cls) || cls->is_pretrained_model)
      continue;
    names.insert(attrs.begin(), attrs.end());
    class_mentions[cls->name] = 0;
  }
  if (names.empty())
    return;
  std::unordered_map<std::string_view, ChildUses> uses;
  ChildUseScanner scanner(names, uses, class_mentions);
  for (const SyntaxFile *file : pkg_.files)
    for (const ClassDef *c : file->classes) {
      scanner.set_owner(pkg_.find_class(c->name, file));
      for (const FunctionDef *m : c->methods)
        scanner.function(m);
      scanner.set_owner(nullptr);
    }
  for (const SyntaxFile *file : pkg_.files) {
    for (const FunctionDef *f : file->functions)
      scanner.function(f);
    scanner.stmts(file->body);
  }
  for (const auto &[cls, attrs] : child_names) {
    if (excluded.count(cls) || cls->is_pretrained_model)
      continue;
    // Built anywhere but in the declarations seen (a factory, a local, a subclass): unknown calls.
    auto mentioned = class_mentions.find(cls->name);
    if (mentioned == class_mentions.end() || mentioned->second != attrs.size())
      continue;
    // Its own `forward`: an inherited one runs for the base's other uses too.
    const auto &methods = cls->def->methods;
    auto own = std::find_if(methods.begin(), methods.end(),
                            [](const FunctionDef *m) { return m->name == "forward"; });
    if (own == methods.end())
      continue;
    const FunctionDef *forward = *own;
    std::vector<const ChildUses::CallShape *> calls;
    bool known = true;
    for (std::string_view attr : attrs) {
      auto it = uses.find(attr);
      if (it == uses.end() || it->second.escapes) {
        known = false;
        break;
      }
      for (const auto &shape : it->second.calls)
        calls.push_back(&shape);
    }
    if (!known || calls.empty())
      continue;
    for (size_t i = 1; i < forward->parameters.size(); ++i) {
      const Parameter &p = forward->parameters[i];
      if (p.variadic || !p.default_value || p.default_value->kind != ExprKind::NoneLiteral)
        continue;
      bool passed = std::any_of(calls.begin(), calls.end(), [&](const auto *shape) {
        return shape->star || shape->positional >= i ||
               std::find(shape->keywords.begin(), shape->keywords.end(), p.name) !=
                   shape->keywords.end();
      });
      if (!passed)
        unpassed_arguments_.insert(&p);
    }
    find_constant_flags(*cls, *forward, calls, constant_flags_);
    KnownCalls known_of_class{forward, {}, {}};
    for (const ChildUses::CallShape *shape : calls)
      if (shape->call)
        known_of_class.calls.emplace_back(shape->call, shape->caller);
    if (known_of_class.calls.size() == calls.size())
      known_calls_.push_back(std::move(known_of_class));
  }
}

void Interpreter::find_private_method_calls() {
  // Each private method name the package's classes define, with the definitions.
  std::unordered_map<std::string_view, std::vector<const FunctionDef *>> defined;
  for (const SyntaxFile *file : pkg_.files)
    for (const ClassDef *c : file->classes)
      for (const FunctionDef *m : c->methods)
        if (m->name.size() > 1 && m->name[0] == '_' && m->name[1] != '_' && !m->is_staticmethod &&
            !m->is_classmethod && !m->is_property)
          defined[m->name].push_back(m);
  if (defined.empty())
    return;
  // Every mention of those names anywhere in the package: `self._name(...)` calls with the class
  // whose method makes them; any other mention (a callback, another object's method, a getattr
  // target in a module-level function) makes the calls unknown.
  std::unordered_map<std::string_view, std::vector<std::pair<const Expr *, const ModuleClass *>>>
      calls;
  std::unordered_set<std::string_view> unknown;
  auto scan = [&](const Stmt *st, const ModuleClass *owner) {
    for_each_expression(st, [&](const Expr *top) {
      any_subexpression(
          top,
          [&](const Expr *e) {
            if (e->kind == ExprKind::Call && !e->operands.empty() &&
                e->operands[0]->kind == ExprKind::Attribute &&
                defined.count(e->operands[0]->text) &&
                is_name(e->operands[0]->operands[0], "self") && owner) {
              calls[e->operands[0]->text].emplace_back(e, owner);
              return false;
            }
            if ((e->kind == ExprKind::Attribute || e->kind == ExprKind::Name ||
                 e->kind == ExprKind::String) &&
                defined.count(e->text)) {
              const bool callee =
                  std::any_of(calls[e->text].begin(), calls[e->text].end(),
                              [e](const auto &known) { return known.first->operands[0] == e; });
              if (!callee)
                unknown.insert(e->text);
            }
            return false;
          },
          64, false);
    });
  };
  for (const SyntaxFile *file : pkg_.files) {
    for (const ClassDef *c : file->classes) {
      const ModuleClass *owner = pkg_.find_class(c->name, file);
      for (const FunctionDef *m : c->methods)
        find_statement(m->body, [&](const Stmt *st) {
          scan(st, owner);
          return false;
        });
    }
    for (const FunctionDef *f : file->functions)
      find_statement(f->body, [&](const Stmt *st) {
        scan(st, nullptr);
        return false;
      });
    for (const Stmt *st : file->body)
      if (st->kind != StmtKind::ClassDef && st->kind != StmtKind::FunctionDef)
        scan(st, nullptr);
  }
  for (const auto &[name, methods] : defined) {
    auto found = calls.find(name);
    if (unknown.count(name) || found == calls.end() || found->second.empty())
      continue;
    for (const FunctionDef *method : methods)
      known_calls_.push_back(KnownCalls{method, found->second, {}});
  }
}

namespace {

bool mentions_self_attribute(const Expr *e, std::string_view attribute) {
  return any_subexpression(
      e,
      [&](const Expr *x) {
        return x->kind == ExprKind::Attribute && x->text == attribute &&
               is_name(x->operands[0], "self");
      },
      8, false);
}

// Calls of a list's elements in `body`: through the variable of a loop over the list
// (`for flow in reversed(self.flows): flow(...)`) or by index (`self.flows[i](...)`).
void element_calls(const std::vector<Stmt *> &body, std::string_view list,
                   std::vector<std::string_view> &names, std::vector<const Expr *> &calls,
                   int depth = 0) {
  if (depth > 64)
    return;
  auto scan = [&](const Expr *e) {
    any_subexpression(
        e,
        [&](const Expr *x) {
          if (x->kind != ExprKind::Call)
            return false;
          const Expr *callee = x->operands[0];
          if ((callee->kind == ExprKind::Name &&
               std::find(names.begin(), names.end(), callee->text) != names.end()) ||
              (callee->kind == ExprKind::Subscript && mentions_self_attribute(callee, list)))
            calls.push_back(x);
          return false;
        },
        64, false);
  };
  for (const Stmt *s : body) {
    if (!s)
      continue;
    if (s->kind == StmtKind::For && !s->targets.empty() &&
        mentions_self_attribute(s->value, list)) {
      const Expr *target = s->targets[0];
      if (target->kind == ExprKind::Tuple && !target->operands.empty())
        target = target->operands.back(); // `for i, layer in enumerate(self.layers)`
      if (target->kind == ExprKind::Name)
        names.push_back(target->text);
    }
    for (const Expr *e : s->targets)
      scan(e);
    for (const Expr *e : s->items)
      scan(e);
    scan(s->value);
    element_calls(s->body, list, names, calls, depth + 1);
    element_calls(s->orelse, list, names, calls, depth + 1);
    for (const auto &handler : s->handlers)
      element_calls(handler, list, names, calls, depth + 1);
    element_calls(s->finalbody, list, names, calls, depth + 1);
  }
}

} // namespace

// Forward flags of classes built only as the elements of lists (`self.flows.append(Flow(...))`):
// every call of an element, in code that runs, passes one literal. A call in the branch of a
// test on a flag of the caller's own forward that its callers decide the other way never runs
// (VITS' coupling block, always called with `reverse=True`, calls its flows with `reverse=True`
// in that branch and without in the other).
void Interpreter::find_list_element_flags() {
  std::unordered_map<const ModuleClass *,
                     std::vector<std::pair<const ModuleClass *, const ChildDecl *>>>
      holders;
  std::unordered_set<const ModuleClass *> excluded;
  for (const auto &cls : pkg_.classes) {
    for (const ModuleClass *base : cls->bases)
      excluded.insert(base);
    for (const ChildDecl &child : cls->children) {
      if (!child.resolved)
        continue;
      if (child.kind != ChildKind::List)
        excluded.insert(child.resolved);
      else
        holders[child.resolved].push_back({cls.get(), &child});
    }
  }
  for (const auto &[dict, classes] : pkg_.class_dicts)
    for (std::string_view name : classes)
      if (const ModuleClass *c = pkg_.find_class(name))
        excluded.insert(c);
  for (const auto &[element, lists] : holders) {
    if (excluded.count(element) || element->is_pretrained_model)
      continue;
    const FunctionDef *forward = nullptr;
    for (const FunctionDef *m : element->def->methods)
      if (m->name == "forward")
        forward = m;
    if (!forward)
      continue;
    // Each call, with whether it runs (its guard decided by the caller's constant flags).
    std::vector<const Expr *> live;
    KnownCalls element_calls_seen{forward, {}, {}};
    for (const auto &[owner, list] : lists) {
      for (const FunctionDef *method : owner->def->methods) {
        if (method->name == "__init__")
          continue;
        std::vector<std::string_view> names;
        std::vector<const Expr *> calls;
        element_calls(method->body, list->name, names, calls);
        for (const Expr *call : calls)
          element_calls_seen.calls.emplace_back(call, owner);
        for (const Expr *call : calls) {
          std::optional<Guard> guard = innermost_guard(method->body, call->range);
          std::optional<bool> decided;
          if (guard) {
            const Expr *c = guard->condition;
            bool negated =
                c && c->kind == ExprKind::BoolOp && c->text == "not" && c->operands.size() == 1;
            const Expr *flag = negated ? c->operands[0] : c;
            if (flag && flag->kind == ExprKind::Name)
              for (const Parameter &p : method->parameters)
                if (p.name == flag->text)
                  if (auto known = constant_flags_.find(&p); known != constant_flags_.end())
                    decided = negated ? !known->second : known->second;
          }
          if (decided && *decided != guard->taken)
            continue; // in the branch that never runs
          live.push_back(call);
        }
      }
    }
    for (size_t i = 1; i < forward->parameters.size(); ++i)
      if (auto value = flag_passed_by_every_call(forward->parameters[i], i, live))
        constant_flags_[&forward->parameters[i]] = *value;
    // The list read through another object (`self.encoder.layer[-1]`) in any method: elements
    // called where these calls do not show.
    for (const auto &[owner, list] : lists)
      note_list_reads_elsewhere(list->name, element_calls_seen.other_uses);
    if (!element_calls_seen.calls.empty())
      known_calls_.push_back(std::move(element_calls_seen));
  }
}

void Interpreter::note_list_reads_elsewhere(
    std::string_view list, std::vector<std::pair<const Expr *, const ModuleClass *>> &uses) const {
  for (const auto &cls : pkg_.classes) {
    if (!cls->def)
      continue;
    for (const FunctionDef *method : cls->def->methods) {
      if (method->name == "__init__")
        continue;
      find_statement(method->body, [&](const Stmt *s) {
        auto read_elsewhere = [&](const Expr *e) {
          return any_subexpression(
              e,
              [&](const Expr *x) {
                if (x->kind != ExprKind::Attribute || x->text != list ||
                    is_name(x->operands[0], "self"))
                  return false;
                uses.emplace_back(x, cls.get());
                return true;
              },
              64, false);
        };
        for_each_expression(s, read_elsewhere);
        return false;
      });
    }
  }
}

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
  // A transformers cache class the package imports (`from ...cache_utils import MambaCache`):
  // its state as the built-in summary records it.
  for (const SyntaxFile *file : pkg.files)
    for (const ImportedName &imported : file->imports)
      if (const TransformersHeldState *held = find_transformers_held_state(imported.name)) {
        for (const std::string &attr : split_summary_names(held->attributes))
          held_state_attributes_.insert(intern(attr));
        for (const std::string &method : split_summary_names(held->methods))
          held_state_methods_.insert(intern(method));
      }
  find_unpassed_arguments();
  find_private_method_calls();
  find_list_element_flags();
  find_constant_attributes();
  find_always_none_arguments();
  find_package_handed_arguments();
}

bool Interpreter::is_setup_method(std::string_view name) {
  return name == "__init__" || name == "_init_weights" || name == "init_weights" ||
         name == "_initialize_weights" || name == "reset_parameters" || name == "post_init" ||
         name == "_set_gradient_checkpointing" || name == "_reset_parameters" ||
         name == "__repr__" || name == "extra_repr";
}

// Whether a class of the package other than those never built inherits `method` from `cls`:
// then it runs, as the subclass's.
static bool inherited_by_built_class(const Package &pkg, const ModuleClass *cls,
                                     const FunctionDef *method,
                                     const std::unordered_set<const ModuleClass *> &never_built) {
  return std::any_of(pkg.classes.begin(), pkg.classes.end(), [&](const auto &other) {
    return other.get() != cls && !never_built.count(other.get()) &&
           other->find_method(method->name) == method;
  });
}

namespace {

// Methods of module classes that the package only ever calls as `self.m(...)` from methods of
// their own class (or its subclasses), at least once, and mentions nowhere else: they run with
// what those callers pass (the analysis inlines them there), so they are not entries of their
// own. `forward`, dunder methods and methods the package never calls (user API, library hooks
// such as `_reorder_cache`) stay entries.
std::unordered_set<const FunctionDef *> self_called_helpers(const Package &pkg) {
  // Per name: the classes making `self.name(...)` calls, how often the name is read as an
  // attribute at all (those calls included), and whether a string spells it (`getattr`).
  std::unordered_map<std::string_view, std::vector<const ModuleClass *>> self_calls;
  std::unordered_map<std::string_view, size_t> attribute_reads;
  std::unordered_set<std::string_view> strings;
  for (const SyntaxFile *file : pkg.files) {
    auto scan = [&](const std::vector<Stmt *> &body, const ModuleClass *owner) {
      find_statement(body, [&](const Stmt *s) {
        auto visit = [&](const Expr *e) {
          any_subexpression(
              e,
              [&](const Expr *x) {
                if (x->kind == ExprKind::Attribute)
                  ++attribute_reads[x->text];
                else if (x->kind == ExprKind::String)
                  strings.insert(x->text);
                else if (x->kind == ExprKind::Call && owner &&
                         x->operands[0]->kind == ExprKind::Attribute &&
                         is_name(x->operands[0]->operands[0], "self"))
                  self_calls[x->operands[0]->text].push_back(owner);
                return false;
              },
              64, false);
        };
        for_each_expression(s, visit);
        return false;
      });
    };
    for (const ClassDef *c : file->classes) {
      const ModuleClass *owner = pkg.find_class(c->name, file);
      for (const FunctionDef *m : c->methods)
        scan(m->body, owner);
    }
    for (const FunctionDef *f : file->functions)
      scan(f->body, nullptr);
    scan(file->body, nullptr);
  }
  std::unordered_set<const FunctionDef *> helpers;
  for (const auto &cls : pkg.classes) {
    if (!cls->is_module || !cls->def)
      continue;
    for (const FunctionDef *m : cls->def->methods) {
      if (m->name == "forward" || m->name.substr(0, 2) == "__" || m->is_property ||
          strings.count(m->name))
        continue;
      auto calls = self_calls.find(m->name);
      if (calls == self_calls.end())
        continue;
      // Every read of the name is one of those calls, made in this class or a subclass.
      if (attribute_reads[m->name] != calls->second.size())
        continue;
      bool own = std::all_of(calls->second.begin(), calls->second.end(), [&](const ModuleClass *c) {
        for (int steps = 0; c && steps < 16; ++steps) {
          if (c == cls.get())
            return true;
          c = c->bases.empty() ? nullptr : c->bases[0];
        }
        return false;
      });
      if (own)
        helpers.insert(m);
    }
  }
  return helpers;
}

} // namespace

void Interpreter::run() {
  collect_caller_child_moves();
  const auto never_built = never_built_classes(pkg_);
  const auto helpers = self_called_helpers(pkg_);
  for (const auto &cls : pkg_.classes) {
    if (!cls->is_module) {
      // A pipeline's methods (its package bases' too, where it does not override them).
      if (pipeline_components(*cls)) {
        std::unordered_set<std::string_view> seen;
        for (const ModuleClass *c = cls.get(); c; c = c->bases.empty() ? nullptr : c->bases[0])
          for (const FunctionDef *m : c->def->methods)
            if (!is_setup_method(m->name) && seen.insert(m->name).second)
              analyze_entry(m, nullptr, cls.get());
      }
      continue;
    }
    std::unordered_set<std::string_view> seen;
    for (const FunctionDef *m : cls->def->methods) {
      seen.insert(m->name);
      if (is_setup_method(m->name))
        continue;
      // A class whose constructor always raises runs nothing of its own.
      if (never_built.count(cls.get()) &&
          !inherited_by_built_class(pkg_, cls.get(), m, never_built))
        continue;
      if (helpers.count(m))
        continue;
      analyze_entry(m, cls.get());
      if (reads_model_parallel_flag(*m)) {
        hand_parallel_run_ = true;
        hand_parallel_probe_statements_ = 0;
        ++muted_sites_;
        analyze_entry(m, cls.get());
        --muted_sites_;
        hand_parallel_run_ = false;
      }
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
  const auto installed = installed_methods(pkg_);
  for (const SyntaxFile *file : pkg_.files) {
    for (const FunctionDef *f : file->functions) {
      auto bound = installed.find(f);
      if (bound == installed.end()) {
        analyze_entry(f, nullptr);
        continue;
      }
      // A patched forward runs as the method of the module it is bound to: `self.q_proj(x)` is
      // that module's submodule, a tensor it makes without `device=` is on the CPU.
      ClassDef &def = installed_defs_.emplace_back();
      def.name = bound->second;
      def.range = f->range;
      def.methods.push_back(const_cast<FunctionDef *>(f));
      ModuleClass &unit = installed_units_.emplace_back();
      unit.name = bound->second;
      unit.def = &def;
      unit.file = file;
      unit.is_module = true;
      unit.scope = &installed_scope_;
      analyze_entry(f, &unit);
    }
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
  o.set(OriginFact::InHelper, frame_->depth > 0);
  return &o;
}

Value Interpreter::tensor(const Origin *o) {
  Value v;
  v.kind = Value::Kind::Tensor;
  v.origins.push_back(o);
  return v;
}

bool Interpreter::tensorish_annotation(std::string_view annotation) {
  for (std::string_view word :
       {"Tensor", "Cache", "Any", "Module", "Output", "Parameter", "torch."})
    if (annotation.find(word) != std::string_view::npos)
      return true;
  return false;
}

Value Interpreter::input_for(const Parameter &p) {
  if (p.default_value) {
    ExprKind k = p.default_value->kind;
    if (k == ExprKind::Number || k == ExprKind::Bool || k == ExprKind::String)
      return Value::neutral();
  }
  // A `torch::Device` parameter: a device chosen by whoever calls, one value in the function.
  if (p.annotation == "torch.device" && frame_->file && frame_->file->explicit_placement &&
      frame_->function)
    return run_time_device(
        p.name, intern(std::string(p.name) + "@" + std::string(frame_->function->name)), p.range);
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
  const_cast<Origin *>(origin)->set(OriginFact::MaybeNotTensor,
                                    p.annotation.find("Tensor") == std::string_view::npos);
  const_cast<Origin *>(origin)->set(OriginFact::DefaultsToNone,
                                    p.default_value &&
                                        p.default_value->kind == ExprKind::NoneLiteral);
  Value v = tensor(origin);
  if (p.variadic)
    v.kind = Value::Kind::Tuple;
  return v;
}

void Interpreter::analyze_entry(const FunctionDef *fn, const ModuleClass *unit,
                                const ModuleClass *pipeline) {
  statements_run_ = 0;
  loop_depth_ = 0;
  Frame frame;
  frame.outer_loops = loops_.size();
  frame.unit = unit;
  frame.function = fn;
  frame.file = file_of_.count(fn) ? file_of_[fn] : nullptr;
  frame.script = fn->runs_as_script;
  frame.pipeline = pipeline;
  Frame *saved = frame_;
  frame_ = &frame;
  bool method = (unit || pipeline) && !fn->is_staticmethod;
  for (size_t i = 0; i < fn->parameters.size(); ++i) {
    const Parameter &p = fn->parameters[i];
    if (i == 0 && method) {
      Value self;
      self.kind = Value::Kind::Self;
      frame.env[p.name] = self;
      continue;
    }
    if (method && always_none_arguments_.count(&p)) {
      frame.env[p.name] = Value::neutral(); // None: see find_always_none_arguments
      continue;
    }
    frame.env[p.name] = input_for(p);
    // `_reorder_cache(past, beam_idx)` is called by `generate` alone, with the caches the layers
    // returned, whatever the argument is named: one cache per layer, on that layer's device.
    if (method && fn->name == "_reorder_cache" && i == 1) {
      const Origin *caches = make_origin(OriginKind::Skip, p.name, p.range);
      const_cast<Origin *>(caches)->set(OriginFact::LayerCaches);
      frame.env[p.name] = tensor(caches);
    }
  }
  call_stack_.push_back(fn);
  exec_block(fn->body);
  call_stack_.pop_back();
  frame_ = saved;
}

void analyze_package(const Package &package, SiteSink &sink, const AnalysisLimits &limits) {
  Interpreter interpreter(package, sink, limits);
  interpreter.run();
}

} // namespace devlint
