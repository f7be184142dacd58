#include "model/module_model.h"

#include <algorithm>
#include <functional>
#include <unordered_set>

namespace devlint {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::string_view leaf_of(const Expr *e) {
  if (!e)
    return {};
  if (e->kind == ExprKind::Name || e->kind == ExprKind::Attribute)
    return e->text;
  if (e->kind == ExprKind::Subscript) // Generic[...] bases
    return leaf_of(e->operands[0]);
  return {};
}

// torch.nn building blocks that hold no parameters: calling them moves nothing and their output
// sits where their input was.
bool is_parameterless_builtin(std::string_view leaf) {
  static const std::unordered_set<std::string_view> names = {"Dropout",
                                                             "Dropout1d",
                                                             "Dropout2d",
                                                             "Dropout3d",
                                                             "AlphaDropout",
                                                             "ReLU",
                                                             "ReLU6",
                                                             "GELU",
                                                             "SiLU",
                                                             "Tanh",
                                                             "Sigmoid",
                                                             "Softmax",
                                                             "LogSoftmax",
                                                             "Softmax2d",
                                                             "Identity",
                                                             "Flatten",
                                                             "Unflatten",
                                                             "Upsample",
                                                             "UpsamplingNearest2d",
                                                             "UpsamplingBilinear2d",
                                                             "Hardswish",
                                                             "Hardsigmoid",
                                                             "Mish",
                                                             "LeakyReLU",
                                                             "ELU",
                                                             "Softplus",
                                                             "Softsign",
                                                             "MaxPool1d",
                                                             "MaxPool2d",
                                                             "MaxPool3d",
                                                             "AvgPool1d",
                                                             "AvgPool2d",
                                                             "AvgPool3d",
                                                             "AdaptiveAvgPool1d",
                                                             "AdaptiveAvgPool2d",
                                                             "AdaptiveAvgPool3d",
                                                             "AdaptiveMaxPool1d",
                                                             "AdaptiveMaxPool2d",
                                                             "PixelShuffle",
                                                             "PixelUnshuffle",
                                                             "GLU",
                                                             "Hardtanh",
                                                             "CELU",
                                                             "SELU",
                                                             "Tanhshrink",
                                                             "QuickGELUActivation",
                                                             "GELUActivation",
                                                             "NewGELUActivation",
                                                             "ZeroPad2d",
                                                             "ConstantPad1d",
                                                             "ConstantPad2d",
                                                             "ReflectionPad2d",
                                                             "Threshold",
                                                             "ChannelShuffle",
                                                             "Fold",
                                                             "Unfold"};
  return names.count(leaf) > 0;
}

bool is_module_container(std::string_view leaf) {
  return leaf == "ModuleList" || leaf == "ModuleDict" || leaf == "Sequential";
}

// A base class name that makes a class an nn.Module when the base is not in the package.
bool is_external_module_base(const Expr *base) {
  std::string dotted = dotted_name(base);
  std::string_view leaf = leaf_of(base);
  if (leaf.empty())
    return false;
  if (leaf == "Module" || ends_with(leaf, "PreTrainedModel") || ends_with(leaf, "Model") ||
      leaf.find("For") != std::string_view::npos || leaf == "ModelMixin")
    return leaf != "GenerationMixin";
  return starts_with(dotted, "nn.") || starts_with(dotted, "torch.nn.");
}

bool has_builtin_params_base(const Expr *base) {
  std::string dotted = dotted_name(base);
  std::string_view leaf = leaf_of(base);
  if (!(starts_with(dotted, "nn.") || starts_with(dotted, "torch.nn.")))
    return false;
  return leaf != "Module" && !is_module_container(leaf) && !is_parameterless_builtin(leaf);
}

} // namespace

bool is_tensor_constructor(std::string_view leaf) {
  static const std::unordered_set<std::string_view> names = {
      "zeros",      "ones",        "empty",      "full",         "arange",       "range",
      "tensor",     "as_tensor",   "rand",       "randn",        "randint",      "randperm",
      "eye",        "linspace",    "logspace",   "tril_indices", "triu_indices", "from_numpy",
      "LongTensor", "FloatTensor", "BoolTensor", "IntTensor",    "Tensor",       "empty_strided",
      "normal",     "bernoulli",   "multinomial"};
  return names.count(leaf) > 0;
}

const ChildDecl *ModuleClass::find_child(std::string_view child) const {
  for (const ChildDecl &c : children)
    if (c.name == child)
      return &c;
  for (const ModuleClass *b : bases)
    if (const ChildDecl *c = b->find_child(child))
      return c;
  return nullptr;
}

const ParameterDecl *ModuleClass::find_parameter(std::string_view param) const {
  for (const ParameterDecl &p : parameters)
    if (p.name == param)
      return &p;
  for (const ModuleClass *b : bases)
    if (const ParameterDecl *p = b->find_parameter(param))
      return p;
  return nullptr;
}

const PlainTensorAttribute *ModuleClass::find_plain_tensor(std::string_view attr) const {
  for (const PlainTensorAttribute &p : plain_tensors)
    if (p.name == attr)
      return &p;
  for (const ModuleClass *b : bases)
    if (const PlainTensorAttribute *p = b->find_plain_tensor(attr))
      return p;
  return nullptr;
}

const FunctionDef *ModuleClass::find_method(std::string_view method) const {
  for (const FunctionDef *f : def->methods)
    if (f->name == method)
      return f;
  for (const ModuleClass *b : bases)
    if (const FunctionDef *f = b->find_method(method))
      return f;
  return nullptr;
}

bool ModuleClass::is_reassigned(std::string_view attr) const {
  if (std::find(reassigned_attributes.begin(), reassigned_attributes.end(), attr) !=
      reassigned_attributes.end())
    return true;
  for (const ModuleClass *b : bases)
    if (b->is_reassigned(attr))
      return true;
  return false;
}

bool ModuleClass::has_parameters() const {
  if (has_builtin_parameters)
    return true;
  for (const ParameterDecl *p : all_parameters()) {
    (void)p;
    return true;
  }
  for (const ChildDecl *c : all_children())
    if (c->has_parameters)
      return true;
  return false;
}

std::vector<const ChildDecl *> ModuleClass::all_children() const {
  std::vector<const ChildDecl *> out;
  for (const ModuleClass *b : bases)
    for (const ChildDecl *c : b->all_children())
      out.push_back(c);
  for (const ChildDecl &c : children) {
    auto same = [&](const ChildDecl *o) { return o->name == c.name; };
    out.erase(std::remove_if(out.begin(), out.end(), same), out.end());
    out.push_back(&c);
  }
  return out;
}

std::vector<const ParameterDecl *> ModuleClass::all_parameters() const {
  std::vector<const ParameterDecl *> out;
  for (const ModuleClass *b : bases)
    for (const ParameterDecl *p : b->all_parameters())
      out.push_back(p);
  for (const ParameterDecl &p : parameters)
    out.push_back(&p);
  return out;
}

namespace {

class PackageBuilder {
public:
  PackageBuilder(Package &package) : pkg_(package) {}

  void collect_declarations() {
    for (const SyntaxFile *file : pkg_.files) {
      for (const ClassDef *c : file->classes) {
        auto cls = std::make_unique<ModuleClass>();
        cls->name = c->name;
        cls->def = c;
        cls->file = file;
        for (const Expr *b : c->bases)
          cls->base_names.emplace_back(leaf_of(b));
        pkg_.class_by_name.emplace(cls->name, cls.get());
        pkg_.classes.push_back(std::move(cls));
      }
      for (const FunctionDef *f : file->functions)
        pkg_.function_by_name.emplace(f->name, f);
      for (const Stmt *st : file->body) {
        if (st->kind != StmtKind::Assign || !st->value || st->value->kind != ExprKind::Dict ||
            st->targets.empty() || st->targets[0]->kind != ExprKind::Name)
          continue;
        std::vector<std::string_view> names;
        for (const Expr *v : st->value->operands)
          if (v->kind == ExprKind::Name)
            names.push_back(v->text);
        if (!names.empty())
          pkg_.class_dicts[st->targets[0]->text] = std::move(names);
      }
    }
    for (auto &cls : pkg_.classes) {
      for (const std::string &b : cls->base_names) {
        ModuleClass *base = pkg_.class_by_name.count(b) ? pkg_.class_by_name[b] : nullptr;
        if (base && base != cls.get())
          cls->bases.push_back(base);
      }
    }
  }

  void classify() {
    // is_module / is_pretrained propagate through package bases; iterate to a fixpoint (the
    // inheritance graph is small and acyclic in practice; the bound guards against cycles).
    for (auto &cls : pkg_.classes) {
      for (const Expr *b : cls->def->bases) {
        if (is_external_module_base(b))
          cls->is_module = true;
        if (has_builtin_params_base(b))
          cls->has_builtin_parameters = true;
        if (ends_with(leaf_of(b), "PreTrainedModel") || leaf_of(b) == "PreTrainedModel")
          cls->is_pretrained_model = true;
      }
    }
    for (size_t round = 0; round < pkg_.classes.size() + 1; ++round) {
      bool changed = false;
      for (auto &cls : pkg_.classes) {
        for (const ModuleClass *b : cls->bases) {
          if (b->is_module && !cls->is_module)
            cls->is_module = changed = true;
          if (b->is_pretrained_model && !cls->is_pretrained_model)
            cls->is_pretrained_model = changed = true;
          if (b->has_builtin_parameters && !cls->has_builtin_parameters)
            cls->has_builtin_parameters = changed = true;
        }
      }
      if (!changed)
        break;
    }
  }

  void collect_members(ModuleClass &cls) {
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

  void resolve_children() {
    for (auto &cls : pkg_.classes) {
      for (ChildDecl &c : cls->children) {
        c.resolved = pkg_.find_class(c.class_name);
        if (c.resolved == cls.get())
          c.resolved = nullptr;
      }
    }
    // has_parameters of package children depends on their own declarations: settle it once.
    for (size_t round = 0; round < 4; ++round)
      for (auto &cls : pkg_.classes)
        for (ChildDecl &c : cls->children)
          if (c.resolved && !c.is_loss)
            c.has_parameters = c.resolved->has_parameters();
  }

private:
  Package &pkg_;

  static void collect_strings(const Expr *e, std::vector<std::string> &out) {
    if (!e)
      return;
    if (e->kind == ExprKind::String)
      out.emplace_back(e->text);
    else if (e->kind == ExprKind::Tuple)
      for (const Expr *x : e->operands)
        collect_strings(x, out);
  }

  static std::string_view self_attribute(const Expr *target) {
    if (target && target->kind == ExprKind::Attribute && is_name(target->operands[0], "self"))
      return target->text;
    return {};
  }

  void collect_reassigned(ModuleClass &cls, const std::vector<Stmt *> &body) {
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

  // What module class a constructor expression builds, following small builder functions.
  struct Built {
    std::string class_name;
    bool is_module = false;
    bool has_parameters = true;
    bool is_loss = false;
    bool is_container = false;
  };

  Built
  classify_constructor(const Expr *e,
                       const std::unordered_map<std::string_view, const FunctionDef *> &builders,
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
      out.is_loss = ends_with(leaf, "Loss");
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
    out.is_loss = ends_with(leaf, "Loss");
    out.has_parameters = !out.is_loss && !is_parameterless_builtin(leaf);
    out.is_container = leaf == "Sequential";
    return out;
  }

  // The classes a ModuleList/ModuleDict/Sequential argument builds (list literal, comprehension,
  // dict literal, or a local list filled in a loop is not followed).
  void classify_elements(const Expr *e,
                         const std::unordered_map<std::string_view, const FunctionDef *> &builders,
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

  void add_parameter(ModuleClass &cls, std::string_view name, bool buffer, SourceRange range) {
    if (cls.find_parameter(name))
      return;
    ParameterDecl decl;
    decl.name = std::string(name);
    decl.is_buffer = buffer;
    decl.range = range;
    cls.parameters.push_back(decl);
  }

  static bool builds_cpu_tensor(const Expr *e, int depth = 0) {
    if (!e || depth > 12)
      return false;
    if (e->kind == ExprKind::Call) {
      std::string dotted = dotted_name(e->operands[0]);
      std::string_view leaf = callee_leaf(e);
      if (starts_with(dotted, "torch.") && is_tensor_constructor(leaf))
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

  void scan_init(ModuleClass &cls, const std::vector<Stmt *> &body,
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

  void scan_assignment(ModuleClass &cls, const Expr *target, const Expr *value, SourceRange range,
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

  static void add_child(ModuleClass &cls, ChildDecl child) {
    for (ChildDecl &existing : cls.children)
      if (existing.name == child.name) {
        if (existing.class_name.empty())
          existing = std::move(child);
        return;
      }
    cls.children.push_back(std::move(child));
  }

  void scan_call(ModuleClass &cls, const Expr *e, SourceRange range,
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
};

} // namespace

std::unique_ptr<Package> build_package(const std::vector<const SyntaxFile *> &files,
                                       const PackageOverrides &overrides) {
  auto pkg = std::make_unique<Package>();
  pkg->files = files;
  PackageBuilder builder(*pkg);
  builder.collect_declarations();
  builder.classify();
  for (auto &cls : pkg->classes)
    builder.collect_members(*cls);
  builder.resolve_children();
  // Linear in the number of names, however many there are: each list has a set beside it.
  auto add_unique = [](std::vector<std::string> &into, std::unordered_set<std::string> &seen,
                       const std::string &value) {
    if (seen.insert(value).second)
      into.push_back(value);
  };
  // Files joined by relative imports form one model scope (union-find over file indices).
  std::vector<size_t> parent(files.size());
  for (size_t i = 0; i < files.size(); ++i)
    parent[i] = i;
  std::function<size_t(size_t)> root = [&](size_t i) {
    return parent[i] == i ? i : parent[i] = root(parent[i]);
  };
  auto stem = [](const SyntaxFile *f) {
    std::string path = f->source->path;
    size_t slash = path.find_last_of('/');
    std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
    return name.size() > 3 ? name.substr(0, name.size() - 3) : name;
  };
  for (size_t i = 0; i < files.size(); ++i)
    for (const ImportedName &imp : files[i]->imports) {
      if (imp.module.size() < 2 || imp.module[0] != '.' || imp.module[1] == '.')
        continue;
      std::string target(imp.module.substr(1, imp.module.find('.', 1) - 1));
      for (size_t j = 0; j < files.size(); ++j)
        if (j != i && stem(files[j]) == target)
          parent[root(i)] = root(j);
    }
  std::unordered_map<size_t, ModelScope *> scope_of_root;
  std::unordered_map<size_t, bool> has_pretrained, declares;
  for (size_t i = 0; i < files.size(); ++i) {
    size_t r = root(i);
    if (!scope_of_root.count(r)) {
      pkg->scopes.push_back(std::make_unique<ModelScope>());
      scope_of_root[r] = pkg->scopes.back().get();
    }
  }
  std::unordered_map<const SyntaxFile *, size_t> index_of;
  for (size_t i = 0; i < files.size(); ++i)
    index_of[files[i]] = i;
  for (auto &cls : pkg->classes) {
    size_t r = root(index_of[cls->file]);
    ModelScope *scope = scope_of_root[r];
    cls->scope = scope;
    has_pretrained[r] = has_pretrained[r] || cls->is_pretrained_model;
    declares[r] = declares[r] || cls->declares_no_split;
    scope->has_pretrained_model |= cls->is_pretrained_model;
    for (const std::string &n : cls->no_split_modules)
      add_unique(scope->no_split_modules, scope->no_split_set, n);
    for (const std::string &k : cls->skip_keys) {
      add_unique(scope->skip_keys, scope->skip_key_set, k);
      add_unique(pkg->skip_keys, pkg->skip_key_set, k);
    }
  }
  for (auto &[r, scope] : scope_of_root) {
    scope->supports_device_map =
        !has_pretrained[r] || declares[r] || !overrides.extra_no_split_modules.empty();
    for (const std::string &n : overrides.extra_no_split_modules)
      add_unique(scope->no_split_modules, scope->no_split_set, n);
    for (const std::string &k : overrides.extra_skip_keys)
      add_unique(scope->skip_keys, scope->skip_key_set, k);
  }
  for (const std::string &k : overrides.extra_skip_keys)
    add_unique(pkg->skip_keys, pkg->skip_key_set, k);
  return pkg;
}

} // namespace devlint
