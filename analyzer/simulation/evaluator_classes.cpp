// The evaluator's class model: the package's classes, functions and globals indexed, bases and
// method resolution, super(), instantiating a class (running its __init__), attribute lookup.
#include "simulation/evaluator.h"

namespace devlint::simulation {

ModuleNode *Evaluator::instantiate_root(const ClassRef &cls, const Value &config) {
  Frame caller;
  caller.file = cls.file;
  Value v = instantiate_module(cls, {config}, {}, caller, "");
  return v.is(Kind::Module) ? v.module : nullptr;
}

ModuleNode *
Evaluator::instantiate_root_with_keywords(const ClassRef &cls,
                                          std::vector<std::pair<std::string, Value>> keywords) {
  Frame caller;
  caller.file = cls.file;
  Value v = instantiate_module(cls, {}, std::move(keywords), caller, "");
  return v.is(Kind::Module) ? v.module : nullptr;
}

Value Evaluator::build_config(const ClassRef &cls, const Value &kwargs_dict) {
  Frame caller;
  caller.file = cls.file;
  std::vector<std::pair<std::string, Value>> kwargs;
  if (kwargs_dict.is(Kind::Dict))
    for (const auto &[k, v] : *kwargs_dict.dict)
      if (k.is(Kind::Str))
        kwargs.emplace_back(k.text, v);
  return instantiate_object(cls, {}, kwargs, caller);
}

// The value of a top-level name or of calling a top-level function, in `file`.
Value Evaluator::global_value(const SyntaxFile *file, const std::string &name) {
  Frame frame;
  frame.file = file;
  return lookup(name, frame);
}

Value Evaluator::call_with(const Value &fn, std::vector<std::pair<std::string, Value>> kwargs) {
  Frame caller;
  caller.file = fn.file;
  return call_function(fn, {}, std::move(kwargs), caller);
}

void Evaluator::set_global(const SyntaxFile *file, const std::string &name, Value v) {
  global_cache_[{file, name}] = std::move(v);
  globals_[file][name] = nullptr;
}

std::optional<ClassRef> Evaluator::find_class(std::string_view name) const {
  auto it = classes_.find(std::string(name));
  if (it == classes_.end())
    return std::nullopt;
  return it->second;
}

// Calls a zero-argument method on a module (get_output_embeddings) when the class has it.
std::optional<Value> Evaluator::call_module_method(ModuleNode *node, std::string_view method) {
  Value self = Value::module_value(node);
  Value fn = class_member(node_class(node), std::string(method), self);
  if (!fn.is(Kind::Function))
    return std::nullopt;
  Frame caller;
  caller.file = fn.file;
  return call_function(fn, {}, {}, caller);
}

Value Evaluator::class_attribute(const ClassRef &cls, const std::string &name) {
  return class_member(cls, name, Value::none());
}

// Reading a `@property` runs its getter on the object.
Value Evaluator::call_property(const Value &getter) {
  Frame caller;
  caller.file = getter.file;
  return call_function(getter, {}, {}, caller);
}

Value Evaluator::attribute(const Value &obj, const std::string &name) {
  Frame frame;
  return get_attr(obj, name, frame);
}

std::optional<ClassRef> Evaluator::node_class(const ModuleNode *node) const {
  auto it = node_classes_.find(node);
  if (it == node_classes_.end())
    return std::nullopt;
  return it->second;
}

// Python's C3 linearization of `cls` over the package's classes; a base outside the package
// ends its line (its own bases are not known). Nullopt when the bases admit no order.
std::optional<std::vector<MroEntry>> Evaluator::linearize(const ClassRef &cls, int guard) {
  if (guard > 16)
    return std::nullopt;
  std::vector<std::vector<MroEntry>> sequences;
  std::vector<MroEntry> direct;
  for (auto &[base, dotted] : bases_of(cls)) {
    MroEntry entry{base, dotted};
    if (base) {
      std::optional<std::vector<MroEntry>> line = linearize(*base, guard + 1);
      if (!line)
        return std::nullopt;
      sequences.push_back(*line);
    } else {
      sequences.push_back({entry});
    }
    direct.push_back(entry);
  }
  sequences.push_back(direct);
  std::vector<MroEntry> out{MroEntry{cls, ""}};
  auto same = [](const MroEntry &a, const MroEntry &b) {
    return a.cls ? b.cls && a.cls->def == b.cls->def : !b.cls && a.dotted == b.dotted;
  };
  while (true) {
    sequences.erase(std::remove_if(sequences.begin(), sequences.end(),
                                   [](const auto &sequence) { return sequence.empty(); }),
                    sequences.end());
    if (sequences.empty())
      return out;
    const MroEntry *head = nullptr;
    for (const auto &sequence : sequences) {
      bool in_a_tail = std::any_of(sequences.begin(), sequences.end(), [&](const auto &other) {
        return std::any_of(other.begin() + 1, other.end(),
                           [&](const MroEntry &e) { return same(e, sequence.front()); });
      });
      if (!in_a_tail) {
        head = &sequence.front();
        break;
      }
    }
    if (!head)
      return std::nullopt;
    MroEntry next = *head;
    out.push_back(next);
    for (auto &sequence : sequences)
      if (same(sequence.front(), next))
        sequence.erase(sequence.begin());
  }
}

// The classes after `current` in the MRO of `self`'s class: where super() looks.
std::optional<std::vector<MroEntry>> Evaluator::mro_after(const Value &self,
                                                          const ClassDef *current) {
  std::optional<ClassRef> instance;
  if (self.is(Kind::Module))
    instance = node_class(self.module);
  else if (self.is(Kind::Object) && self.object->class_def)
    instance = find_class(self.object->class_def->name);
  if (!instance || instance->def == current)
    return std::nullopt;
  std::optional<std::vector<MroEntry>> mro = linearize(*instance);
  if (!mro)
    return std::nullopt;
  auto at = std::find_if(mro->begin(), mro->end(),
                         [&](const MroEntry &e) { return e.cls && e.cls->def == current; });
  if (at == mro->end())
    return std::nullopt;
  return std::vector<MroEntry>(at + 1, mro->end());
}

void Evaluator::index_file(const SyntaxFile *f) {
  if (!indexed_.insert(f).second)
    return;
  // transformers' modular_*.py files are a code generator's sources: the modeling and
  // configuration files generated from them, which define the same names, are what loads.
  auto modular = [](const SyntaxFile *file) {
    if (!file || !file->source)
      return false;
    std::string_view path = file->source->path;
    return path.substr(path.find_last_of('/') + 1).rfind("modular_", 0) == 0;
  };
  // The definitions Python makes on devmap's machine: a module-level `if is_<library>_available():`
  // runs its fallback branch (xLSTM's own blocks when the xlstm package is absent). Only the
  // simulation reads them so: the placement analysis follows the code that runs with the library.
  std::vector<const Stmt *> statements = module_level_statements(f->body);
  for (const Stmt *st : statements) {
    if (st->kind == StmtKind::ClassDef) {
      const ClassDef *c = st->class_def;
      auto [it, added] = classes_.emplace(std::string(c->name), ClassRef{c, f});
      if (!added && modular(it->second.file) && !modular(f))
        it->second = ClassRef{c, f};
    } else if (st->kind == StmtKind::FunctionDef) {
      const FunctionDef *fn = st->function;
      auto [it, added] = functions_.emplace(std::string(fn->name), std::make_pair(fn, f));
      if (!added && modular(it->second.second) && !modular(f))
        it->second = std::make_pair(fn, f);
    }
  }
  auto &g = globals_[f];
  for (const Stmt *st : statements)
    if (st->kind == StmtKind::Assign && st->value && st->targets.size() == 1 &&
        st->targets[0]->kind == ExprKind::Name)
      g[std::string(st->targets[0]->text)] = st->value;
  // An optional kernel library: `if is_fla_available(): from fla.modules import FusedNorm` /
  // `else: FusedNorm = None`. devlint never assumes such a library installed (the model then
  // builds its own fallback), so the name is None.
  for (const Stmt *st : f->body) {
    if (st->kind != StmtKind::If || st->orelse.empty())
      continue;
    for (const Stmt *e : st->orelse) {
      if (e->kind != StmtKind::Assign || !e->value || e->targets.size() != 1)
        continue;
      const Expr *target = e->targets[0];
      std::vector<const Expr *> names, values;
      if (target->kind == ExprKind::Name) {
        names.push_back(target);
        values.push_back(e->value);
      } else if (target->kind == ExprKind::Tuple && e->value->kind == ExprKind::Tuple &&
                 target->operands.size() == e->value->operands.size()) {
        names.assign(target->operands.begin(), target->operands.end());
        values.assign(e->value->operands.begin(), e->value->operands.end());
      }
      for (size_t k = 0; k < names.size(); ++k) {
        if (names[k]->kind != ExprKind::Name || values[k]->kind != ExprKind::NoneLiteral)
          continue;
        std::string_view name = names[k]->text;
        if (std::any_of(f->imports.begin(), f->imports.end(),
                        [name](const ImportedName &imp) { return imp.local_name == name; }))
          g.emplace(std::string(name), values[k]);
      }
    }
  }
  auto &imp = imports_[f];
  for (const ImportedName &i : f->imports) {
    std::string full =
        i.name.empty() ? std::string(i.module) : std::string(i.module) + "." + std::string(i.name);
    imp[std::string(i.local_name)] = i.name.empty() ? full : std::string(i.name);
    if (!i.name.empty())
      import_modules_[f][std::string(i.local_name)] = std::string(i.module);
    if (i.module == "torch" && i.name == "nn")
      imp[std::string(i.local_name)] = "nn";
    // `from copy import deepcopy` is copy.deepcopy, `from collections import OrderedDict`
    // collections.OrderedDict, `from itertools import product` itertools.product (standard
    // library names, known by their module).
    if ((i.module == "copy" || i.module == "collections" || i.module == "itertools") &&
        !i.name.empty())
      imp[std::string(i.local_name)] = full;
    // `import collections.abc` binds `collections`.
    std::string_view local = i.local_name;
    if (i.name.empty() && local.find('.') != std::string_view::npos) {
      std::string first(local.substr(0, local.find('.')));
      imp.emplace(first, first);
    }
  }
}

std::string Evaluator::location(const SyntaxFile *file, const SourceRange &r) const {
  if (!file || !file->source)
    return "";
  return file->source->display_path + ":" + std::to_string(r.line);
}

std::string Evaluator::text_of(const SyntaxFile *file, const SourceRange &r) const {
  if (!file || !file->source)
    return "";
  std::string t(file->source->slice(r));
  if (t.size() > 80)
    t = t.substr(0, 77) + "...";
  std::replace(t.begin(), t.end(), '\n', ' ');
  return t;
}

void Evaluator::report(const Frame &frame, const SourceRange &r, const std::string &what) {
  if (!reported_.insert({frame.file, r.begin}).second)
    return;
  std::string where = location(frame.file, r);
  if (tree_)
    tree_->unknowns.push_back({frame.module_path, what, where});
  else if (config_unknowns_)
    config_unknowns_->push_back(where + ": " + what);
}

void Evaluator::report_unknown_value(const Frame &frame, const Expr *e, const Value &v,
                                     const std::string &role) {
  report(frame, e->range,
         role + " `" + text_of(frame.file, e->range) + "`" +
             (v.text.empty() ? "" : " (" + v.text + ")"));
}

// The package's class for `cls`: by its own file first (two files may each define an `Encoder`).
const ModuleClass *Evaluator::module_class_of(const ClassRef &cls) const {
  if (const ModuleClass *own = package_.class_in_file(cls.def->name, cls.file);
      own && own->def == cls.def)
    return own;
  const ModuleClass *mc = package_.find_class(cls.def->name);
  return mc && mc->def == cls.def ? mc : nullptr;
}

bool Evaluator::class_is_module(const ClassRef &cls) const {
  const ModuleClass *mc = module_class_of(cls);
  return mc && mc->is_module;
}

// The first package base of `cls`, or the base expression's dotted name (nn.Linear).
std::vector<std::pair<std::optional<ClassRef>, std::string>>
Evaluator::bases_of(const ClassRef &cls) {
  std::vector<std::pair<std::optional<ClassRef>, std::string>> out;
  for (const Expr *b : cls.def->bases) {
    std::string dotted = dotted_name(b);
    if (dotted.empty() && b->kind == ExprKind::Subscript)
      dotted = dotted_name(b->operands[0]);
    std::string leaf(leaf_name(dotted));
    // The base the class's file defines or imports relatively, else the package's first.
    std::optional<ClassRef> found;
    if (const ModuleClass *own = package_.class_in_file(leaf, cls.file); own && dotted == leaf)
      found = ClassRef{own->def, own->file};
    else
      found = find_class(leaf);
    if (found && found->def == cls.def)
      found.reset();
    out.emplace_back(found, dotted);
  }
  return out;
}

// Is `def` the class `name` or a package subclass of it?
bool Evaluator::derives_from(const ClassDef *def, std::string_view name, int guard) {
  if (!def || guard > 16)
    return false;
  if (def->name == name)
    return true;
  auto cls = find_class(def->name);
  if (!cls)
    return false;
  for (auto &[base, dotted] : bases_of(*cls))
    if ((base && derives_from(base->def, name, guard + 1)) || leaf_name(dotted) == name)
      return true;
  return false;
}

// A method or class attribute, searched through package bases (depth first, as single
// inheritance resolves).
Value Evaluator::class_member(std::optional<ClassRef> cls, const std::string &name,
                              const Value &self, int guard) {
  if (!cls || guard > 16)
    return Value::unknown("");
  for (const FunctionDef *m : cls->def->methods)
    if (m->name == name) {
      Value fn;
      fn.kind = Kind::Function;
      fn.function = m;
      fn.file = cls->file;
      fn.class_def = cls->def;
      if (!self.is(Kind::None) && !m->is_staticmethod)
        fn.bound_self = std::make_shared<Value>(self);
      return fn;
    }
  for (const Stmt *st : cls->def->body)
    if (st->kind == StmtKind::Assign && st->value && !st->targets.empty() &&
        is_name(st->targets[0], name)) {
      Frame f;
      f.file = cls->file;
      return eval(st->value, f);
    }
  for (auto &[base, dotted] : bases_of(*cls)) {
    if (!base)
      continue;
    Value v = class_member(base, name, self, guard + 1);
    if (!v.is(Kind::Unknown))
      return v;
  }
  return Value::unknown("");
}

// A torch built-in layer class among the bases (class ChatGLMLinear(nn.Linear)).
std::string Evaluator::builtin_layer_base(const ClassRef &cls, int guard) {
  if (guard > 16)
    return "";
  for (auto &[base, dotted] : bases_of(cls)) {
    if (base) {
      std::string b = builtin_layer_base(*base, guard + 1);
      if (!b.empty())
        return b;
      continue;
    }
    std::string_view leaf = leaf_name(dotted);
    LayerShape probe =
        torch_layer_shape(leaf, [](size_t, std::string_view) { return LayerArgument{}; });
    if (probe.known_layer && !is_parameterless_layer(leaf))
      return std::string(leaf);
  }
  return "";
}

Value Evaluator::instantiate_module(const ClassRef &cls, std::vector<Value> args,
                                    std::vector<std::pair<std::string, Value>> kwargs,
                                    const Frame &caller, const std::string &path) {
  if (!tree_)
    return Value::unknown("");
  ModuleNode &node = tree_->nodes.emplace_back();
  node.class_name = std::string(cls.def->name);
  node.cls = module_class_of(cls);
  if (!node.cls)
    node.cls = package_.find_class(cls.def->name, cls.file);
  node_classes_[&node] = cls;
  Value self = Value::module_value(&node);
  run_init(cls, self, std::move(args), std::move(kwargs), caller, path);
  return self;
}

Value Evaluator::instantiate_object(const ClassRef &cls, std::vector<Value> args,
                                    std::vector<std::pair<std::string, Value>> kwargs,
                                    const Frame &caller) {
  Value self;
  self.kind = Kind::Object;
  self.object = std::make_shared<ObjectData>();
  self.object->class_name = std::string(cls.def->name);
  self.object->class_def = cls.def;
  run_init(cls, self, std::move(args), std::move(kwargs), caller, caller.module_path);
  // PretrainedConfig.to_dict writes the class's model_type: a sub-configuration (one a
  // configuration's __init__ builds) read back from the configuration's values still names its
  // model, which AutoModel.from_config picks by. The root's values keep only its fields.
  bool sub_configuration =
      caller.current_class && is_transformers_config(ClassRef{caller.current_class, caller.file});
  if (sub_configuration && !self.object->attrs.count("model_type") && is_transformers_config(cls))
    if (Value declared = class_attribute(cls, "model_type"); declared.is(Kind::Str))
      self.object->attrs["model_type"] = declared;
  return self;
}

// Runs the __init__ that `cls` resolves to on `self`.
void Evaluator::run_init(const ClassRef &cls, const Value &self, std::vector<Value> args,
                         std::vector<std::pair<std::string, Value>> kwargs, const Frame &caller,
                         const std::string &path, int guard) {
  if (guard > 16)
    return;
  if (self.is(Kind::Object) && guard == 0)
    if (std::optional<ClassRef> owner = generated_init_owner(cls)) {
      dataclass_init(cls, *owner, self, std::move(args), std::move(kwargs), caller);
      return;
    }
  for (const FunctionDef *m : cls.def->methods)
    if (m->name == "__init__") {
      Value fn;
      fn.kind = Kind::Function;
      fn.function = m;
      fn.file = cls.file;
      fn.class_def = cls.def;
      fn.bound_self = std::make_shared<Value>(self);
      call_function(fn, std::move(args), std::move(kwargs), caller, path);
      return;
    }
  // No __init__ here: the first base's.
  for (auto &[base, dotted] : bases_of(cls)) {
    if (base) {
      run_init(*base, self, std::move(args), std::move(kwargs), caller, path, guard + 1);
      return;
    }
    if (external_init(leaf_name(dotted), self, args, kwargs, caller))
      return;
  }
}

// __init__ of a base outside the package: torch layers add their parameters, PretrainedConfig
// stores its keyword arguments.
bool Evaluator::external_init(std::string_view leaf, const Value &self,
                              const std::vector<Value> &args,
                              const std::vector<std::pair<std::string, Value>> &kwargs,
                              const Frame &caller) {
  if (self.is(Kind::Object)) {
    if (leaf == "PretrainedConfig" || leaf == "PreTrainedConfig") {
      for (const auto &[k, v] : kwargs) {
        if (k.empty())
          continue;
        self.object->attrs[k] = v;
      }
      add_pretrained_config_defaults(self.object->attrs);
      return true;
    }
    return leaf == "object";
  }
  if (!self.is(Kind::Module))
    return false;
  if (leaf == "PreTrainedModel") {
    // PreTrainedModel.__init__(self, config, ...) keeps `self.config`: the tying in post_init
    // reads each sub-model's own configuration.
    const Value *config = args.empty() ? nullptr : &args[0];
    for (const auto &[k, v] : kwargs)
      if (k == "config")
        config = &v;
    if (config)
      module_attrs_[self.module]["config"] = *config;
    return true;
  }
  LayerShape shape = torch_layer_shape(leaf, layer_args(args, kwargs));
  if (!shape.known_layer)
    return leaf == "Module" || leaf == "PreTrainedModel" || ends_with_str(leaf, "Mixin");
  add_layer_tensors(*self.module, shape, caller, leaf);
  keep_layer_attributes(*self.module, leaf, args, kwargs);
  return true;
}

Value Evaluator::get_attr(const Value &obj, const std::string &name, const Frame &frame) {
  switch (obj.kind) {
  case Kind::Module:
    return get_module_attr(obj.module, name);
  case Kind::Object: {
    auto it = obj.object->attrs.find(name);
    if (it != obj.object->attrs.end())
      return it->second;
    if (obj.object->class_def) {
      auto cls = find_class(obj.object->class_def->name);
      Value member = class_member(cls, name, obj);
      if (member.is(Kind::Function) && member.function->is_property)
        return call_property(member);
      if (!member.is(Kind::Unknown))
        return member;
      // attribute_map: config.hidden_size -> config.n_embd
      Value map = class_member(cls, "attribute_map", Value::none());
      if (map.is(Kind::Dict))
        for (const auto &[k, v] : *map.dict)
          if (k.is(Kind::Str) && k.text == name && v.is(Kind::Str)) {
            auto real = obj.object->attrs.find(v.text);
            if (real != obj.object->attrs.end())
              return real->second;
          }
    }
    // PretrainedConfig.to_dict() and standardize_rope_params(); a dict's methods on a JSON
    // object (is_configuration_mapping).
    if (name != "to_dict" && name != "__setattr__" && name != "standardize_rope_params" &&
        name != "get_text_config" &&
        (!is_configuration_mapping(obj) ||
         (name != "get" && name != "items" && name != "keys" && name != "values" && name != "pop" &&
          name != "setdefault" && name != "update")))
      return Value::unknown("the configuration has no `" + name + "`");
    break;
  }
  case Kind::Namespace:
    if (obj.text == "math" && (name == "pi" || name == "e" || name == "tau")) {
      constexpr double kPi = 3.14159265358979323846, kE = 2.71828182845904523536;
      return Value::real_value(name == "pi" ? kPi : name == "e" ? kE : 2 * kPi);
    }
    return Value::ns(obj.text + "." + name);
  case Kind::Class: {
    auto cls = find_class(obj.class_def->name);
    return class_member(cls, name, Value::none());
  }
  case Kind::Super: {
    Value v = obj;
    v.text = name;
    return v;
  }
  case Kind::Tensor:
    if (name == "shape" && !obj.dims.empty()) {
      ValueList dims;
      for (int64_t d : obj.dims)
        dims.push_back(Value::integer_value(d));
      return Value::list_of(std::move(dims));
    }
    if (name == "data" || name == "T")
      return obj;
    if (name == "device")
      return Value::unknown(std::string(kTensorDevice));
    if (name == "dtype")
      return Value::unknown("tensor.dtype");
    break;
  default:
    break;
  }
  // A bound method of a value (list.append, dict.get, str.format...).
  Value m;
  m.kind = Kind::Namespace;
  m.text = "." + name;
  m.bound_self = std::make_shared<Value>(obj);
  (void)frame;
  return m;
}

Value Evaluator::global_value(const SyntaxFile *file, const std::string &name, const Expr *value) {
  auto key = std::make_pair(file, name);
  auto cached = global_cache_.find(key);
  if (cached != global_cache_.end())
    return cached->second;
  if (!value)
    return Value::unknown("`" + name + "` is not defined");
  global_cache_[key] = Value::unknown("recursive global");
  Frame global;
  global.file = file;
  Value v = eval(value, global);
  global_cache_[key] = v;
  return v;
}

std::optional<Value> Evaluator::imported_global(const std::string &module,
                                                const std::string &name) {
  std::string_view stem = module;
  if (size_t dot = stem.find_last_of('.'); dot != std::string_view::npos)
    stem = stem.substr(dot + 1);
  if (stem.empty())
    return std::nullopt;
  for (const auto &[file, names] : globals_) {
    auto it = names.find(name);
    if (it == names.end() || !it->second || !file->source)
      continue;
    std::string_view path = file->source->path;
    std::string_view base = path.substr(path.find_last_of('/') + 1);
    if (base.size() == stem.size() + 3 && base.substr(0, stem.size()) == stem &&
        base.substr(stem.size()) == ".py")
      return global_value(file, name, it->second);
  }
  return std::nullopt;
}

Value Evaluator::lookup(const std::string &name, const Frame &frame) {
  auto local = frame.locals.find(name);
  if (local != frame.locals.end())
    return local->second;
  if (frame.file) {
    auto &g = globals_[frame.file];
    auto it = g.find(name);
    if (it != g.end())
      return global_value(frame.file, name, it->second);
    // A class or function the file defines or imports relatively, before the package's first of
    // that name (two files of a package may each define a `FeedForward`).
    if (const ModuleClass *own = package_.class_in_file(name, frame.file)) {
      Value v;
      v.kind = Kind::Class;
      v.class_def = own->def;
      v.file = own->file;
      return v;
    }
    if (const FunctionDef *own = package_.function_in_file(name, frame.file))
      for (const auto &[file, functions] : package_.functions_of_file)
        if (auto fn = functions.find(name); fn != functions.end() && fn->second == own) {
          Value v;
          v.kind = Kind::Function;
          v.function = own;
          v.file = file;
          return v;
        }
  }
  // A module's own class first: two files of a package may each define one of that name
  // (modeling_blip.py's BlipTextEmbeddings and modeling_blip_text.py's).
  if (frame.file)
    for (const ClassDef *c : frame.file->classes)
      if (c->name == name) {
        Value v;
        v.kind = Kind::Class;
        v.class_def = c;
        v.file = frame.file;
        return v;
      }
  if (auto cls = find_class(name)) {
    Value v;
    v.kind = Kind::Class;
    v.class_def = cls->def;
    v.file = cls->file;
    return v;
  }
  auto fn = functions_.find(name);
  if (fn != functions_.end()) {
    Value v;
    v.kind = Kind::Function;
    v.function = fn->second.first;
    v.file = fn->second.second;
    return v;
  }
  if (frame.file) {
    auto &imp = imports_[frame.file];
    auto it = imp.find(name);
    if (it != imp.end()) {
      // transformers' auto tables (`from ...models.auto.modeling_auto import
      // MODEL_FOR_CAUSAL_LM_MAPPING_NAMES`), as read from its models/auto folder.
      if (auto_classes_) {
        auto table = auto_classes_->by_mapping_name.find(std::string(leaf_name(it->second)));
        if (table != auto_classes_->by_mapping_name.end()) {
          ValueDict items;
          for (const auto &[model_type, class_name] : table->second)
            items.emplace_back(Value::str(model_type), Value::str(class_name));
          return Value::dict_of(std::move(items));
        }
      }
      auto module = import_modules_[frame.file].find(name);
      if (module != import_modules_[frame.file].end())
        if (auto v = imported_global(module->second, it->second))
          return *v;
      return Value::ns(it->second);
    }
  }
  static const std::unordered_set<std::string> builtins = {
      "range",    "len",        "int",     "float",   "str",     "bool",      "min",   "max",
      "sum",      "abs",        "round",   "list",    "tuple",   "dict",      "set",   "enumerate",
      "zip",      "isinstance", "getattr", "hasattr", "setattr", "super",     "print", "sorted",
      "reversed", "any",        "all",     "divmod",  "pow",     "frozenset", "next",  "iter"};
  if (builtins.count(name))
    return Value::ns("builtins." + name);
  if (name == "torch" || name == "nn" || name == "F" || name == "math" || name == "np" ||
      name == "numpy")
    return Value::ns(name);
  return Value::unknown("`" + name + "` is not defined in the package");
}

} // namespace devlint::simulation
