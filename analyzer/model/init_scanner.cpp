// What a module class's __init__ (and the helpers it calls) declares: children, parameters and
// buffers, plain tensor attributes; and which attributes other methods reassign.
#include "model/package_builder.h"
#include "model/text.h"
#include "model/torch_catalog.h"

namespace devlint {

void PackageBuilder::collect_members(ModuleClass &cls) {
  for (const Stmt *s : cls.def->body) {
    if (s->kind != StmtKind::Assign || s->targets.empty())
      continue;
    const Expr *target = s->targets[0];
    if (is_name(target, "_no_split_modules")) {
      // `None` is PreTrainedModel's default: the model refuses device_map="auto".
      cls.declares_no_split = s->value && s->value->kind != ExprKind::NoneLiteral;
      cls.no_split_range = s->range;
      collect_strings(s->value, cls.no_split_modules);
    } else if (is_name(target, "_skip_keys_device_placement")) {
      cls.declares_skip_keys = true;
      collect_strings(s->value, cls.skip_keys);
    }
  }
  for (const FunctionDef *f : cls.def->methods) {
    if (f->name == "__init__") {
      std::unordered_map<std::string_view, const FunctionDef *> local_builders;
      std::unordered_set<const FunctionDef *> visited;
      scan_init(cls, f->body, local_builders, visited);
    } else {
      collect_reassigned(cls, f->body);
    }
  }
}

void PackageBuilder::collect_strings(const Expr *e, std::vector<std::string> &out) {
  if (!e)
    return;
  if (e->kind == ExprKind::String)
    out.emplace_back(e->text);
  else if (e->kind == ExprKind::Tuple)
    for (const Expr *x : e->operands)
      collect_strings(x, out);
}

std::string_view PackageBuilder::self_attribute(const Expr *target) {
  if (target && target->kind == ExprKind::Attribute && is_name(target->operands[0], "self"))
    return target->text;
  return {};
}

void PackageBuilder::collect_reassigned(ModuleClass &cls, const std::vector<Stmt *> &body) {
  for (const Stmt *s : body) {
    if (s->kind == StmtKind::Assign || s->kind == StmtKind::AugAssign) {
      for (const Expr *t : s->targets) {
        std::string_view attr = self_attribute(t);
        if (!attr.empty())
          cls.reassigned_attributes.emplace_back(attr);
        if (t && t->kind == ExprKind::Tuple)
          for (const Expr *x : t->operands) {
            std::string_view a = self_attribute(x);
            if (!a.empty())
              cls.reassigned_attributes.emplace_back(a);
          }
      }
    }
    collect_reassigned(cls, s->body);
    collect_reassigned(cls, s->orelse);
    for (const auto &h : s->handlers)
      collect_reassigned(cls, h);
    collect_reassigned(cls, s->finalbody);
  }
}

PackageBuilder::Built PackageBuilder::classify_constructor(
    const Expr *e, const std::unordered_map<std::string_view, const FunctionDef *> &builders,
    int depth) {
  Built out;
  if (!e || depth > 4)
    return out;
  if (e->kind == ExprKind::Subscript) {
    // ACT2FN[config.hidden_act]: an activation, no parameters.
    std::string_view leaf = leaf_of(e->operands[0]);
    if (leaf == "ACT2FN" || leaf == "ACT2CLS") {
      out.is_module = true;
      out.has_parameters = false;
      out.class_name = "activation";
    }
    return out;
  }
  if (e->kind == ExprKind::Conditional) {
    Built a = classify_constructor(e->operands[0], builders, depth + 1);
    return a.is_module ? a : classify_constructor(e->operands[2], builders, depth + 1);
  }
  if (e->kind != ExprKind::Call)
    return out;
  // ATTENTION_CLASSES[config._attn_implementation](config): a module-level dict of classes.
  if (e->operands[0]->kind == ExprKind::Subscript &&
      e->operands[0]->operands[0]->kind == ExprKind::Name) {
    auto dict = pkg_.class_dicts.find(e->operands[0]->operands[0]->text);
    if (dict != pkg_.class_dicts.end() && !dict->second.empty()) {
      if (const ModuleClass *cls = pkg_.find_class(dict->second.front())) {
        out.class_name = std::string(cls->name);
        out.is_module = cls->is_module;
      }
    }
    return out;
  }
  std::string_view leaf = callee_leaf(e);
  std::string dotted = dotted_name(e->operands[0]);
  if (leaf.empty())
    return out;
  if (leaf == "get_activation") {
    out.is_module = true;
    out.has_parameters = false;
    out.class_name = "activation";
    return out;
  }
  auto builder = builders.find(leaf);
  const FunctionDef *fn = builder != builders.end() ? builder->second : pkg_.find_function(leaf);
  if (fn && e->operands[0]->kind == ExprKind::Name) {
    for (const Stmt *s : fn->body)
      if (s->kind == StmtKind::Return && s->value) {
        Built b = classify_constructor(s->value, builders, depth + 1);
        if (b.is_module)
          return b;
      }
    return out;
  }
  if (const ModuleClass *cls = pkg_.find_class(leaf)) {
    out.class_name = std::string(leaf);
    out.is_module = cls->is_module;
    out.is_loss = torch_catalog::is_loss_class(leaf);
    return out;
  }
  bool nn_namespace = starts_with(dotted, "nn.") || starts_with(dotted, "torch.nn.");
  bool class_like = !leaf.empty() && leaf[0] >= 'A' && leaf[0] <= 'Z';
  if (!class_like || leaf == "Parameter" || leaf == "ParameterList" || leaf == "ParameterDict")
    return out;
  static const std::vector<std::string_view> non_module_suffixes = {
      "Config", "Cache",   "Tokenizer", "Processor", "Output",    "Dict",
      "Tensor", "Mapping", "Generator", "Error",     "Exception", "Enum",
      "Type",   "Lock",    "Path",      "Counter",   "List"};
  if (!nn_namespace)
    for (std::string_view suffix : non_module_suffixes)
      if (ends_with(leaf, suffix))
        return out;
  if (starts_with(dotted, "torch.") && !nn_namespace)
    return out; // torch.Generator, torch.Size...
  out.class_name = std::string(leaf);
  out.is_module = true;
  out.is_loss = torch_catalog::is_loss_class(leaf);
  out.has_parameters = !out.is_loss && !torch_catalog::is_parameterless_module(leaf);
  out.is_container = leaf == "Sequential";
  return out;
}

void PackageBuilder::classify_elements(
    const Expr *e, const std::unordered_map<std::string_view, const FunctionDef *> &builders,
    ChildDecl &child) {
  if (!e)
    return;
  auto take = [&](const Expr *element) {
    Built b = classify_constructor(element, builders, 0);
    if (b.is_module && child.class_name.empty()) {
      child.class_name = b.class_name;
      child.has_parameters = b.has_parameters;
    }
  };
  if (e->kind == ExprKind::Comprehension)
    take(e->operands[0]);
  else if (e->kind == ExprKind::Tuple || e->kind == ExprKind::Dict)
    for (const Expr *x : e->operands)
      take(x->kind == ExprKind::Starred ? x->operands[0] : x);
}

void PackageBuilder::add_parameter(ModuleClass &cls, std::string_view name, bool buffer,
                                   SourceRange range) {
  if (cls.find_parameter(name))
    return;
  ParameterDecl decl;
  decl.name = std::string(name);
  decl.is_buffer = buffer;
  decl.range = range;
  cls.parameters.push_back(decl);
}

bool PackageBuilder::builds_cpu_tensor(const Expr *e, int depth) {
  if (!e || depth > 12)
    return false;
  if (e->kind == ExprKind::Call) {
    std::string dotted = dotted_name(e->operands[0]);
    std::string_view leaf = callee_leaf(e);
    if (starts_with(dotted, "torch.") &&
        (torch_catalog::is_tensor_constructor(leaf) || torch_catalog::is_random_sampling(leaf)))
      return !e->keyword("device");
    if (e->operands[0]->kind == ExprKind::Attribute)
      return builds_cpu_tensor(e->operands[0]->operands[0], depth + 1);
    return false;
  }
  if (e->kind == ExprKind::BinaryOp)
    return builds_cpu_tensor(e->operands[0], depth + 1) ||
           builds_cpu_tensor(e->operands[1], depth + 1);
  if (e->kind == ExprKind::Attribute || e->kind == ExprKind::Subscript ||
      e->kind == ExprKind::UnaryOp)
    return builds_cpu_tensor(e->operands[0], depth + 1);
  return false;
}

void PackageBuilder::scan_init(ModuleClass &cls, const std::vector<Stmt *> &body,
                               std::unordered_map<std::string_view, const FunctionDef *> &builders,
                               std::unordered_set<const FunctionDef *> &visited) {
  for (const Stmt *s : body) {
    switch (s->kind) {
    case StmtKind::FunctionDef:
      builders[s->function->name] = s->function;
      break;
    case StmtKind::Assign:
      for (const Expr *t : s->targets)
        scan_assignment(cls, t, s->value, s->range, builders);
      break;
    case StmtKind::Expr:
      scan_call(cls, s->value, s->range, builders, visited);
      break;
    default:
      break;
    }
    scan_init(cls, s->body, builders, visited);
    scan_init(cls, s->orelse, builders, visited);
    for (const auto &h : s->handlers)
      scan_init(cls, h, builders, visited);
  }
}

void PackageBuilder::scan_assignment(
    ModuleClass &cls, const Expr *target, const Expr *value, SourceRange range,
    const std::unordered_map<std::string_view, const FunctionDef *> &builders) {
  std::string_view attr = self_attribute(target);
  if (attr.empty() || !value)
    return;
  if (value->kind == ExprKind::Call) {
    std::string_view leaf = callee_leaf(value);
    if (leaf == "Parameter") {
      add_parameter(cls, attr, false, range);
      return;
    }
    if (leaf == "ModuleList" || leaf == "ModuleDict") {
      ChildDecl child;
      child.name = std::string(attr);
      child.kind = leaf == "ModuleList" ? ChildKind::List : ChildKind::Dict;
      child.range = range;
      if (value->operands.size() > 1)
        classify_elements(value->operands[1], builders, child);
      add_child(cls, std::move(child));
      return;
    }
  }
  Built built = classify_constructor(value, builders, 0);
  if (built.is_module) {
    ChildDecl child;
    child.name = std::string(attr);
    child.class_name = built.class_name;
    child.has_parameters = built.has_parameters;
    child.is_loss = built.is_loss;
    child.is_container = built.is_container;
    child.range = range;
    add_child(cls, std::move(child));
    return;
  }
  if (builds_cpu_tensor(value))
    cls.plain_tensors.push_back({std::string(attr), range, true});
}

void PackageBuilder::add_child(ModuleClass &cls, ChildDecl child) {
  for (ChildDecl &existing : cls.children)
    if (existing.name == child.name) {
      if (existing.class_name.empty())
        existing = std::move(child);
      return;
    }
  cls.children.push_back(std::move(child));
}

void PackageBuilder::scan_call(ModuleClass &cls, const Expr *e, SourceRange range,
                               std::unordered_map<std::string_view, const FunctionDef *> &builders,
                               std::unordered_set<const FunctionDef *> &visited) {
  if (!e || e->kind != ExprKind::Call)
    return;
  std::string_view leaf = callee_leaf(e);
  const Expr *callee = e->operands[0];
  bool on_self = callee->kind == ExprKind::Attribute && is_name(callee->operands[0], "self");
  if (on_self && (leaf == "register_buffer" || leaf == "register_parameter") &&
      e->operands.size() > 1 && e->operands[1]->kind == ExprKind::String) {
    add_parameter(cls, e->operands[1]->text, leaf == "register_buffer", range);
    if (e->operands.size() > 2) {
      const Expr *value = e->operands[2];
      bool scalar = value->kind == ExprKind::Call && callee_leaf(value) == "tensor" &&
                    value->operands.size() > 1 && value->operands[1]->kind != ExprKind::Tuple &&
                    value->operands[1]->kind != ExprKind::Comprehension;
      for (ParameterDecl &p : cls.parameters)
        if (p.name == e->operands[1]->text)
          p.is_scalar = scalar;
    }
    return;
  }
  if (on_self && (leaf == "add_module" || leaf == "register_module") && e->operands.size() > 2 &&
      e->operands[1]->kind == ExprKind::String) {
    Built built = classify_constructor(e->operands[2], builders, 0);
    ChildDecl child;
    child.name = std::string(e->operands[1]->text);
    child.class_name = built.class_name;
    child.has_parameters = built.has_parameters;
    child.range = range;
    add_child(cls, std::move(child));
    return;
  }
  // self.layers = nn.ModuleList() followed by self.layers.append(Block(...)) in a loop.
  if ((leaf == "append" || leaf == "extend") && callee->kind == ExprKind::Attribute &&
      e->operands.size() > 1) {
    std::string_view list = self_attribute(callee->operands[0]);
    for (ChildDecl &child : cls.children)
      if (child.name == list && child.kind != ChildKind::Single && child.class_name.empty()) {
        if (leaf == "append") {
          Built built = classify_constructor(e->operands[1], builders, 0);
          child.class_name = built.class_name;
          child.has_parameters = built.has_parameters;
        } else {
          classify_elements(e->operands[1], builders, child);
        }
      }
    return;
  }
  // Helpers called from __init__ (self._init_rope(), self._build_layers()) also declare members.
  if (on_self) {
    if (const FunctionDef *f = cls.find_method(leaf))
      if (visited.insert(f).second)
        scan_init(cls, f->body, builders, visited);
  }
}

} // namespace devlint
