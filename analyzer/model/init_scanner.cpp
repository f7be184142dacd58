// What a module class's __init__ (and the helpers it calls) declares: children, parameters and
// buffers, plain tensor attributes; and which attributes other methods reassign.
#include <algorithm>

#include "model/package_builder.h"
#include "model/text.h"
#include "model/torch_catalog.h"

namespace devlint {
namespace {

// Class methods that return an instance of their class.
bool is_factory_method(std::string_view leaf) {
  return leaf == "from_config" || leaf == "_from_config" || leaf == "from_pretrained";
}

// Module methods that return the module itself (`Block(cfg).to(device)`).
bool keeps_module(std::string_view leaf) {
  return leaf == "to" || leaf == "cuda" || leaf == "cpu" || leaf == "half" || leaf == "float" ||
         leaf == "bfloat16" || leaf == "eval" || leaf == "train" || leaf == "requires_grad_" ||
         leaf == "type";
}

// How methods use `self.<attr>`: called (`self.attr(x)`), or read as an object with members
// (`self.attr.config`, `self.attr.get_input_embeddings()`), which plain callables are not.
struct AttributeUse {
  bool called = false;
  bool has_members = false;
};

void find_uses(const Expr *e, std::string_view attr, AttributeUse &use, int depth = 0) {
  if (!e || depth > 64)
    return;
  // `self.attr(x)`, or its `forward` run directly (`self.mlp.forward(x)`).
  if (e->kind == ExprKind::Call &&
      (is_self_attribute(e->operands[0], attr) ||
       (e->operands[0]->kind == ExprKind::Attribute &&
        (e->operands[0]->text == "forward" || e->operands[0]->text == "__call__") &&
        is_self_attribute(e->operands[0]->operands[0], attr))))
    use.called = true;
  if (e->kind == ExprKind::Attribute && is_self_attribute(e->operands[0], attr))
    use.has_members = true;
  for (const Expr *o : e->operands)
    find_uses(o, attr, use, depth + 1);
  for (const Keyword &k : e->keywords)
    find_uses(k.value, attr, use, depth + 1);
}

void find_uses(const std::vector<Stmt *> &body, std::string_view attr, AttributeUse &use) {
  for (const Stmt *s : body) {
    find_uses(s->value, attr, use);
    for (const Expr *t : s->items)
      find_uses(t, attr, use);
    for (const Expr *t : s->targets)
      find_uses(t, attr, use);
    find_uses(s->body, attr, use);
    find_uses(s->orelse, attr, use);
    find_uses(s->finalbody, attr, use);
    for (const auto &h : s->handlers)
      find_uses(h, attr, use);
  }
}

} // namespace

std::string PackageBuilder::literal_placement(const Expr *call) const {
  if (!call || call->kind != ExprKind::Call || call->operands[0]->kind != ExprKind::Attribute)
    return {};
  std::string_view leaf = call->operands[0]->text;
  if (leaf == "cuda" && call->operands.size() == 1)
    return "cuda:0";
  if (leaf == "cpu" && call->operands.size() == 1)
    return "cpu";
  if (leaf != "to" || call->operands.size() < 2)
    return {};
  const Expr *device = call->operands[1];
  for (int hops = 0; device->kind == ExprKind::Name && hops < 4; ++hops) {
    auto local = init_locals_.find(device->text);
    if (local == init_locals_.end() || local->second == device)
      break;
    device = local->second;
  }
  if (device->kind != ExprKind::String)
    return {};
  std::string_view text = device->text;
  if (text == "cuda")
    return "cuda:0";
  if (text == "cpu" || starts_with(text, "cuda:"))
    return std::string(text);
  return {};
}

std::string PackageBuilder::named_placement(const Expr *call) {
  if (!call || call->kind != ExprKind::Call || call->operands[0]->kind != ExprKind::Attribute ||
      call->operands[0]->text != "to")
    return {};
  const Keyword *named = call->keyword("device");
  const Expr *device =
      call->operands.size() > 1 ? call->operands[1] : (named ? named->value : nullptr);
  if (!device)
    return {};
  if (device->kind == ExprKind::Name)
    return std::string(device->text);
  if (device->kind == ExprKind::Attribute && device->text == "device" &&
      is_name(device->operands[0], "self"))
    return "self.device";
  return {};
}

void PackageBuilder::collect_members(ModuleClass &cls) {
  scanning_file_ = cls.file;
  for (const Stmt *s : cls.def->body) {
    if (s->kind != StmtKind::Assign || s->targets.empty())
      continue;
    const Expr *target = s->targets[0];
    if (is_name(target, "_no_split_modules")) {
      // `None` is PreTrainedModel's default: the model refuses device_map="auto".
      cls.declares_no_split = s->value && s->value->kind != ExprKind::NoneLiteral;
      cls.assigns_no_split = true;
      collect_strings(s->value, cls.no_split_modules);
    } else if (is_name(target, "_skip_keys_device_placement")) {
      cls.declares_skip_keys = true;
      collect_strings(s->value, cls.skip_keys);
    }
  }
  for (const FunctionDef *f : cls.def->methods) {
    if (f->name == "__init__") {
      init_locals_.clear();
      std::unordered_map<std::string_view, const FunctionDef *> local_builders;
      std::unordered_set<const FunctionDef *> visited;
      scan_init(cls, f->body, local_builders, visited);
      cls.calls_passed_module = calls_passed_module(cls, *f);
    } else {
      collect_reassigned(cls, f->body, f->body);
    }
  }
}

bool PackageBuilder::calls_passed_module(const ModuleClass &cls, const FunctionDef &init) const {
  for (const Stmt *s : init.body) {
    if (s->kind != StmtKind::Assign || !s->value || s->value->kind != ExprKind::Name)
      continue;
    // One of its parameters, `self` aside.
    bool passed = init.has_parameter(s->value->text) && init.parameters[0].name != s->value->text;
    for (const Expr *t : s->targets) {
      std::string_view attr = self_attribute(t);
      if (!passed || attr.empty())
        continue;
      AttributeUse use;
      for (const FunctionDef *m : cls.def->methods)
        if (m != &init)
          find_uses(m->body, attr, use);
      if (use.called)
        return true;
    }
  }
  return false;
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

namespace {

// What a method chain starts from: `x` in `x.to(d).float()`.
const Expr *method_chain_root(const Expr *e) {
  while (e && e->kind == ExprKind::Call && e->operands[0]->kind == ExprKind::Attribute)
    e = e->operands[0]->operands[0];
  return e;
}

// `e` is `self.<attr>` or a method chain on it (`self.attr.to(x.device)`), or on `local`.
bool rooted_at(const Expr *e, std::string_view attr, std::string_view local) {
  e = method_chain_root(e);
  if (!e)
    return false;
  if (e->kind == ExprKind::Attribute && e->text == attr && is_name(e->operands[0], "self"))
    return true;
  return !local.empty() && is_name(e, local);
}

// Every assignment to `local` in the function reads `self.<attr>`, or moves `local` itself.
bool only_holds_attribute(const std::vector<Stmt *> &body, std::string_view local,
                          std::string_view attr, bool &seen) {
  for (const Stmt *s : body) {
    if (s->kind == StmtKind::AugAssign && is_name(s->targets[0], local))
      return false;
    if (s->kind == StmtKind::Assign)
      for (const Expr *t : s->targets) {
        if (t->kind == ExprKind::Tuple)
          for (const Expr *x : t->operands)
            if (is_name(x, local))
              return false;
        if (!is_name(t, local))
          continue;
        if (!rooted_at(s->value, attr, local))
          return false;
        seen = true;
      }
    if (!only_holds_attribute(s->body, local, attr, seen) ||
        !only_holds_attribute(s->orelse, local, attr, seen) ||
        !only_holds_attribute(s->finalbody, local, attr, seen))
      return false;
    for (const auto &h : s->handlers)
      if (!only_holds_attribute(h, local, attr, seen))
        return false;
  }
  return true;
}

// `embed_positions = self.embed_positions; ...; self.embed_positions = embed_positions.to(d)`:
// the attribute is memoized where it was moved, never replaced by a new tensor, so what
// `__init__` built is what the first call reads.
bool keeps_attribute(const std::vector<Stmt *> &function_body, std::string_view attr,
                     const Expr *value) {
  if (rooted_at(value, attr, {}))
    return true;
  const Expr *root = method_chain_root(value);
  if (!root || root->kind != ExprKind::Name)
    return false;
  bool seen = false;
  return only_holds_attribute(function_body, root->text, attr, seen) && seen;
}

} // namespace

void PackageBuilder::collect_reassigned(ModuleClass &cls, const std::vector<Stmt *> &body,
                                        const std::vector<Stmt *> &function_body) {
  for (const Stmt *s : body) {
    if (s->kind == StmtKind::Assign || s->kind == StmtKind::AugAssign) {
      for (const Expr *t : s->targets) {
        std::string_view attr = self_attribute(t);
        if (!attr.empty() &&
            !(s->kind == StmtKind::Assign && keeps_attribute(function_body, attr, s->value)))
          cls.reassigned_attributes.emplace_back(attr);
        if (t && t->kind == ExprKind::Tuple)
          for (const Expr *x : t->operands) {
            std::string_view a = self_attribute(x);
            if (!a.empty())
              cls.reassigned_attributes.emplace_back(a);
          }
      }
    }
    collect_reassigned(cls, s->body, function_body);
    collect_reassigned(cls, s->orelse, function_body);
    for (const auto &h : s->handlers)
      collect_reassigned(cls, h, function_body);
    collect_reassigned(cls, s->finalbody, function_body);
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
  // ATTENTION_CLASSES[config._attn_implementation](config): a module-level dict of classes,
  // subscripted in the call or held in a local first (`attention_class = ATTENTION_CLASSES[...]`,
  // then `self.attn = attention_class(config)`).
  const Expr *chosen = e->operands[0];
  if (chosen->kind == ExprKind::Name)
    if (auto local = init_locals_.find(chosen->text);
        local != init_locals_.end() && local->second && local->second->kind == ExprKind::Subscript)
      chosen = local->second;
  if (chosen->kind == ExprKind::Subscript && !chosen->operands.empty() &&
      chosen->operands[0]->kind == ExprKind::Name) {
    auto dict = pkg_.class_dicts.find(chosen->operands[0]->text);
    if (dict != pkg_.class_dicts.end() && !dict->second.empty()) {
      if (const ModuleClass *cls = pkg_.find_class(dict->second.front(), scanning_file_)) {
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
  for (std::string_view flag : {"elementwise_affine", "affine"})
    if (const Keyword *k = e->keyword(flag))
      out.affine_off = k->value->kind == ExprKind::Bool && scanning_file_ &&
                       scanning_file_->source->slice(k->value->range) == "False";
  const Expr *callee = e->operands[0];
  // Factories build children too: `AutoModelForCausalLM.from_config(cfg)`,
  // `VisionModel._from_config(cfg)`, `Block(cfg).to(device)`, `skip_init(nn.Linear, ...)`.
  if (callee->kind == ExprKind::Attribute && is_factory_method(leaf)) {
    std::string_view cls_leaf = leaf_of(callee->operands[0]);
    if (!cls_leaf.empty() && cls_leaf[0] >= 'A' && cls_leaf[0] <= 'Z') {
      out.class_name = std::string(cls_leaf);
      const ModuleClass *cls = pkg_.find_class(cls_leaf);
      out.is_module = cls ? cls->is_module : true;
    }
    return out;
  }
  if (callee->kind == ExprKind::Attribute && keeps_module(leaf))
    return classify_constructor(callee->operands[0], builders, depth + 1);
  if (leaf == "skip_init" && e->operands.size() > 1) {
    Built b;
    b.class_name = std::string(leaf_of(e->operands[1]));
    b.is_module = !b.class_name.empty();
    b.has_parameters = !torch_catalog::is_parameterless_module(b.class_name);
    return b;
  }
  if (leaf == "get_activation") {
    out.is_module = true;
    out.has_parameters = false;
    out.class_name = "activation";
    return out;
  }
  auto builder = builders.find(leaf);
  const FunctionDef *fn =
      builder != builders.end() ? builder->second : pkg_.find_function(leaf, scanning_file_);
  if (fn && e->operands[0]->kind == ExprKind::Name) {
    for (const Stmt *s : fn->body)
      if (s->kind == StmtKind::Return && s->value) {
        Built b = classify_constructor(s->value, builders, depth + 1);
        if (b.is_module)
          return b;
      }
    return out;
  }
  if (const ModuleClass *cls = pkg_.find_class(leaf, scanning_file_)) {
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
  out.has_parameters = !out.is_loss && !torch_catalog::is_parameterless_module(leaf) &&
                       !(out.affine_off && is_norm_layer(leaf));
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

void PackageBuilder::mark_scalar_buffer(ModuleClass &cls, std::string_view name,
                                        const Expr *value) {
  bool scalar = is_scalar_tensor(value, 0);
  for (ParameterDecl &p : cls.parameters)
    if (p.name == name)
      p.is_scalar = scalar;
}

// `torch.tensor(3)`, directly or through a local of __init__ (`stride = torch.tensor(s)`), or
// arithmetic between such tensors and numbers (`kernel_size - stride`): a 0-dim tensor.
bool PackageBuilder::is_scalar_tensor(const Expr *value, int depth) const {
  if (!value || depth > 4)
    return false;
  if (value->kind == ExprKind::Name)
    if (auto local = init_locals_.find(value->text); local != init_locals_.end())
      value = local->second;
  if (value->kind == ExprKind::BinaryOp)
    return (is_scalar_tensor(value->operands[0], depth + 1) &&
            (value->operands[1]->kind == ExprKind::Number ||
             is_scalar_tensor(value->operands[1], depth + 1))) ||
           (value->operands[0]->kind == ExprKind::Number &&
            is_scalar_tensor(value->operands[1], depth + 1));
  return value->kind == ExprKind::Call && callee_leaf(value) == "tensor" &&
         value->operands.size() > 1 && value->operands[1]->kind != ExprKind::Tuple &&
         value->operands[1]->kind != ExprKind::Comprehension;
}

namespace {

// `device=...`, `x.device`, `.to(...)`, `.cuda()` anywhere in the expression.
bool names_a_device(const Expr *e) {
  return any_subexpression(
      e,
      [](const Expr *x) {
        if (x->kind == ExprKind::Attribute && x->text == "device")
          return true;
        if (x->kind == ExprKind::Call &&
            (callee_leaf(x) == "to" || callee_leaf(x) == "cuda" || x->keyword("device")))
          return true;
        return x->kind == ExprKind::Name && x->text.find("device") != std::string_view::npos;
      },
      64, true);
}

} // namespace

bool PackageBuilder::builds_cpu_tensor(const Expr *e, int depth, const LocalValues *cpu_locals,
                                       const ModuleClass *cls) const {
  if (!e || depth > 12)
    return false;
  auto built = [&](const Expr *x) { return builds_cpu_tensor(x, depth + 1, cpu_locals, cls); };
  if (e->kind == ExprKind::Call) {
    std::string dotted = dotted_name(e->operands[0]);
    std::string_view leaf = callee_leaf(e);
    if (e->keyword("device"))
      return false;
    if (starts_with(dotted, "torch.") &&
        (torch_catalog::is_tensor_constructor(leaf) || torch_catalog::is_random_sampling(leaf)))
      return true;
    // Inside a package function: `torch.cat((torch.sin(x), torch.cos(x)))` of CPU tensors.
    if (cpu_locals && starts_with(dotted, "torch."))
      for (size_t i = 1; i < e->operands.size(); ++i) {
        const Expr *arg = e->operands[i];
        if (arg->kind == ExprKind::Tuple
                ? std::any_of(arg->operands.begin(), arg->operands.end(), built)
                : built(arg))
          return true;
      }
    // `self.box_bias = self.compute_box_bias(n)`: a method of the class building it alike.
    if (cls && e->operands[0]->kind == ExprKind::Attribute &&
        is_name(e->operands[0]->operands[0], "self"))
      if (const FunctionDef *method = cls->find_method(leaf))
        return returns_cpu_tensor(*method, depth + 1, cls);
    if (e->operands[0]->kind == ExprKind::Attribute)
      return leaf != "to" && leaf != "cuda" && built(e->operands[0]->operands[0]);
    // `self.embed_positions = create_sinusoidal_positions(n, dim)`: a package function that
    // builds its result from torch constructors alone.
    if (e->operands[0]->kind == ExprKind::Name)
      if (const FunctionDef *fn = pkg_.find_function(leaf, scanning_file_))
        return returns_cpu_tensor(*fn, depth + 1, nullptr);
    return false;
  }
  if (e->kind == ExprKind::BinaryOp)
    return built(e->operands[0]) || built(e->operands[1]);
  if (e->kind == ExprKind::Attribute || e->kind == ExprKind::Subscript ||
      e->kind == ExprKind::UnaryOp)
    return built(e->operands[0]);
  if (e->kind == ExprKind::Name && cpu_locals)
    return cpu_locals->count(e->text) > 0;
  return false;
}

// Every `return` of the function builds a CPU tensor from its own locals (never from its
// parameters), and nothing in it names a device. Guard clauses (`if ...: raise`) and in-place
// arithmetic on a local are allowed; other branches and loops are too much to follow here.
bool PackageBuilder::returns_cpu_tensor(const FunctionDef &fn, int depth,
                                        const ModuleClass *cls) const {
  LocalValues locals;
  bool returns = false;
  auto guard = [](const Stmt *s) {
    return s->kind == StmtKind::If && s->orelse.empty() && !s->body.empty() &&
           std::all_of(s->body.begin(), s->body.end(),
                       [](const Stmt *b) { return b->kind == StmtKind::Raise; });
  };
  for (const Stmt *s : fn.body) {
    if (s->kind == StmtKind::Assign && s->targets.size() == 1 && s->value) {
      // Decided at the assignment, so `x = x.view(-1, 2)` reads the earlier `x`.
      const Expr *target = s->targets[0];
      const bool cpu = builds_cpu_tensor(s->value, depth, &locals, cls);
      auto bind = [&](const Expr *name) {
        if (cpu)
          locals.insert(name->text);
        else
          locals.erase(name->text);
      };
      if (target->kind == ExprKind::Name)
        bind(target);
      else if (target->kind == ExprKind::Tuple) // `xx, yy = torch.meshgrid(x, y)`
        for (const Expr *element : target->operands) {
          if (element->kind != ExprKind::Name)
            return false;
          bind(element);
        }
      else
        return false;
    } else if (s->kind == StmtKind::Return && s->value) {
      if (!builds_cpu_tensor(s->value, depth, &locals, cls))
        return false;
      returns = true;
    } else if (s->kind != StmtKind::Expr && s->kind != StmtKind::AugAssign && !guard(s)) {
      return false;
    }
  }
  if (!returns)
    return false;
  for (const Stmt *s : fn.body)
    if (s->value && names_a_device(s->value))
      return false;
  return true;
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
      for (const Expr *t : s->targets) {
        if (t->kind == ExprKind::Name && s->value)
          init_locals_[t->text] = s->value; // `layer = Block(cfg); self.block = layer`
        if (t->kind == ExprKind::Tuple)
          scan_tuple_assignment(cls, t, s->value, s->range, builders);
        else
          scan_assignment(cls, t, s->value, s->range, builders);
      }
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

namespace {

// Every value assigned to `name` anywhere in `body` (both branches of an `if`).
void assignments_to(const std::vector<Stmt *> &body, std::string_view name,
                    std::vector<const Expr *> &out) {
  for (const Stmt *s : body) {
    if (s->kind == StmtKind::Assign && s->value)
      for (const Expr *t : s->targets)
        if (t->kind == ExprKind::Name && t->text == name)
          out.push_back(s->value);
    assignments_to(s->body, name, out);
    assignments_to(s->orelse, name, out);
  }
}

} // namespace

void PackageBuilder::scan_tuple_assignment(
    ModuleClass &cls, const Expr *targets, const Expr *value, SourceRange range,
    const std::unordered_map<std::string_view, const FunctionDef *> &builders) {
  if (!value || value->kind != ExprKind::Call || value->operands[0]->kind != ExprKind::Name)
    return;
  std::string_view leaf = callee_leaf(value);
  auto builder = builders.find(leaf);
  const FunctionDef *fn =
      builder != builders.end() ? builder->second : pkg_.find_function(leaf, scanning_file_);
  if (!fn)
    return;
  for (const Stmt *s : fn->body) {
    if (s->kind != StmtKind::Return || !s->value || s->value->kind != ExprKind::Tuple ||
        s->value->operands.size() != targets->operands.size())
      continue;
    for (size_t i = 0; i < targets->operands.size(); ++i) {
      const Expr *element = s->value->operands[i];
      std::vector<const Expr *> candidates;
      if (element->kind == ExprKind::Name)
        assignments_to(fn->body, element->text, candidates);
      else
        candidates.push_back(element);
      for (const Expr *candidate : candidates)
        if (classify_constructor(candidate, builders, 1).is_module) {
          scan_assignment(cls, targets->operands[i], candidate, range, builders);
          break;
        }
    }
    return;
  }
}

void PackageBuilder::scan_assignment(
    ModuleClass &cls, const Expr *target, const Expr *value, SourceRange range,
    const std::unordered_map<std::string_view, const FunctionDef *> &builders) {
  std::string_view attr = self_attribute(target);
  if (attr.empty() || !value)
    return;
  // `self.mask_token = nn.Parameter(...) if use_mask_token else None`: where it exists, it is that.
  if (value->kind == ExprKind::Conditional && value->operands.size() == 3) {
    if (value->operands[2]->kind == ExprKind::NoneLiteral)
      value = value->operands[0];
    else if (value->operands[0]->kind == ExprKind::NoneLiteral)
      value = value->operands[2];
  }
  for (int hops = 0; value->kind == ExprKind::Name && hops < 4; ++hops) {
    auto local = init_locals_.find(value->text);
    if (local == init_locals_.end() || local->second == value)
      break;
    value = local->second;
  }
  if (value->kind == ExprKind::Attribute && value->operands[0]->kind == ExprKind::Name) {
    auto local = init_locals_.find(value->operands[0]->text);
    if (local != init_locals_.end() && local->second != value) {
      Built owner = classify_constructor(local->second, builders, 0);
      if (owner.is_module && !owner.class_name.empty()) {
        // A placeholder now keeps the child's place in registration order (the device map
        // follows it); its class is filled in, or it is dropped, once every class is read.
        ChildDecl child;
        child.name = std::string(attr);
        child.range = range;
        add_child(cls, child);
        member_children_.push_back(
            {&cls, std::move(child), owner.class_name, std::string(value->text)});
        return;
      }
    }
  }
  // `self.a = self.a.to("cuda:1")` (LibTorch's `a->to({kCUDA, 1})`) places a child already built.
  std::string placed = literal_placement(value);
  if (!placed.empty() && value->operands[0]->operands[0]->kind == ExprKind::Attribute &&
      self_attribute(value->operands[0]->operands[0]) == attr)
    for (ChildDecl &child : cls.children)
      if (child.name == attr) {
        child.placed_device = placed;
        return;
      }
  if (value->kind == ExprKind::Call) {
    std::string_view leaf = callee_leaf(value);
    if (leaf == "Parameter") {
      add_parameter(cls, attr, false, range);
      return;
    }
    // `self.inv_freq = nn.Buffer(t, persistent=False)` (torch 2.5) registers a buffer, as
    // register_buffer does: a tensor of this module, not a child module.
    std::string dotted = dotted_name(value->operands[0]);
    if (leaf == "Buffer" && (dotted == "nn.Buffer" || dotted == "torch.nn.Buffer")) {
      add_parameter(cls, attr, true, range);
      if (value->operands.size() > 1)
        mark_scalar_buffer(cls, attr, value->operands[1]);
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
    child.affine_off = built.affine_off;
    child.is_loss = built.is_loss;
    child.is_container = built.is_container;
    child.range = range;
    child.placed_device = placed; // `self.a = A().to("cuda:1")`
    child.placed_on = named_placement(value);
    add_child(cls, std::move(child));
    return;
  }
  if (builds_cpu_tensor(value, 0, nullptr, &cls)) {
    cls.plain_tensors.push_back({std::string(attr), range, true});
    return;
  }
  // A subclass that builds the attribute otherwise (`self.box_bias = self.placed_bias(cfg)`
  // after `super().__init__`) hides its base's CPU tensor.
  if (value->kind == ExprKind::Call &&
      std::none_of(cls.plain_tensors.begin(), cls.plain_tensors.end(),
                   [attr](const PlainTensorAttribute &p) { return p.name == attr; }))
    cls.plain_tensors.push_back({std::string(attr), range, false});
  // `self.vision_tower = build_vision_tower(cfg)` with a builder from outside the package: a
  // child if some method calls it (decided once every method has been read).
  if (value->kind == ExprKind::Call && is_opaque_factory_call(value)) {
    ChildDecl child;
    child.name = std::string(attr);
    child.class_name = std::string(callee_leaf(value)) + "()";
    child.range = range;
    child.placed_on = named_placement(value);
    factory_candidates_[&cls].push_back(std::move(child));
  }
}

// A call to a function that is not torch's, not a builtin, not the package's own: it may build
// anything, a module included.
bool PackageBuilder::is_opaque_factory_call(const Expr *call) const {
  std::string dotted = dotted_name(call->operands[0]);
  std::string_view leaf = callee_leaf(call);
  if (leaf.empty() || dotted.empty() || starts_with(dotted, "torch.") ||
      starts_with(dotted, "nn.") || starts_with(dotted, "self.") || starts_with(dotted, "F.") ||
      starts_with(dotted, "config.") || starts_with(dotted, "math.") ||
      starts_with(dotted, "np.") || pkg_.find_function(leaf) || pkg_.find_class(leaf))
    return false;
  static const std::unordered_set<std::string_view> builtins = {
      "getattr", "int", "float", "bool", "str",   "list", "dict",       "tuple",  "set", "len",
      "max",     "min", "range", "sum",  "round", "abs",  "isinstance", "sorted", "zip", "type"};
  return !builtins.count(leaf) && !(leaf[0] >= 'A' && leaf[0] <= 'Z');
}

void PackageBuilder::promote_called_factories() {
  for (auto &[cls, candidates] : factory_candidates_)
    for (ChildDecl &candidate : candidates) {
      if (cls->find_child(candidate.name))
        continue;
      AttributeUse use;
      for (const auto &other : pkg_.classes) {
        bool related = other.get() == cls;
        for (const ModuleClass *b : other->bases)
          related |= b == cls;
        if (!related)
          continue;
        for (const FunctionDef *f : other->def->methods)
          if (f->name != "__init__")
            find_uses(f->body, candidate.name, use);
      }
      // A callable without members may be an activation: its output stays with its input. One
      // moved to a device (`self.norm = norm.to(dev)`) is a module that has something to move.
      candidate.has_parameters =
          use.has_members || candidate.class_name == "to()" || candidate.class_name == "cuda()";
      if (use.called)
        add_child(*cls, std::move(candidate));
    }
}

void PackageBuilder::resolve_member_children() {
  for (MemberChild &m : member_children_) {
    const ModuleClass *owner = pkg_.find_class(m.owner_class, m.cls->file);
    const ChildDecl *member = owner ? owner->find_child(m.member) : nullptr;
    auto &children = m.cls->children;
    for (auto it = children.begin(); it != children.end(); ++it) {
      // Still the placeholder: no later assignment replaced it.
      if (it->name != m.child.name || !it->class_name.empty() ||
          it->range.begin != m.child.range.begin)
        continue;
      if (!member) { // not a submodule of the other model (its config, a method): no child
        children.erase(it);
        break;
      }
      ChildDecl child = *member;
      child.name = m.child.name;
      child.range = m.child.range;
      child.resolved = nullptr;
      *it = std::move(child);
      break;
    }
  }
}

void PackageBuilder::add_child(ModuleClass &cls, ChildDecl child) {
  auto same_name = [&](const ChildDecl &c) { return c.name == child.name; };
  auto existing = std::find_if(cls.children.begin(), cls.children.end(), same_name);
  if (existing == cls.children.end()) {
    cls.children.push_back(std::move(child));
    return;
  }
  if (existing->class_name.empty()) {
    *existing = std::move(child);
  } else if (child.has_parameters && !existing->has_parameters && !child.is_loss) {
    *existing = std::move(child); // `if ...: self.x = nn.GELU() else: self.x = Mlp()`
  } else if (child.kind == ChildKind::Single && existing->kind == ChildKind::Single &&
             child.has_parameters && existing->has_parameters && !child.is_loss &&
             !child.class_name.empty()) {
    // `if ...: self.attention = LSHAttention(config) else: self.attention =
    // LocalAttention(config)`: each class is a child of this one in the models that build it, so
    // each is kept, after the first under the same name (`find_child` still answers with the
    // first).
    auto last = existing;
    for (auto it = existing; it != cls.children.end(); ++it)
      if (same_name(*it)) {
        if (it->class_name == child.class_name)
          return;
        last = it;
      }
    cls.children.insert(last + 1, std::move(child));
  }
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
    if (e->operands.size() > 2)
      mark_scalar_buffer(cls, e->operands[1]->text, e->operands[2]);
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
    for (ChildDecl &child : cls.children) {
      if (child.name != list || child.kind == ChildKind::Single)
        continue;
      if (leaf == "append") {
        Built built = classify_constructor(e->operands[1], builders, 0);
        child.appended_classes.push_back(built.class_name);
        // Any appended element with weights gives the list weights (`net.append(act_fn)`, a
        // projection built above, then `net.append(nn.Dropout(p))`): a later weightless one
        // does not take them away.
        const bool first = child.class_name.empty() && child.appended_classes.size() == 1;
        child.has_parameters =
            first ? built.has_parameters : child.has_parameters || built.has_parameters;
        if (child.class_name.empty())
          child.class_name = built.class_name;
        continue;
      }
      if (child.class_name.empty())
        classify_elements(e->operands[1], builders, child);
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
