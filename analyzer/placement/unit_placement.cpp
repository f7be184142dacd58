#include "placement/unit_placement.h"

#include <algorithm>
#include <functional>
#include <optional>

#include "model/torch_catalog.h"

namespace devlint {

namespace {
constexpr int kMaxNesting = 32; // guards against inheritance or containment cycles

// Whether `names` lists `name` for `unit` (the per-unit lists PlacementModel keeps).
bool lists(const std::unordered_map<const ModuleClass *, std::vector<std::string_view>> &names,
           const ModuleClass *unit, std::string_view name) {
  auto it = names.find(unit);
  return it != names.end() &&
         std::find(it->second.begin(), it->second.end(), name) != it->second.end();
}

// How one parent uses a child attribute: the calls `self.child(...)` it makes, and whether it
// touches the attribute any other way (then its calls cannot all be seen).
struct ChildUses {
  std::vector<const Expr *> calls;
  bool other_use = false;
};

// `past_key_value`, `layer_past`, `kv_cache`: what a block returned at the previous step and
// receives again; it was made by that block's own projections.
bool is_own_cache_name(std::string_view name) {
  auto ends_with = [&](std::string_view suffix) {
    return name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
  };
  return name.substr(0, 4) == "past" || name == "layer_past" || name == "cache" ||
         ends_with("kv_cache") || ends_with("_cache") || ends_with("key_value") ||
         ends_with("key_values");
}

void collect_uses(const Expr *e, std::string_view child, ChildUses &uses, int depth = 0) {
  if (!e || depth > 64)
    return;
  if (e->kind == ExprKind::Call) {
    const Expr *callee = e->operands[0];
    // `self.child(...)` and `self.child.forward(...)`.
    if (is_self_attribute(callee, child) ||
        (callee->kind == ExprKind::Attribute && callee->text == "forward" &&
         is_self_attribute(callee->operands[0], child))) {
      uses.calls.push_back(e);
      for (size_t i = 1; i < e->operands.size(); ++i)
        collect_uses(e->operands[i], child, uses, depth + 1);
      for (const Keyword &k : e->keywords)
        collect_uses(k.value, child, uses, depth + 1);
      return;
    }
  }
  if (is_self_attribute(e, child)) {
    uses.other_use = true;
    return;
  }
  for (const Expr *operand : e->operands)
    collect_uses(operand, child, uses, depth + 1);
  for (const Keyword &k : e->keywords)
    collect_uses(k.value, child, uses, depth + 1);
}

void collect_uses(const std::vector<Stmt *> &body, std::string_view child, ChildUses &uses) {
  for (const Stmt *stmt : body) {
    if (!stmt)
      continue;
    for (const Expr *e : stmt->targets)
      collect_uses(e, child, uses);
    for (const Expr *e : stmt->items)
      collect_uses(e, child, uses);
    collect_uses(stmt->value, child, uses);
    if (stmt->kind == StmtKind::FunctionDef && stmt->function)
      collect_uses(stmt->function->body, child, uses);
    collect_uses(stmt->body, child, uses);
    collect_uses(stmt->orelse, child, uses);
    for (const auto &handler : stmt->handlers)
      collect_uses(handler, child, uses);
    collect_uses(stmt->finalbody, child, uses);
  }
}

// What `call` passes for `forward`'s parameter at `index` (counted after `self`) named `name`:
// the expression, and whether a splatted argument (`*args`, or `**kwargs` before it) may pass it.
struct PassedArgument {
  const Expr *expr = nullptr;
  bool splatted = false;
};

PassedArgument passed_argument(const Expr *call, size_t index, std::string_view name) {
  for (size_t i = 1; i < call->operands.size(); ++i) {
    if (call->operands[i]->kind == ExprKind::Starred)
      return {nullptr, true};
    if (i - 1 == index)
      return {call->operands[i], false};
  }
  bool splatted = false;
  for (const Keyword &k : call->keywords) {
    if (k.name.empty())
      splatted = true; // **kwargs
    else if (k.name == name)
      return {k.value, splatted};
  }
  return {nullptr, splatted};
}

// Whether `call` passes a value other than None for that parameter. A splatted argument may pass
// anything.
bool passes(const Expr *call, size_t index, std::string_view name) {
  PassedArgument passed = passed_argument(call, index, name);
  return passed.splatted || (passed.expr && passed.expr->kind != ExprKind::NoneLiteral);
}
// accelerate walks a module's own parameters, then its children, then its own buffers: the
// first item is a parameter, if there is one (a `register_buffer` mask comes after the children).
const ParameterDecl *first_own_parameter(const ModuleClass *cls) {
  for (const ParameterDecl *p : cls->all_parameters())
    if (!p->is_buffer)
      return p;
  return nullptr;
}
} // namespace

PlacementModel::PlacementModel(const Package &package) : package_(package) {
  for (const auto &cls : package.classes)
    for (const ChildDecl *child : cls->all_children())
      if (child->resolved)
        parents_[child->resolved].push_back(cls.get());
  for (const auto &cls : package.classes) {
    if (!cls->is_module)
      continue;
    UnitFacts f;
    const ModuleClass *c = cls.get();
    bool has_children = false;
    for (const ChildDecl *child : c->all_children())
      has_children |= child->has_parameters;
    bool no_split_listed = c->scope->lists_no_split(c->name);
    // Python code that moves some children itself (`self.attn = attn.to(dev)`) places them by
    // hand, device map or not: what it leaves where the loader put it may sit elsewhere.
    bool placed_by_hand = false;
    if (c->file && !c->file->explicit_placement)
      for (const ChildDecl *child : c->all_children())
        placed_by_hand |= !child->placed_on.empty() || !child->placed_device.empty();
    f.may_split = (c->scope->supports_device_map || placed_by_hand) && has_children &&
                  !never_split_context(c, 0);
    f.on_first_chain = first_chain(c, 0);
    if (f.may_split && !c->scope->supports_device_map)
      f.split_reason = SplitReason::PlacedByHand;
    else if (f.may_split && c->scope->refuses_string_maps)
      f.split_reason = SplitReason::NoListInModel; // only reached with --hand-made-maps
    else if (f.may_split && c->scope->without_loader)
      f.split_reason = SplitReason::NoLoader; // only reached with --hand-made-maps
    else if (f.may_split)
      f.split_reason = SplitReason::NotListed;
    else if (no_split_listed)
      f.split_reason = SplitReason::Listed;
    facts_.emplace(c, std::move(f));
  }
  for (auto &[cls, f] : facts_) {
    if (!f.may_split)
      f.input_group = {DeviceGroup::Kind::Unit, "", false};
    else if (f.on_first_chain) {
      std::string first = first_item_path(cls);
      // Unknown first item: inputs may share any device, so they flag nothing.
      f.input_group = first.empty() ? DeviceGroup{} : child_group(first, cls, false);
    } else
      f.input_group = {DeviceGroup::Kind::Input, "", false};
  }
  for (auto &[cls, f] : facts_)
    if (f.may_split)
      if (auto absent = arguments_absent_where_split(cls); !absent.empty())
        absent_where_split_.emplace(cls, std::move(absent));
  for (auto &[cls, f] : facts_) {
    if (!f.may_split)
      continue;
    std::vector<std::string_view> weightless;
    if (auto unbuilt = parameters_unbuilt_where_split(cls, &weightless); !unbuilt.empty())
      unbuilt_where_split_.emplace(cls, std::move(unbuilt));
    if (!weightless.empty())
      weightless_where_split_.emplace(cls, std::move(weightless));
  }
  find_arguments_handed_by_callers();
}

namespace {} // namespace

// Whether `e`, in `method` of `caller`, is the output of another of the caller's modules.
bool PlacementModel::output_of_other_modules(const Expr *e, const ChildCall &at, int depth) const {
  if (!e || depth > 6)
    return false;
  switch (e->kind) {
  case ExprKind::Call: {
    const Expr *callee = e->operands[0];
    const Expr *target = callee->kind == ExprKind::Attribute && callee->text == "forward"
                             ? callee->operands[0]
                             : callee;
    if (target->kind == ExprKind::Attribute && is_name(target->operands[0], "self")) {
      const ChildDecl *other = at.caller->find_child(target->text);
      return other && other != at.child && other->has_parameters;
    }
    // A tensor method keeps the device, except the ones that move it.
    if (callee->kind == ExprKind::Attribute && callee->text != "to" && callee->text != "cuda" &&
        callee->text != "type_as" && !is_name(callee->operands[0], "torch"))
      return output_of_other_modules(callee->operands[0], at, depth + 1);
    return false;
  }
  case ExprKind::Subscript:
    return output_of_other_modules(e->operands[0], at, depth + 1);
  case ExprKind::Attribute:
    return !is_name(e->operands[0], "self") &&
           output_of_other_modules(e->operands[0], at, depth + 1);
  case ExprKind::Name: {
    bool assigned_from_modules = false;
    find_statement(at.method->body, [&](const Stmt *s) {
      if (s->kind != StmtKind::Assign || !s->value)
        return false;
      for (const Expr *t : s->targets) {
        bool names = t->kind == ExprKind::Name && t->text == e->text;
        if (t->kind == ExprKind::Tuple)
          for (const Expr *item : t->operands)
            names = names || (item->kind == ExprKind::Name && item->text == e->text);
        if (names && output_of_other_modules(s->value, at, depth + 1))
          assigned_from_modules = true;
      }
      return assigned_from_modules;
    });
    if (assigned_from_modules)
      return true;
    return at.method->name == "forward" && at.method->has_parameter(e->text) &&
           handed_by_caller(at.caller, e->text);
  }
  default:
    return false;
  }
}

void PlacementModel::find_arguments_handed_by_callers() {
  std::vector<ChildCall> calls;
  for (const auto &cls : package_.classes) {
    const ModuleClass *caller = cls.get();
    for (const ChildDecl *child : caller->all_children()) {
      if (!child->resolved || child->kind != ChildKind::Single)
        continue;
      const UnitFacts &f = facts(child->resolved);
      if (!f.may_split || !f.on_first_chain || !child->resolved->find_method("forward"))
        continue;
      for (const FunctionDef *method : caller->def->methods) {
        if (method->name == "__init__")
          continue;
        ChildUses uses;
        collect_uses(method->body, child->name, uses);
        for (const Expr *call : uses.calls)
          calls.push_back({caller, method, child, call});
      }
    }
  }
  if (calls.empty())
    return;
  // Callers hand on what their own callers handed them: repeat until nothing changes.
  for (int round = 0; round < 8; ++round) {
    bool changed = false;
    for (const ChildCall &at : calls) {
      const ModuleClass *unit = at.child->resolved;
      const FunctionDef *forward = unit->find_method("forward");
      for (size_t p = 1; p < forward->parameters.size(); ++p) {
        std::string_view name = forward->parameters[p].name;
        if (forward->parameters[p].variadic || handed_by_caller(unit, name))
          continue;
        if (output_of_other_modules(passed_argument(at.expr, p - 1, name).expr, at, 0)) {
          handed_by_caller_[unit].push_back(name);
          changed = true;
        }
      }
    }
    if (!changed)
      break;
  }
}

bool PlacementModel::handed_by_caller(const ModuleClass *unit, std::string_view parameter) const {
  return lists(handed_by_caller_, unit, parameter);
}

std::vector<std::string_view>
PlacementModel::arguments_absent_where_split(const ModuleClass *unit) const {
  const FunctionDef *forward = unit->find_method("forward");
  auto it = parents_.find(unit);
  if (!forward || it == parents_.end() || it->second.empty())
    return {};
  std::vector<bool> passed(forward->parameters.size(), false);
  size_t seen_calls = 0;
  for (const ModuleClass *parent : it->second) {
    if (never_split_context(parent, 0))
      continue; // kept whole there: any argument meets only its own devices
    for (const ChildDecl *child : parent->all_children()) {
      if (child->resolved != unit)
        continue;
      if (child->kind != ChildKind::Single)
        return {}; // called through a loop over a list: calls not matched here
      ChildUses uses;
      for (const ModuleClass *c = parent; c;) {
        for (const FunctionDef *method : c->def->methods)
          if (method->name != "__init__") // where the child is built, not called
            collect_uses(method->body, child->name, uses);
        c = c->bases.empty() ? nullptr : c->bases.front();
      }
      if (uses.other_use)
        return {};
      seen_calls += uses.calls.size();
      for (const Expr *call : uses.calls)
        for (size_t p = 1; p < forward->parameters.size(); ++p)
          passed[p] = passed[p] || forward->parameters[p].variadic ||
                      passes(call, p - 1, forward->parameters[p].name);
    }
  }
  if (seen_calls == 0)
    return {};
  std::vector<std::string_view> absent;
  for (size_t p = 1; p < forward->parameters.size(); ++p)
    if (!passed[p] && forward->parameters[p].default_value)
      absent.push_back(forward->parameters[p].name);
  return absent;
}

namespace {

// What a constructor's own code makes of its arguments, where literals decide it:
// `self.kind = config.kind if use_extra else None` is None when `use_extra=False` is passed.
struct InitValue {
  enum class Kind { Unknown, None, Bool, Text } kind = Kind::Unknown;
  bool truth = false;
  std::string_view text;
};

InitValue literal_value(const Expr *e, const SyntaxFile *file) {
  InitValue v;
  if (!e)
    return v;
  if (e->kind == ExprKind::NoneLiteral)
    v.kind = InitValue::Kind::None;
  else if (e->kind == ExprKind::Bool) {
    v.kind = InitValue::Kind::Bool;
    v.truth = file && file->source && file->source->slice(e->range) == "True";
  } else if (e->kind == ExprKind::String || e->kind == ExprKind::Number) {
    v.kind = InitValue::Kind::Text;
    v.text = e->text;
  }
  return v;
}

struct InitRun {
  const SyntaxFile *file = nullptr;                           // the constructor's
  std::unordered_map<std::string_view, InitValue> names;      // arguments and locals
  std::unordered_map<std::string_view, InitValue> attributes; // self.<name>
  std::vector<SourceRange> reached;                           // assignments that may run

  InitValue eval(const Expr *e) const {
    if (!e)
      return {};
    switch (e->kind) {
    case ExprKind::Name: {
      auto it = names.find(e->text);
      return it == names.end() ? InitValue{} : it->second;
    }
    case ExprKind::Attribute: {
      if (e->operands[0]->kind != ExprKind::Name || e->operands[0]->text != "self")
        return {};
      auto it = attributes.find(e->text);
      return it == attributes.end() ? InitValue{} : it->second;
    }
    case ExprKind::Conditional: {
      std::optional<bool> c = truth(e->operands[1]);
      if (!c)
        return {};
      return eval(e->operands[*c ? 0 : 2]);
    }
    case ExprKind::Compare: {
      InitValue a = eval(e->operands[0]), b = eval(e->operands[1]);
      if (a.kind == InitValue::Kind::Unknown || b.kind == InitValue::Kind::Unknown)
        return {};
      bool same = a.kind == b.kind && a.truth == b.truth && a.text == b.text;
      InitValue out;
      out.kind = InitValue::Kind::Bool;
      if (e->text == "==" || e->text == "is")
        out.truth = same;
      else if (e->text == "!=" || e->text == "is not")
        out.truth = !same;
      else
        return {};
      return out;
    }
    default:
      return literal_value(e, file);
    }
  }

  std::optional<bool> truth(const Expr *e) const {
    if (e && e->kind == ExprKind::UnaryOp && e->text == "not") {
      std::optional<bool> inner = truth(e->operands[0]);
      return inner ? std::optional<bool>(!*inner) : std::nullopt;
    }
    InitValue v = eval(e);
    switch (v.kind) {
    case InitValue::Kind::None:
      return false;
    case InitValue::Kind::Bool:
      return v.truth;
    default:
      return std::nullopt; // strings and numbers: not worth guessing
    }
  }

  // `certain`: the statements surely run; otherwise what they assign becomes unknown.
  void run(const std::vector<Stmt *> &body, bool certain) {
    for (const Stmt *s : body) {
      switch (s->kind) {
      case StmtKind::Assign:
        reached.push_back(s->range);
        for (const Expr *t : s->targets) {
          InitValue v = certain ? eval(s->value) : InitValue{};
          if (t->kind == ExprKind::Name)
            names[t->text] = v;
          else if (t->kind == ExprKind::Attribute && t->operands[0]->kind == ExprKind::Name &&
                   t->operands[0]->text == "self")
            attributes[t->text] = v;
        }
        break;
      case StmtKind::If: {
        std::optional<bool> c = truth(s->value);
        if (!c || *c)
          run(s->body, certain && c.has_value());
        if (!c || !*c)
          run(s->orelse, certain && c.has_value());
        break;
      }
      case StmtKind::Return:
        if (certain)
          return;
        break;
      default:
        // Loops, with, try and plain calls (`self.register_buffer(...)`): may run, once or more.
        reached.push_back(s->range);
        run(s->body, false);
        run(s->orelse, false);
        for (const auto &h : s->handlers)
          run(h, false);
        run(s->finalbody, false);
        break;
      }
    }
  }
};

// The method of that name written in `cls`'s own body (not inherited).
const FunctionDef *own_method(const ModuleClass *cls, std::string_view name) {
  for (const FunctionDef *f : cls->def->methods)
    if (f->name == name)
      return f;
  return nullptr;
}

// The class among `cls` and its package bases that declares `child` (all_children() gathers
// the bases' children too): its file holds the constructor that builds it.
const ModuleClass *child_declarer(const ModuleClass *cls, const ChildDecl *child) {
  for (const ChildDecl &own : cls->children)
    if (&own == child)
      return cls;
  for (const ModuleClass *base : cls->bases)
    if (const ModuleClass *declarer = child_declarer(base, child))
      return declarer;
  return nullptr;
}

// The assignment in `declarer`'s own constructor that builds `child`, when it is a plain call.
// Ranges are offsets into one file: an inherited constructor lives in its own class's file.
const Expr *construction_call(const ModuleClass *declarer, const ChildDecl *child) {
  const FunctionDef *init = own_method(declarer, "__init__");
  if (!init)
    return nullptr;
  std::function<const Expr *(const std::vector<Stmt *> &)> find =
      [&](const std::vector<Stmt *> &body) -> const Expr * {
    for (const Stmt *s : body) {
      if (s->range.begin <= child->range.begin && child->range.begin < s->range.end) {
        if (s->kind == StmtKind::Assign)
          return s->value && s->value->kind == ExprKind::Call ? s->value : nullptr;
        if (const Expr *in_body = find(s->body))
          return in_body;
        return find(s->orelse);
      }
    }
    return nullptr;
  };
  return find(init->body);
}

// The argument of a norm layer's construction that says whether it holds weights: torch's
// `elementwise_affine` or `affine` (torch_catalog::norm_affine_flag), by keyword or position; for
// a class of the package, its constructor's parameter of that name. Null when the call passes
// none.
const Expr *affine_argument(const Expr *call, const Package &package, const SyntaxFile *file) {
  const Expr *callee = call->operands[0];
  std::string_view leaf = callee->kind == ExprKind::Name || callee->kind == ExprKind::Attribute
                              ? callee->text
                              : std::string_view();
  if (leaf.empty())
    return nullptr;
  for (std::string_view flag : {"elementwise_affine", "affine"})
    if (const Keyword *k = call->keyword(flag))
      return k->value;
  size_t operand = 0; // call->operands[0] is the callee: argument i is operand i + 1
  if (const ModuleClass *cls = package.find_class(leaf, file)) {
    const FunctionDef *init = cls->find_method("__init__");
    for (size_t p = 1; init && p < init->parameters.size(); ++p)
      if (init->parameters[p].name == "elementwise_affine" || init->parameters[p].name == "affine")
        operand = p;
  } else if (auto flag = torch_catalog::norm_affine_flag(leaf)) {
    operand = flag->position + 1;
  }
  return operand > 0 && operand < call->operands.size() ? call->operands[operand] : nullptr;
}

} // namespace

std::vector<std::string_view>
PlacementModel::parameters_unbuilt_where_split(const ModuleClass *unit,
                                               std::vector<std::string_view> *weightless) const {
  // Only the unit's own constructor can build its own members (an inherited one is written in
  // another class, often another file, and builds that class's members).
  const FunctionDef *init = own_method(unit, "__init__");
  auto it = parents_.find(unit);
  if (!init || !unit->file || it == parents_.end() || it->second.empty())
    return {};
  // Parameters and children, each with where the constructor makes it.
  std::vector<std::pair<std::string_view, SourceRange>> members;
  for (const ParameterDecl &p : unit->parameters)
    members.emplace_back(p.name, p.range);
  for (const ChildDecl &c : unit->children)
    members.emplace_back(c.name, c.range);
  if (members.empty())
    return {};
  std::vector<bool> built(members.size(), false);
  std::vector<bool> weighted(members.size(), false);
  size_t places = 0;
  for (const ModuleClass *parent : it->second) {
    if (never_split_context(parent, 0))
      continue; // kept whole there: its parameters sit with its activations
    for (const ChildDecl *child : parent->all_children()) {
      if (child->resolved != unit)
        continue;
      const ModuleClass *declarer = child_declarer(parent, child);
      const Expr *call = declarer ? construction_call(declarer, child) : nullptr;
      if (child->kind != ChildKind::Single || !call)
        return {};
      ++places;
      InitRun run;
      run.file = unit->file;
      const auto &params = init->parameters;
      for (size_t p = 1; p < params.size(); ++p)
        run.names[params[p].name] = literal_value(params[p].default_value, unit->file);
      for (size_t a = 1; a < call->operands.size(); ++a) {
        if (call->operands[a]->kind == ExprKind::Starred)
          return {};
        if (a < params.size() && !params[a].variadic)
          run.names[params[a].name] = literal_value(call->operands[a], declarer->file);
      }
      for (const Keyword &k : call->keywords) {
        if (k.name.empty())
          return {}; // **kwargs: anything may be passed
        run.names[k.name] = literal_value(k.value, declarer->file);
      }
      run.run(init->body, true);
      for (size_t m = 0; m < members.size(); ++m) {
        SourceRange where = members[m].second;
        bool inside_init = init->range.begin <= where.begin && where.begin < init->range.end;
        bool reached =
            !inside_init ||
            std::any_of(run.reached.begin(), run.reached.end(), [&](const SourceRange &r) {
              return r.begin <= where.begin && where.begin < r.end;
            });
        // A norm built here with its affine flag False holds nothing: a map entry of size 0,
        // placed where the device being filled is, not a device of its own
        // (`nn.LayerNorm(dim, eps, elementwise_affine)` with `elementwise_affine=False` passed).
        bool weights = reached;
        if (reached && inside_init && m >= unit->parameters.size()) {
          const ChildDecl &c = unit->children[m - unit->parameters.size()];
          const Expr *built_by = construction_call(unit, &c);
          const Expr *flag = built_by ? affine_argument(built_by, package_, unit->file) : nullptr;
          if (flag && run.truth(flag) == std::optional<bool>(false))
            weights = false;
        }
        built[m] = built[m] || reached;
        weighted[m] = weighted[m] || weights;
      }
    }
  }
  std::vector<std::string_view> unbuilt;
  for (size_t m = 0; places > 0 && m < members.size(); ++m) {
    if (!built[m])
      unbuilt.push_back(members[m].first);
    else if (!weighted[m] && weightless)
      weightless->push_back(members[m].first);
  }
  return unbuilt;
}

std::optional<DeviceGroup> PlacementModel::weightless_child_group(std::string_view child,
                                                                  const ModuleClass *unit) const {
  if (!lists(weightless_where_split_, unit, child))
    return std::nullopt;
  std::vector<const ChildDecl *> children = unit->all_children();
  auto self = std::find_if(children.begin(), children.end(),
                           [&](const ChildDecl *c) { return c->name == child; });
  if (self == children.end())
    return std::nullopt;
  auto weighted = [&](const ChildDecl *c) {
    return c->has_parameters && c->name != child && !unbuilt_where_split(unit, c->name) &&
           !lists(weightless_where_split_, unit, c->name);
  };
  for (auto before = self; before != children.begin();)
    if (weighted(*--before))
      return child_group((*before)->name, unit, true);
  for (auto after = self + 1; after != children.end(); ++after)
    if (weighted(*after))
      return child_group((*after)->name, unit, false);
  // Nothing of the unit holds weights there: all of it is one entry of size 0, with its inputs.
  return facts(unit).input_group;
}

bool PlacementModel::unbuilt_where_split(const ModuleClass *unit, std::string_view member) const {
  return lists(unbuilt_where_split_, unit, member);
}

bool PlacementModel::absent_where_split(const ModuleClass *unit, std::string_view parameter) const {
  return lists(absent_where_split_, unit, parameter);
}

const UnitFacts &PlacementModel::facts(const ModuleClass *unit) const {
  auto it = unit ? facts_.find(unit) : facts_.end();
  return it == facts_.end() ? no_unit_ : it->second;
}

// A class is never split when it is listed in _no_split_modules, has nothing to split, or every
// class that contains it is itself never split (docs/DEVICE_MODEL.md section 3).
bool PlacementModel::never_split_context(const ModuleClass *cls, int depth) const {
  if (depth > kMaxNesting)
    return false;
  if (auto memo = never_split_memo_.find(cls); memo != never_split_memo_.end())
    return memo->second;
  bool result = never_split_context_uncached(cls, depth);
  never_split_memo_.emplace(cls, result);
  return result;
}

bool PlacementModel::never_split_context_uncached(const ModuleClass *cls, int depth) const {
  if (cls->scope->lists_no_split(cls->name))
    return true;
  for (const ModuleClass *base : cls->bases)
    if (cls->scope->lists_no_split(base->name))
      return true;
  bool has_children = false;
  for (const ChildDecl *child : cls->all_children())
    has_children |= child->has_parameters;
  if (!has_children)
    return true;
  auto it = parents_.find(cls);
  if (it == parents_.end() || it->second.empty()) {
    // A building block no class visibly constructs (picked from a dict, built by a factory) in
    // a package of PreTrainedModels: its context is unknown, so it reports nothing.
    return cls->scope->has_pretrained_model && !cls->is_pretrained_model;
  }
  for (const ModuleClass *parent : it->second)
    if (!never_split_context(parent, depth + 1))
      return false;
  return true;
}

// Inputs of the model root are moved to the map's first device, where its first item sits.
bool PlacementModel::first_chain(const ModuleClass *cls, int depth) const {
  if (depth > kMaxNesting)
    return false;
  if (auto memo = first_chain_memo_.find(cls); memo != first_chain_memo_.end())
    return memo->second;
  bool result = first_chain_uncached(cls, depth);
  first_chain_memo_.emplace(cls, result);
  return result;
}

bool PlacementModel::first_chain_uncached(const ModuleClass *cls, int depth) const {
  auto it = parents_.find(cls);
  if (it == parents_.end() || it->second.empty() || cls->is_pretrained_model)
    return true;
  for (const ModuleClass *parent : it->second) {
    if (first_own_parameter(parent))
      continue;
    for (const ChildDecl *child : parent->all_children()) {
      if (!child->has_parameters)
        continue;
      if (child->resolved == cls && first_chain(parent, depth + 1))
        return true;
      break;
    }
  }
  return false;
}

// `super(LlamaForCausalLM, self).__init__(config)` in the class's constructor (LLaVA-style
// models): the named base's own constructor never runs, so it registers no member of its own.
bool skips_constructor_of(const ModuleClass &cls, std::string_view base) {
  const FunctionDef *init = nullptr;
  for (const FunctionDef *m : cls.def->methods)
    if (m->name == "__init__")
      init = m;
  if (!init)
    return false;
  for (const Stmt *s : init->body) {
    const Expr *call = s->kind == StmtKind::Expr ? s->value : nullptr;
    if (!call || call->kind != ExprKind::Call || call->text != "__init__" ||
        call->operands[0]->kind != ExprKind::Attribute)
      continue;
    const Expr *receiver = call->operands[0]->operands[0];
    if (receiver->kind == ExprKind::Call && is_name(receiver->operands[0], "super") &&
        receiver->operands.size() == 3 && receiver->operands[1]->kind == ExprKind::Name &&
        receiver->operands[1]->text == base)
      return true;
  }
  return false;
}

std::string PlacementModel::first_item_path(const ModuleClass *cls) const {
  std::string path;
  for (int depth = 0; cls && depth < kMaxNesting; ++depth) {
    // A class built on a model class from another package (LlamaModel) registers members we
    // cannot see: its first item is unknown (unless it skips that base's constructor).
    for (const std::string &base : cls->base_names) {
      bool model_like = base.find("For") != std::string::npos ||
                        (base.size() > 5 && base.compare(base.size() - 5, 5, "Model") == 0);
      if (model_like && !package_.find_class(base) &&
          base.find("PreTrainedModel") == std::string::npos && !skips_constructor_of(*cls, base))
        return {};
    }
    if (const ParameterDecl *param = first_own_parameter(cls))
      return path + param->name;
    const ChildDecl *first = nullptr;
    for (const ChildDecl *child : cls->all_children())
      if (child->has_parameters) {
        first = child;
        break;
      }
    if (!first) {
      auto buffers = cls->all_parameters();
      return buffers.empty() ? path : path + buffers.front()->name;
    }
    path += first->name;
    if (first->kind != ChildKind::Single)
      path += ".0";
    if (!first->resolved || never_split_context(first->resolved, 0))
      return path;
    cls = first->resolved;
    path += ".";
  }
  return path;
}

// The device-map entry that holds `path` (relative to a split unit): descend while the class on
// the way may itself be split.
std::string PlacementModel::last_item_path(const ModuleClass *cls) const {
  std::string path;
  for (int depth = 0; cls && depth < kMaxNesting; ++depth) {
    const ChildDecl *last = nullptr;
    for (const ChildDecl *child : cls->all_children())
      if (child->has_parameters)
        last = child;
    if (!last)
      return path.empty() ? path : path.substr(0, path.size() - 1);
    path += last->name;
    if (last->kind != ChildKind::Single)
      return path + ".last";
    if (!last->resolved || never_split_context(last->resolved, 0))
      return path;
    cls = last->resolved;
    path += ".";
  }
  return path;
}

DeviceGroup PlacementModel::child_group(std::string_view path, const ModuleClass *unit,
                                        bool output) const {
  const ModuleClass *cls = unit;
  size_t pos = 0;
  while (cls) {
    size_t dot = path.find('.', pos);
    std::string_view segment =
        path.substr(pos, dot == std::string_view::npos ? path.npos : dot - pos);
    const ChildDecl *child = cls->find_child(segment);
    if (!child)
      return DeviceGroup::entry(std::string(path.substr(0, dot))); // a split class's parameter
    size_t end = dot;
    if (child->kind != ChildKind::Single && dot != std::string_view::npos) {
      end = path.find('.', dot + 1); // keep the element index: layers.3
    }
    if (!child->resolved || never_split_context(child->resolved, 0))
      return DeviceGroup::entry(std::string(path.substr(0, end)));
    if (end == std::string_view::npos) {
      std::string last = output ? last_item_path(child->resolved) : std::string();
      return DeviceGroup::entry(std::string(path) + (last.empty() ? "" : "." + last));
    }
    cls = child->resolved;
    pos = end + 1;
  }
  return DeviceGroup::entry(std::string(path));
}

DeviceGroup PlacementModel::group_of(const Origin &origin, const ModuleClass *unit) const {
  if (origin.has(OriginFact::Component))
    return {DeviceGroup::Kind::Component,
            std::string(origin.label.substr(0, origin.label.find('.'))), false};
  switch (origin.kind) {
  case OriginKind::Fresh:
  case OriginKind::PlainTensor:
    return {DeviceGroup::Kind::Cpu, "", false};
  case OriginKind::Skip:
    return {};
  case OriginKind::HeldState: {
    // Built where the model's inputs are: in a split unit on the first chain, with its inputs.
    const UnitFacts &held_in = facts(unit);
    if (held_in.may_split && held_in.on_first_chain)
      return held_in.input_group;
    return {DeviceGroup::Kind::Held, "", false};
  }
  case OriginKind::LiteralDevice:
    return {DeviceGroup::Kind::Literal,
            origin.label == "cuda" ? "cuda:0" : std::string(origin.label), false};
  case OriginKind::RunTimeDevice:
    return {DeviceGroup::Kind::RunTime, std::string(origin.device_key), false};
  default:
    break;
  }
  // A member module script code moved on its own (`model->head->to(torch::kCUDA, 1)` in `main`)
  // computes there, and its weights are there: not where the rest of its model is.
  if ((origin.kind == OriginKind::Child || origin.kind == OriginKind::Parameter) &&
      origin.moved_by_caller) {
    DeviceGroup moved = group_of(*origin.moved_by_caller, unit);
    moved.apart_from_unit = true;
    return moved;
  }
  // Where code is placed explicitly (LibTorch), a child that __init__ moved to a literal device
  // computes there, whatever device the rest of the module is on.
  if (origin.kind == OriginKind::Child && unit && unit->file && unit->file->explicit_placement) {
    std::string_view first = origin.label.substr(0, origin.label.find('.'));
    if (const ChildDecl *child = unit->find_child(first); child && !child->placed_device.empty())
      return child->placed_device == "cpu"
                 ? DeviceGroup{DeviceGroup::Kind::Cpu, "", false}
                 : DeviceGroup{DeviceGroup::Kind::Literal, child->placed_device, false};
  }
  const UnitFacts &f = facts(unit);
  if (!f.may_split)
    return {DeviceGroup::Kind::Unit, "", false};
  switch (origin.kind) {
  case OriginKind::Input:
    // A cache the block returned and receives again sits on the devices of the projections that
    // made it (docs/DEVICE_MODEL.md section 3).
    if (is_own_cache_name(origin.label))
      return {};
    if (absent_where_split(unit, origin.label))
      return {};
    if (origin.function && origin.function->name == "forward" &&
        handed_by_caller(unit, origin.label))
      return {DeviceGroup::Kind::Input, "made by the caller's modules", false};
    return f.input_group;
  case OriginKind::Child: {
    std::string_view first = origin.label.substr(0, origin.label.find('.'));
    if (unbuilt_where_split(unit, first))
      return {};
    if (std::optional<DeviceGroup> group = weightless_child_group(first, unit))
      return *group;
    // Children __init__ moved to one device it was given (`self.mlp = mlp.to(dev)`) are where
    // the code put them together.
    if (const ChildDecl *child = unit->find_child(first); child && !child->placed_on.empty())
      return {DeviceGroup::Kind::Placed, child->placed_on, false};
    return child_group(origin.label, unit, true);
  }
  case OriginKind::Parameter:
    // Only built where the class is kept whole: there it sits with the activations.
    if (unbuilt_where_split(unit, origin.label))
      return {};
    return child_group(origin.label, unit, false);
  case OriginKind::LayerIteration:
    return {DeviceGroup::Kind::Iteration, std::string(origin.label),
            origin.has(OriginFact::EarlierIteration)};
  default:
    return {DeviceGroup::Kind::Unit, "", false};
  }
}

} // namespace devlint
