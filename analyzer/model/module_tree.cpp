// A small evaluator for the Python that `__init__` methods run: assignments, arithmetic on config
// values, if/for/while over known values, comprehensions, calls of package classes, functions and
// methods, and the torch constructors that decide parameter shapes. Anything else yields an
// unknown value that is recorded where it decides a shape, a branch or a loop.
#include "model/module_tree.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "model/checked_math.h"
#include "model/text.h"
#include "model/torch_layers.h"

namespace devlint {

namespace {

struct Value;
using ValueList = std::vector<Value>;
using ValueDict = std::vector<std::pair<Value, Value>>;
struct ObjectData;

struct Value {
  enum class Kind : uint8_t {
    Unknown,
    None,
    Bool,
    Int,
    Float,
    Str,
    List,
    Dict,
    Object,
    Module,
    Tensor,
    Class,
    Function,
    Namespace,
    Super,
  };
  Kind kind = Kind::Unknown;
  int64_t integer = 0;
  double real = 0;
  std::string text; // Str; Unknown: why; Namespace: dotted name
  std::shared_ptr<ValueList> list;
  std::shared_ptr<ValueDict> dict;
  std::shared_ptr<ObjectData> object;
  ModuleNode *module = nullptr;
  // Tensor
  std::optional<int64_t> numel;
  std::vector<int64_t> dims; // when known
  bool integer_dtype = false;
  int element_bytes = 4;
  bool is_parameter = false;
  const TreeTensor *source_tensor = nullptr; // a registered tensor read back (for ties)
  // Class / Function
  const ClassDef *class_def = nullptr;
  const FunctionDef *function = nullptr;
  const SyntaxFile *file = nullptr;
  std::shared_ptr<Value> bound_self;
  // A nested function's enclosing locals (snapshot at `def`): build_layer() in __init__.
  std::shared_ptr<std::unordered_map<std::string, Value>> closure;
  // An attribute a module does not have as data: unknown as a value, a method when called
  // (self.register_buffer(...), self.layers.append(...)).
  std::string method_name;

  static Value unknown(std::string why) {
    Value v;
    v.text = std::move(why);
    return v;
  }
  static Value none() {
    Value v;
    v.kind = Kind::None;
    return v;
  }
  static Value boolean(bool b) {
    Value v;
    v.kind = Kind::Bool;
    v.integer = b;
    return v;
  }
  static Value integer_value(int64_t i) {
    Value v;
    v.kind = Kind::Int;
    v.integer = i;
    return v;
  }
  static Value real_value(double d) {
    Value v;
    v.kind = Kind::Float;
    v.real = d;
    return v;
  }
  static Value str(std::string s) {
    Value v;
    v.kind = Kind::Str;
    v.text = std::move(s);
    return v;
  }
  static Value list_of(ValueList items) {
    Value v;
    v.kind = Kind::List;
    v.list = std::make_shared<ValueList>(std::move(items));
    return v;
  }
  static Value dict_of(ValueDict items) {
    Value v;
    v.kind = Kind::Dict;
    v.dict = std::make_shared<ValueDict>(std::move(items));
    return v;
  }
  static Value ns(std::string name) {
    Value v;
    v.kind = Kind::Namespace;
    v.text = std::move(name);
    return v;
  }
  static Value module_value(ModuleNode *m) {
    Value v;
    v.kind = Kind::Module;
    v.module = m;
    return v;
  }

  bool is(Kind k) const { return kind == k; }
  bool is_number() const { return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool; }
  double as_real() const { return kind == Kind::Float ? real : static_cast<double>(integer); }
};

struct ObjectData {
  std::string class_name;
  const ClassDef *class_def = nullptr;
  std::map<std::string, Value> attrs;
};

using Kind = Value::Kind;

std::string_view leaf_name(std::string_view dotted) {
  size_t dot = dotted.rfind('.');
  return dot == std::string_view::npos ? dotted : dotted.substr(dot + 1);
}

// Python truthiness; nullopt when unknown.
std::optional<bool> truthy(const Value &v) {
  switch (v.kind) {
  case Kind::None:
    return false;
  case Kind::Bool:
  case Kind::Int:
    return v.integer != 0;
  case Kind::Float:
    return v.real != 0;
  case Kind::Str:
    return !v.text.empty();
  case Kind::List:
    return !v.list->empty();
  case Kind::Dict:
    return !v.dict->empty();
  case Kind::Unknown:
    return std::nullopt;
  default:
    return true;
  }
}

std::optional<bool> equal(const Value &a, const Value &b) {
  if (a.is(Kind::Unknown) || b.is(Kind::Unknown))
    return std::nullopt;
  if (a.is_number() && b.is_number())
    return a.as_real() == b.as_real();
  if (a.is(Kind::None) || b.is(Kind::None))
    return a.kind == b.kind;
  if (a.is(Kind::Str) && b.is(Kind::Str))
    return a.text == b.text;
  if (a.is(Kind::List) && b.is(Kind::List)) {
    if (a.list->size() != b.list->size())
      return false;
    for (size_t i = 0; i < a.list->size(); ++i) {
      auto e = equal((*a.list)[i], (*b.list)[i]);
      if (!e || !*e)
        return e;
    }
    return true;
  }
  if (a.kind != b.kind)
    return false;
  return std::nullopt;
}

nlohmann::json to_json(const Value &v, bool *complete) {
  switch (v.kind) {
  case Kind::None:
    return nullptr;
  case Kind::Bool:
    return v.integer != 0;
  case Kind::Int:
    return v.integer;
  case Kind::Float:
    return v.real;
  case Kind::Str:
    return v.text;
  case Kind::List: {
    nlohmann::json a = nlohmann::json::array();
    for (const Value &e : *v.list)
      a.push_back(to_json(e, complete));
    return a;
  }
  case Kind::Dict: {
    nlohmann::json o = nlohmann::json::object();
    for (const auto &[k, e] : *v.dict)
      if (k.is(Kind::Str))
        o[k.text] = to_json(e, complete);
    return o;
  }
  case Kind::Object: {
    nlohmann::json o = nlohmann::json::object();
    for (const auto &[k, e] : v.object->attrs) {
      if (e.is(Kind::Unknown)) {
        if (complete)
          *complete = false;
        continue;
      }
      if (e.is(Kind::Function) || e.is(Kind::Class) || e.is(Kind::Namespace))
        continue;
      o[k] = to_json(e, complete);
    }
    return o;
  }
  default:
    if (complete)
      *complete = false;
    return nullptr;
  }
}

// A json value as Python sees it: objects become dicts (kwargs for a config class) or, with
// `as_objects`, attribute objects (a config passed to a model).
Value from_json(const nlohmann::json &j, bool as_objects) {
  if (j.is_null())
    return Value::none();
  if (j.is_boolean())
    return Value::boolean(j.get<bool>());
  if (j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    return Value::unknown(j.dump() + ", an integer over 64 bits");
  if (j.is_number_integer())
    return Value::integer_value(j.get<int64_t>());
  if (j.is_number())
    return Value::real_value(j.get<double>());
  if (j.is_string())
    return Value::str(j.get<std::string>());
  if (j.is_array()) {
    ValueList items;
    for (const auto &e : j)
      items.push_back(from_json(e, as_objects));
    return Value::list_of(std::move(items));
  }
  if (as_objects) {
    Value v;
    v.kind = Kind::Object;
    v.object = std::make_shared<ObjectData>();
    v.object->class_name = "PretrainedConfig";
    for (const auto &[k, e] : j.items())
      v.object->attrs[k] = from_json(e, true);
    return v;
  }
  ValueDict items;
  for (const auto &[k, e] : j.items())
    items.emplace_back(Value::str(k), from_json(e, false));
  return Value::dict_of(std::move(items));
}

// PretrainedConfig.__init__'s attributes that models read (transformers 4.47).
void add_pretrained_config_defaults(std::map<std::string, Value> &attrs) {
  auto set = [&](const char *name, Value v) { attrs.emplace(name, std::move(v)); };
  set("return_dict", Value::boolean(true));
  set("output_hidden_states", Value::boolean(false));
  set("output_attentions", Value::boolean(false));
  set("torchscript", Value::boolean(false));
  set("torch_dtype", Value::none());
  set("use_bfloat16", Value::boolean(false));
  set("pruned_heads", Value::dict_of({}));
  set("tie_word_embeddings", Value::boolean(true));
  set("chunk_size_feed_forward", Value::integer_value(0));
  set("is_encoder_decoder", Value::boolean(false));
  set("is_decoder", Value::boolean(false));
  set("cross_attention_hidden_size", Value::none());
  set("add_cross_attention", Value::boolean(false));
  set("tie_encoder_decoder", Value::boolean(false));
  set("architectures", Value::none());
  set("finetuning_task", Value::none());
  set("num_labels", Value::integer_value(2));
  set("problem_type", Value::none());
  set("pad_token_id", Value::none());
  set("bos_token_id", Value::none());
  set("eos_token_id", Value::none());
  set("sep_token_id", Value::none());
  set("decoder_start_token_id", Value::none());
  set("use_return_dict", Value::boolean(true));
  // from_pretrained picks an attention implementation; every variant shares the eager weights.
  set("_attn_implementation", Value::str("eager"));
}

struct Frame {
  std::unordered_map<std::string, Value> locals;
  const SyntaxFile *file = nullptr;
  const ClassDef *current_class = nullptr; // whose method runs (for super())
  std::string module_path;                 // for reports
  bool returned = false;
  bool broke = false;
  bool continued = false;
  Value return_value = Value::none();
};

struct ClassRef {
  const ClassDef *def = nullptr;
  const SyntaxFile *file = nullptr;
};

constexpr int kMaxDepth = 48;
constexpr size_t kMaxLoop = 20000;
constexpr uint64_t kStatementBudget = 3'000'000;

class Evaluator {
public:
  Evaluator(const Package &package, const std::vector<const SyntaxFile *> &files, ModuleTree *tree,
            std::vector<std::string> *config_unknowns)
      : package_(package), tree_(tree), config_unknowns_(config_unknowns) {
    for (const SyntaxFile *f : files)
      index_file(f);
    for (const SyntaxFile *f : package.files)
      index_file(f);
  }

  // ---- entry points ----

  ModuleNode *instantiate_root(const ClassRef &cls, const Value &config) {
    Frame caller;
    caller.file = cls.file;
    Value v = instantiate_module(cls, {config}, {}, caller, "");
    return v.is(Kind::Module) ? v.module : nullptr;
  }

  Value build_config(const ClassRef &cls, const Value &kwargs_dict) {
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
  Value global_value(const SyntaxFile *file, const std::string &name) {
    Frame frame;
    frame.file = file;
    return lookup(name, frame);
  }
  Value call_with(const Value &fn, std::vector<std::pair<std::string, Value>> kwargs) {
    Frame caller;
    caller.file = fn.file;
    return call_function(fn, {}, std::move(kwargs), caller);
  }
  void set_global(const SyntaxFile *file, const std::string &name, Value v) {
    global_cache_[{file, name}] = std::move(v);
    globals_[file][name] = nullptr;
  }

  std::optional<ClassRef> find_class(std::string_view name) const {
    auto it = classes_.find(std::string(name));
    if (it == classes_.end())
      return std::nullopt;
    return it->second;
  }

  // Calls a zero-argument method on a module (get_output_embeddings) when the class has it.
  std::optional<Value> call_module_method(ModuleNode *node, std::string_view method) {
    Value self = Value::module_value(node);
    Value fn = class_member(node_class(node), std::string(method), self);
    if (!fn.is(Kind::Function))
      return std::nullopt;
    Frame caller;
    caller.file = fn.file;
    return call_function(fn, {}, {}, caller);
  }

  Value class_attribute(const ClassRef &cls, const std::string &name) {
    return class_member(cls, name, Value::none());
  }

  std::optional<ClassRef> node_class(const ModuleNode *node) const {
    auto it = node_classes_.find(node);
    if (it == node_classes_.end())
      return std::nullopt;
    return it->second;
  }

private:
  const Package &package_;
  ModuleTree *tree_;
  std::vector<std::string> *config_unknowns_;
  std::unordered_map<std::string, ClassRef> classes_;
  std::unordered_map<const SyntaxFile *, std::unordered_map<std::string, const Expr *>> globals_;
  std::unordered_map<const SyntaxFile *, std::unordered_map<std::string, std::string>> imports_;
  std::unordered_map<std::string, std::pair<const FunctionDef *, const SyntaxFile *>> functions_;
  std::map<std::pair<const SyntaxFile *, std::string>, Value> global_cache_;
  std::unordered_map<const ModuleNode *, std::map<std::string, Value>> module_attrs_;
  std::unordered_map<const ModuleNode *, ClassRef> node_classes_;
  std::set<std::pair<const SyntaxFile *, uint32_t>> reported_;
  std::unordered_set<const SyntaxFile *> indexed_;
  int depth_ = 0;
  uint64_t statements_ = 0;
  int next_storage_ = 0;

  void index_file(const SyntaxFile *f) {
    if (!indexed_.insert(f).second)
      return;
    for (const ClassDef *c : f->classes)
      classes_.emplace(std::string(c->name), ClassRef{c, f});
    for (const FunctionDef *fn : f->functions)
      functions_.emplace(std::string(fn->name), std::make_pair(fn, f));
    auto &g = globals_[f];
    for (const Stmt *st : f->body)
      if (st->kind == StmtKind::Assign && st->value && st->targets.size() == 1 &&
          st->targets[0]->kind == ExprKind::Name)
        g[std::string(st->targets[0]->text)] = st->value;
    auto &imp = imports_[f];
    for (const ImportedName &i : f->imports) {
      std::string full = i.name.empty() ? std::string(i.module)
                                        : std::string(i.module) + "." + std::string(i.name);
      imp[std::string(i.local_name)] = i.name.empty() ? full : std::string(i.name);
      if (i.module == "torch" && i.name == "nn")
        imp[std::string(i.local_name)] = "nn";
      // `import collections.abc` binds `collections`.
      std::string_view local = i.local_name;
      if (i.name.empty() && local.find('.') != std::string_view::npos) {
        std::string first(local.substr(0, local.find('.')));
        imp.emplace(first, first);
      }
    }
  }

  std::string location(const SyntaxFile *file, const SourceRange &r) const {
    if (!file || !file->source)
      return "";
    return file->source->display_path + ":" + std::to_string(r.line);
  }

  std::string text_of(const SyntaxFile *file, const SourceRange &r) const {
    if (!file || !file->source)
      return "";
    std::string t(file->source->slice(r));
    if (t.size() > 80)
      t = t.substr(0, 77) + "...";
    std::replace(t.begin(), t.end(), '\n', ' ');
    return t;
  }

  void report(const Frame &frame, const SourceRange &r, const std::string &what) {
    if (!reported_.insert({frame.file, r.begin}).second)
      return;
    std::string where = location(frame.file, r);
    if (tree_)
      tree_->unknowns.push_back({frame.module_path, what, where});
    else if (config_unknowns_)
      config_unknowns_->push_back(where + ": " + what);
  }
  void report_unknown_value(const Frame &frame, const Expr *e, const Value &v,
                            const std::string &role) {
    report(frame, e->range,
           role + " `" + text_of(frame.file, e->range) + "`" +
               (v.text.empty() ? "" : " (" + v.text + ")"));
  }

  // ---- classes ----

  bool class_is_module(const ClassRef &cls) const {
    const ModuleClass *mc = package_.find_class(cls.def->name);
    return mc && mc->def == cls.def && mc->is_module;
  }

  // The first package base of `cls`, or the base expression's dotted name (nn.Linear).
  std::vector<std::pair<std::optional<ClassRef>, std::string>> bases_of(const ClassRef &cls) {
    std::vector<std::pair<std::optional<ClassRef>, std::string>> out;
    for (const Expr *b : cls.def->bases) {
      std::string dotted = dotted_name(b);
      if (dotted.empty() && b->kind == ExprKind::Subscript)
        dotted = dotted_name(b->operands[0]);
      std::string leaf(leaf_name(dotted));
      auto found = find_class(leaf);
      if (found && found->def == cls.def)
        found.reset();
      out.emplace_back(found, dotted);
    }
    return out;
  }

  // Is `def` the class `name` or a package subclass of it?
  bool derives_from(const ClassDef *def, std::string_view name, int guard) {
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
  Value class_member(std::optional<ClassRef> cls, const std::string &name, const Value &self,
                     int guard = 0) {
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
  std::string builtin_layer_base(const ClassRef &cls, int guard = 0) {
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

  Value instantiate_module(const ClassRef &cls, std::vector<Value> args,
                           std::vector<std::pair<std::string, Value>> kwargs, const Frame &caller,
                           const std::string &path) {
    ModuleNode &node = tree_->nodes.emplace_back();
    node.class_name = std::string(cls.def->name);
    node.cls = package_.find_class(cls.def->name);
    node_classes_[&node] = cls;
    Value self = Value::module_value(&node);
    run_init(cls, self, std::move(args), std::move(kwargs), caller, path);
    return self;
  }

  Value instantiate_object(const ClassRef &cls, std::vector<Value> args,
                           std::vector<std::pair<std::string, Value>> kwargs, const Frame &caller) {
    Value self;
    self.kind = Kind::Object;
    self.object = std::make_shared<ObjectData>();
    self.object->class_name = std::string(cls.def->name);
    self.object->class_def = cls.def;
    run_init(cls, self, std::move(args), std::move(kwargs), caller, caller.module_path);
    return self;
  }

  // Whether class decorator `d` makes a dataclass: `@dataclass`, `@dataclass(...)`,
  // `@dataclasses.dataclass`, or huggingface_hub's `@strict` / `@strict(...)`, which wraps
  // dataclasses (transformers 5's configurations).
  static bool is_dataclass_decorator(const Expr *d) {
    if (d->kind == ExprKind::Call && !d->operands.empty())
      d = d->operands[0];
    if (d->kind != ExprKind::Name && d->kind != ExprKind::Attribute)
      return false;
    return d->text == "dataclass" || d->text == "strict";
  }
  static bool is_dataclass(const ClassDef *c) {
    return std::any_of(c->decorators.begin(), c->decorators.end(), is_dataclass_decorator);
  }

  // The dataclass whose generated __init__ builds an instance of `cls`: up the first bases, the
  // first class that is a dataclass, unless a class defines __init__ before it (a dataclass keeps
  // an __init__ its class defines). Nullopt: an ordinary __init__ runs.
  std::optional<ClassRef> generated_init_owner(const ClassRef &cls, int guard = 0) {
    if (guard > 16)
      return std::nullopt;
    for (const FunctionDef *m : cls.def->methods)
      if (m->name == "__init__")
        return std::nullopt;
    if (is_dataclass(cls.def))
      return cls;
    for (auto &[base, dotted] : bases_of(cls))
      return base ? generated_init_owner(*base, guard + 1) : std::nullopt;
    return std::nullopt;
  }

  struct DataclassField {
    std::string name;
    const Expr *default_value = nullptr; // null: no default
    const SyntaxFile *file = nullptr;
  };

  // The fields of `cls` and the dataclasses among its bases, bases first, as dataclasses order
  // them: each annotated class attribute of a dataclass (`hidden_size: int = 768`) but ClassVars;
  // a subclass's field of the same name replaces the base's default in place.
  void collect_fields(const ClassRef &cls, std::vector<DataclassField> &fields, int guard = 0) {
    if (guard > 16)
      return;
    auto bases = bases_of(cls);
    for (auto it = bases.rbegin(); it != bases.rend(); ++it)
      if (it->first)
        collect_fields(*it->first, fields, guard + 1);
    if (!is_dataclass(cls.def))
      return;
    for (const Stmt *st : cls.def->body) {
      if (st->kind != StmtKind::Assign || st->annotation.empty() || st->targets.size() != 1 ||
          st->targets[0]->kind != ExprKind::Name ||
          st->annotation.find("ClassVar") != std::string_view::npos)
        continue;
      DataclassField field{std::string(st->targets[0]->text), st->value, cls.file};
      auto same = std::find_if(fields.begin(), fields.end(),
                               [&](const DataclassField &f) { return f.name == field.name; });
      if (same != fields.end())
        *same = std::move(field);
      else
        fields.push_back(std::move(field));
    }
  }

  // Whether `cls` derives, through package classes, from transformers' configuration base.
  bool is_transformers_config(const ClassRef &cls) {
    return derives_from(cls.def, "PretrainedConfig", 0) ||
           derives_from(cls.def, "PreTrainedConfig", 0);
  }

  // The __init__ a dataclass generates (transformers 5's `@strict` configurations): each field
  // from its argument, else its default; keyword arguments that are not fields stay attributes,
  // as PreTrainedConfig's __post_init__ keeps them; then __post_init__ derives what it derives
  // (`head_dim = hidden_size // num_attention_heads`).
  void dataclass_init(const ClassRef &cls, const ClassRef &owner, const Value &self,
                      std::vector<Value> args, std::vector<std::pair<std::string, Value>> kwargs,
                      const Frame &caller) {
    std::vector<DataclassField> fields;
    collect_fields(owner, fields);
    std::map<std::string, Value> &attrs = self.object->attrs;
    size_t next_positional = 0;
    for (const DataclassField &field : fields) {
      auto given = std::find_if(kwargs.begin(), kwargs.end(),
                                [&](const auto &kw) { return kw.first == field.name; });
      if (given != kwargs.end()) {
        attrs[field.name] = given->second;
      } else if (next_positional < args.size()) {
        attrs[field.name] = args[next_positional++];
      } else if (field.default_value) {
        // `field(default=X)`, or a validator wrapping it (huggingface_hub's
        // `interval(min=0.0)(default=X)`): the default is X.
        const Expr *default_value = field.default_value;
        if (default_value->kind == ExprKind::Call)
          if (const Keyword *k = default_value->keyword("default"); k && k->value)
            default_value = k->value;
        Frame frame;
        frame.file = field.file;
        attrs[field.name] = eval(default_value, frame);
      }
    }
    std::vector<std::pair<std::string, Value>> rest;
    for (const auto &keyword : kwargs) {
      const std::string &name = keyword.first;
      if (!name.empty() && std::none_of(fields.begin(), fields.end(),
                                        [&](const DataclassField &f) { return f.name == name; })) {
        attrs[name] = keyword.second;
        rest.push_back(keyword);
      }
    }
    if (is_transformers_config(cls))
      add_pretrained_config_defaults(attrs);
    Value post_init = class_member(cls, "__post_init__", self);
    if (post_init.is(Kind::Function))
      call_function(post_init, {}, rest, caller, caller.module_path);
    if (is_transformers_config(cls))
      standardize_rope_parameters(cls, attrs, rest);
  }

  // What transformers 5's PreTrainedConfig.__post_init__ makes of a `rope_parameters` field
  // (RotaryEmbeddingConfigMixin.convert_rope_params_to_dict, standardize_rope_params): a dict
  // (`rope_scaling` if given, else the field, else {}) holding `rope_theta` and `rope_type`
  // ("type" or "default"). Rotary embeddings read both. Per-layer-type dicts stay as they are.
  void standardize_rope_parameters(const ClassRef &cls, std::map<std::string, Value> &attrs,
                                   const std::vector<std::pair<std::string, Value>> &kwargs) {
    auto field = attrs.find("rope_parameters");
    if (field == attrs.end())
      return;
    auto keyword = [&](const std::string &name) -> std::optional<Value> {
      for (const auto &kw : kwargs)
        if (kw.first == name)
          return kw.second;
      return std::nullopt;
    };
    Value params = field->second;
    if (std::optional<Value> scaling = keyword("rope_scaling"); scaling && scaling->is(Kind::Dict))
      params = *scaling;
    if (params.is(Kind::None))
      params = Value::dict_of({});
    if (!params.is(Kind::Dict))
      return;
    auto get = [&](const char *key) -> std::optional<Value> {
      for (const auto &entry : *params.dict)
        if (entry.first.is(Kind::Str) && entry.first.text == key)
          return entry.second;
      return std::nullopt;
    };
    auto layer_types = attrs.find("layer_types");
    if (layer_types != attrs.end() && layer_types->second.is(Kind::List) && !params.dict->empty() &&
        std::all_of(params.dict->begin(), params.dict->end(), [&](const auto &entry) {
          return std::any_of(layer_types->second.list->begin(), layer_types->second.list->end(),
                             [&](const Value &t) {
                               return t.is(Kind::Str) && entry.first.is(Kind::Str) &&
                                      t.text == entry.first.text;
                             });
        }))
      return;
    if (!get("rope_theta")) {
      std::optional<Value> theta = keyword("rope_theta");
      if (!theta && attrs.count("rope_theta"))
        theta = attrs["rope_theta"];
      if (!theta)
        theta = class_member(cls, "default_theta", Value::none());
      dict_set(params, Value::str("rope_theta"), *theta);
    }
    if (!get("rope_type")) {
      std::optional<Value> type = get("type");
      dict_set(params, Value::str("rope_type"), type ? *type : Value::str("default"));
    }
    field->second = params;
  }

  // Runs the __init__ that `cls` resolves to on `self`.
  void run_init(const ClassRef &cls, const Value &self, std::vector<Value> args,
                std::vector<std::pair<std::string, Value>> kwargs, const Frame &caller,
                const std::string &path, int guard = 0) {
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
  bool external_init(std::string_view leaf, const Value &self, const std::vector<Value> &args,
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
    LayerShape shape = torch_layer_shape(leaf, layer_args(args, kwargs));
    if (!shape.known_layer)
      return leaf == "Module" || leaf == "PreTrainedModel" || ends_with_str(leaf, "Mixin");
    add_layer_tensors(*self.module, shape, caller, leaf);
    return true;
  }

  static bool ends_with_str(std::string_view s, std::string_view p) {
    return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
  }

  std::function<LayerArgument(size_t, std::string_view)>
  layer_args(const std::vector<Value> &args,
             const std::vector<std::pair<std::string, Value>> &kwargs) {
    return [args, kwargs](size_t position, std::string_view keyword) {
      const Value *v = nullptr;
      for (const auto &[k, kv] : kwargs)
        if (k == keyword)
          v = &kv;
      if (!v && position < args.size())
        v = &args[position];
      LayerArgument a{LayerArgument::Kind::Missing, 0, 0, {}};
      if (!v)
        return a;
      switch (v->kind) {
      case Kind::Bool:
        a.kind = LayerArgument::Kind::Bool;
        a.integer = v->integer;
        break;
      case Kind::Int:
        a.kind = LayerArgument::Kind::Int;
        a.integer = v->integer;
        break;
      case Kind::Float:
        a.kind = LayerArgument::Kind::Float;
        a.real = v->real;
        if (auto whole = checked::from_real(v->real); whole && v->real == std::floor(v->real)) {
          a.kind = LayerArgument::Kind::Int; // torch casts; configs sometimes hold 4096.0
          a.integer = *whole;
        }
        break;
      case Kind::None:
        a.kind = LayerArgument::Kind::None;
        break;
      case Kind::List: {
        a.kind = LayerArgument::Kind::IntList;
        for (const Value &e : *v->list) {
          if (!e.is(Kind::Int)) {
            a.kind = LayerArgument::Kind::Unknown;
            break;
          }
          a.ints.push_back(e.integer);
        }
        break;
      }
      case Kind::Unknown:
        a.kind = LayerArgument::Kind::Unknown;
        break;
      default:
        a.kind = LayerArgument::Kind::Other;
      }
      return a;
    };
  }

  void add_layer_tensors(ModuleNode &node, const LayerShape &shape, const Frame &caller,
                         std::string_view leaf) {
    if (!shape.unknown.empty())
      report(caller, SourceRange{}, std::string(leaf) + ": " + shape.unknown + " unknown");
    for (const LayerTensor &t : shape.tensors) {
      TreeTensor tt;
      tt.name = t.name;
      tt.numel = t.numel;
      tt.is_buffer = t.is_buffer;
      tt.integer_dtype = t.integer_dtype;
      tt.element_bytes = t.element_bytes;
      tt.storage = next_storage_++;
      (t.is_buffer ? node.buffers : node.parameters).push_back(tt);
    }
  }

  Value builtin_module(std::string_view leaf, const std::vector<Value> &args,
                       const std::vector<std::pair<std::string, Value>> &kwargs,
                       const Frame &caller, const Expr *call) {
    if (leaf == "ModuleList" || leaf == "Sequential" || leaf == "ModuleDict" ||
        leaf == "ParameterList") {
      ModuleNode &node = tree_->nodes.emplace_back();
      node.class_name = std::string(leaf);
      ValueList items;
      if (leaf == "Sequential") {
        if (args.size() == 1 && args[0].is(Kind::Dict)) {
          for (const auto &[k, v] : *args[0].dict)
            add_container_item(node, k.is(Kind::Str) ? k.text : "?", v, caller, call);
          return Value::module_value(&node);
        }
        items = args;
      } else if (!args.empty()) {
        if (args[0].is(Kind::Dict) && leaf == "ModuleDict") {
          for (const auto &[k, v] : *args[0].dict)
            add_container_item(node, k.is(Kind::Str) ? k.text : "?", v, caller, call);
          return Value::module_value(&node);
        }
        if (args[0].is(Kind::List))
          items = *args[0].list;
        else if (!args[0].is(Kind::None)) {
          report_unknown_value(caller, call, args[0], std::string(leaf) + " contents");
          return Value::module_value(&node);
        }
      }
      for (size_t i = 0; i < items.size(); ++i)
        add_container_item(node, std::to_string(i), items[i], caller, call);
      return Value::module_value(&node);
    }
    LayerShape shape = torch_layer_shape(leaf, layer_args(args, kwargs));
    if (!shape.known_layer)
      return Value::unknown("");
    ModuleNode &node = tree_->nodes.emplace_back();
    node.class_name = std::string(leaf);
    if (!shape.unknown.empty())
      report(caller, call->range,
             "`" + text_of(caller.file, call->range) + "`: " + shape.unknown + " unknown");
    LayerShape known = shape;
    known.unknown.clear();
    add_layer_tensors(node, known, caller, leaf);
    return Value::module_value(&node);
  }

  void add_container_item(ModuleNode &node, const std::string &name, const Value &v,
                          const Frame &caller, const Expr *call) {
    if (v.is(Kind::Module))
      node.children.emplace_back(name, v.module);
    else if (v.is(Kind::Tensor) && v.is_parameter)
      node.parameters.push_back(make_tensor(name, v, false, true));
    else if (v.is(Kind::Unknown))
      report_unknown_value(caller, call, v, "container element");
  }

  TreeTensor make_tensor(const std::string &name, const Value &v, bool buffer, bool persistent) {
    TreeTensor t;
    t.name = name;
    t.numel = v.numel;
    t.is_buffer = buffer;
    t.persistent = persistent;
    t.integer_dtype = v.integer_dtype;
    t.element_bytes = v.element_bytes;
    t.dims = v.dims;
    t.storage = v.source_tensor ? v.source_tensor->storage : next_storage_++;
    return t;
  }

  // ---- attributes ----

  void set_module_attr(ModuleNode &node, const std::string &name, const Value &v) {
    auto &attrs = module_attrs_[&node];
    for (auto &[n, c] : node.children)
      if (n == name) {
        if (v.is(Kind::Module)) {
          c = v.module;
          return;
        }
        if (v.is(Kind::None)) { // torch keeps the name with None: it holds nothing
          node.children.erase(std::find_if(node.children.begin(), node.children.end(),
                                           [&](const auto &e) { return e.first == name; }));
          attrs[name] = v;
          return;
        }
      }
    auto same = [&](const TreeTensor &t) { return t.name == name; };
    auto param = std::find_if(node.parameters.begin(), node.parameters.end(), same);
    auto buffer = std::find_if(node.buffers.begin(), node.buffers.end(), same);
    if (v.is(Kind::Module)) {
      node.children.emplace_back(name, v.module);
      attrs.erase(name);
      return;
    }
    if (v.is(Kind::Tensor) && (v.is_parameter || param != node.parameters.end())) {
      TreeTensor t = make_tensor(name, v, false, true);
      if (param != node.parameters.end())
        *param = t;
      else
        node.parameters.push_back(t);
      return;
    }
    if (v.is(Kind::Tensor) && buffer != node.buffers.end()) {
      bool persistent = buffer->persistent;
      *buffer = make_tensor(name, v, true, persistent);
      return;
    }
    if (v.is(Kind::None) && param != node.parameters.end()) {
      node.parameters.erase(param); // `self.bias = None` after registering: no tensor
      return;
    }
    attrs[name] = v;
  }

  Value get_module_attr(ModuleNode *node, const std::string &name) {
    for (const auto &[n, c] : node->children)
      if (n == name)
        return Value::module_value(c);
    for (const auto *list : {&node->parameters, &node->buffers})
      for (const TreeTensor &t : *list)
        if (t.name == name) {
          Value v;
          v.kind = Kind::Tensor;
          v.numel = t.numel;
          v.integer_dtype = t.integer_dtype;
          v.element_bytes = t.element_bytes;
          v.dims = t.dims;
          v.is_parameter = !t.is_buffer;
          v.source_tensor = &t;
          return v;
        }
    auto &attrs = module_attrs_[node];
    auto it = attrs.find(name);
    if (it != attrs.end())
      return it->second;
    if (name == "training")
      return Value::boolean(true);
    Value member = class_member(node_class(node), name, Value::module_value(node));
    if (!member.is(Kind::Unknown))
      return member;
    Value missing =
        Value::unknown("`" + node->class_name + "` has no attribute `" + name + "` yet");
    missing.method_name = name;
    missing.bound_self = std::make_shared<Value>(Value::module_value(node));
    return missing;
  }

  Value get_attr(const Value &obj, const std::string &name, const Frame &frame) {
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
      return Value::unknown("the configuration has no `" + name + "`");
    }
    case Kind::Namespace:
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
      if (name == "dtype" || name == "device")
        return Value::unknown("tensor." + name);
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

  // ---- names ----

  Value lookup(const std::string &name, const Frame &frame) {
    auto local = frame.locals.find(name);
    if (local != frame.locals.end())
      return local->second;
    if (frame.file) {
      auto &g = globals_[frame.file];
      auto it = g.find(name);
      if (it != g.end()) {
        auto key = std::make_pair(frame.file, name);
        auto cached = global_cache_.find(key);
        if (cached != global_cache_.end())
          return cached->second;
        if (!it->second)
          return Value::unknown("`" + name + "` is not defined");
        global_cache_[key] = Value::unknown("recursive global");
        Frame global;
        global.file = frame.file;
        Value v = eval(it->second, global);
        global_cache_[key] = v;
        return v;
      }
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
      if (it != imp.end())
        return Value::ns(it->second);
    }
    static const std::unordered_set<std::string> builtins = {
        "range",    "len",        "int",     "float",   "str",     "bool",  "min",   "max",
        "sum",      "abs",        "round",   "list",    "tuple",   "dict",  "set",   "enumerate",
        "zip",      "isinstance", "getattr", "hasattr", "setattr", "super", "print", "sorted",
        "reversed", "any",        "all",     "divmod",  "pow"};
    if (builtins.count(name))
      return Value::ns("builtins." + name);
    if (name == "torch" || name == "nn" || name == "F" || name == "math" || name == "np" ||
        name == "numpy")
      return Value::ns(name);
    return Value::unknown("`" + name + "` is not defined in the package");
  }

  // ---- expressions ----

  int64_t parse_int_literal(std::string_view t, bool *ok) {
    std::string s;
    for (char c : t)
      if (c != '_')
        s += c;
    try {
      size_t used = 0;
      int64_t v = std::stoll(s, &used, 0);
      *ok = used == s.size();
      return v;
    } catch (...) {
      *ok = false;
      return 0;
    }
  }

  Value eval_number(const Expr *e, const Frame &frame) {
    if (!frame.file || !frame.file->source)
      return Value::unknown("number");
    std::string_view t = frame.file->source->slice(e->range);
    bool ok = false;
    int64_t i = parse_int_literal(t, &ok);
    if (ok)
      return Value::integer_value(i);
    std::string s;
    for (char c : t)
      if (c != '_')
        s += c;
    try {
      return Value::real_value(std::stod(s));
    } catch (...) {
      return Value::unknown("number");
    }
  }

  // f"transformer.layers.{i}": the interpolations are names, attributes or `name + k`.
  Value eval_fstring(std::string_view body, const Frame &frame) {
    std::string out;
    for (size_t i = 0; i < body.size(); ++i) {
      char c = body[i];
      if (c == '{' && i + 1 < body.size() && body[i + 1] == '{') {
        out += '{';
        ++i;
        continue;
      }
      if (c == '}' && i + 1 < body.size() && body[i + 1] == '}') {
        out += '}';
        ++i;
        continue;
      }
      if (c != '{') {
        out += c;
        continue;
      }
      size_t close = body.find('}', i);
      if (close == std::string_view::npos)
        return Value::unknown("f-string");
      std::string inner(body.substr(i + 1, close - i - 1));
      size_t colon = inner.find(':');
      if (colon != std::string::npos)
        inner = inner.substr(0, colon);
      Value v = eval_simple_text(inner, frame);
      if (v.is(Kind::Int))
        out += std::to_string(v.integer);
      else if (v.is(Kind::Str))
        out += v.text;
      else
        return Value::unknown("f-string part `{" + inner + "}`");
      i = close;
    }
    return Value::str(out);
  }

  Value eval_simple_text(std::string text, const Frame &frame) {
    auto trim = [](std::string s) {
      size_t b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
      return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
    };
    text = trim(text);
    for (char op : {'+', '-', '*'}) {
      size_t p = text.rfind(op);
      if (p != std::string::npos && p > 0) {
        Value a = eval_simple_text(text.substr(0, p), frame);
        Value b = eval_simple_text(text.substr(p + 1), frame);
        if (a.is(Kind::Int) && b.is(Kind::Int))
          return Value::integer_value(op == '+'   ? a.integer + b.integer
                                      : op == '-' ? a.integer - b.integer
                                                  : a.integer * b.integer);
        return Value::unknown("");
      }
    }
    bool ok = false;
    int64_t i = parse_int_literal(text, &ok);
    if (ok)
      return Value::integer_value(i);
    size_t dot = text.find('.');
    Value v = lookup(text.substr(0, dot), frame);
    while (dot != std::string::npos) {
      size_t next = text.find('.', dot + 1);
      v = get_attr(v, text.substr(dot + 1, next == std::string::npos ? next : next - dot - 1),
                   frame);
      dot = next;
    }
    return v;
  }

  Value eval(const Expr *e, Frame &frame) {
    if (!e)
      return Value::none();
    if (depth_ > kMaxDepth)
      return Value::unknown("too deep");
    switch (e->kind) {
    case ExprKind::Name:
      if (e->text == "True")
        return Value::boolean(true);
      if (e->text == "False")
        return Value::boolean(false);
      if (e->text == "None")
        return Value::none();
      return lookup(std::string(e->text), frame);
    case ExprKind::Number:
      return eval_number(e, frame);
    case ExprKind::String: {
      if (frame.file && frame.file->source) {
        std::string_view whole = frame.file->source->slice(e->range);
        size_t quote = whole.find_first_of("\"'");
        std::string_view prefix = whole.substr(0, quote == std::string_view::npos ? 0 : quote);
        if (prefix.find('f') != std::string_view::npos ||
            prefix.find('F') != std::string_view::npos)
          return eval_fstring(e->text, frame);
      }
      return Value::str(std::string(e->text));
    }
    case ExprKind::Bool:
      return Value::boolean(frame.file && frame.file->source &&
                            frame.file->source->slice(e->range) == "True");
    case ExprKind::NoneLiteral:
      return Value::none();
    case ExprKind::Tuple: {
      ValueList items;
      for (const Expr *x : e->operands) {
        if (x->kind == ExprKind::Starred && !x->operands.empty()) {
          Value s = eval(x->operands[0], frame);
          if (s.is(Kind::List))
            for (const Value &y : *s.list)
              items.push_back(y);
          else
            items.push_back(Value::unknown("starred"));
          continue;
        }
        items.push_back(eval(x, frame));
      }
      return Value::list_of(std::move(items));
    }
    case ExprKind::Dict: {
      ValueDict items;
      for (size_t i = 0; i < e->operands.size(); ++i) {
        const Expr *key = i < e->keywords.size() ? e->keywords[i].value : nullptr;
        items.emplace_back(key ? eval(key, frame) : Value::unknown("key"),
                           eval(e->operands[i], frame));
      }
      return Value::dict_of(std::move(items));
    }
    case ExprKind::Attribute: {
      Value obj = eval(e->operands[0], frame);
      if (obj.is(Kind::Unknown))
        return obj;
      return get_attr(obj, std::string(e->text), frame);
    }
    case ExprKind::Subscript:
      return eval_subscript(e, frame);
    case ExprKind::Call:
      return eval_call(e, frame);
    case ExprKind::BinaryOp:
      return binary(std::string(e->text), eval(e->operands[0], frame), eval(e->operands[1], frame));
    case ExprKind::UnaryOp: {
      Value v = eval(e->operands[0], frame);
      if (e->text == "-") {
        if (v.is(Kind::Int) || v.is(Kind::Bool))
          return Value::integer_value(-v.integer);
        if (v.is(Kind::Float))
          return Value::real_value(-v.real);
        if (v.is(Kind::Tensor))
          return v;
      }
      if (e->text == "+")
        return v;
      return Value::unknown("unary `" + std::string(e->text) + "`");
    }
    case ExprKind::BoolOp: {
      if (e->text == "not") {
        auto t = truthy(eval(e->operands[0], frame));
        return t ? Value::boolean(!*t) : Value::unknown("not of an unknown value");
      }
      Value a = eval(e->operands[0], frame);
      auto t = truthy(a);
      if (!t)
        return a;
      bool is_and = e->text == "and";
      if (is_and ? !*t : *t)
        return a;
      return eval(e->operands[1], frame);
    }
    case ExprKind::Compare:
      return compare(std::string(e->text), eval(e->operands[0], frame),
                     eval(e->operands[1], frame));
    case ExprKind::Conditional: {
      // tree-sitter order: value if condition else other
      auto t = truthy(eval(e->operands[1], frame));
      if (!t) {
        Value cond = eval(e->operands[1], frame);
        report_unknown_value(frame, e->operands[1], cond, "condition");
        return Value::unknown("condition");
      }
      return eval(e->operands[*t ? 0 : 2], frame);
    }
    case ExprKind::Comprehension:
      return eval_comprehension(e, frame);
    case ExprKind::Starred:
      return e->operands.empty() ? Value::unknown("starred") : eval(e->operands[0], frame);
    default:
      return Value::unknown("`" + text_of(frame.file, e->range) + "`");
    }
  }

  Value eval_comprehension(const Expr *e, Frame &frame) {
    const Expr *element = e->operands[0];
    Value iterated = eval(e->operands[1], frame);
    const Expr *target = e->operands[2];
    if (!iterated.is(Kind::List)) {
      report_unknown_value(frame, e->operands[1], iterated, "loop over");
      return Value::unknown("comprehension over an unknown value");
    }
    std::vector<std::pair<std::string, std::optional<Value>>> saved;
    ValueList out;
    for (const Value &item : *iterated.list) {
      assign(target, item, frame, &saved);
      out.push_back(eval(element, frame));
    }
    for (auto &[name, old] : saved) {
      if (old)
        frame.locals[name] = *old;
      else
        frame.locals.erase(name);
    }
    return Value::list_of(std::move(out));
  }

  Value eval_subscript(const Expr *e, Frame &frame) {
    Value v = eval(e->operands[0], frame);
    if (e->operands.size() < 2)
      return Value::unknown("subscript");
    if (v.is(Kind::Namespace)) {
      std::string_view leaf = leaf_name(v.text);
      if (leaf == "ACT2FN" || leaf == "ACT2CLS") { // activations hold no parameters
        ModuleNode &node = tree_->nodes.emplace_back();
        node.class_name = "Activation";
        return Value::module_value(&node);
      }
      return Value::unknown("`" + text_of(frame.file, e->range) + "`");
    }
    if (v.is(Kind::Dict) && v.dict->size() > 0) {
      Value key = eval(e->operands[1], frame);
      for (const auto &[k, x] : *v.dict) {
        auto eq = equal(k, key);
        if (eq && *eq)
          return x;
      }
      // ATTENTION_CLASSES[config._attn_implementation] when the key is unknown: all share
      // one set of weights, so the first class stands for them (said in the report).
      if (key.is(Kind::Unknown))
        return Value::unknown("unknown dict key");
      return Value::unknown("key not in dict");
    }
    Value index = eval(e->operands[1], frame);
    // A JSON object of the configuration is a dict to Python
    // (`config.rope_parameters["rope_type"]`) unless a configuration class made it a
    // sub-configuration; it answers both ways here.
    if (v.is(Kind::Object) && !v.object->class_def && index.is(Kind::Str)) {
      auto it = v.object->attrs.find(index.text);
      return it != v.object->attrs.end() ? it->second : Value::unknown("key not in dict");
    }
    if (v.is(Kind::List) && index.is(Kind::Int)) {
      int64_t n = static_cast<int64_t>(v.list->size());
      int64_t i = index.integer < 0 ? index.integer + n : index.integer;
      if (i >= 0 && i < n)
        return (*v.list)[static_cast<size_t>(i)];
      return Value::unknown("index out of range");
    }
    if (v.is(Kind::Str) && index.is(Kind::Int) && index.integer >= 0 &&
        static_cast<size_t>(index.integer) < v.text.size())
      return Value::str(v.text.substr(static_cast<size_t>(index.integer), 1));
    if (v.is(Kind::Module) && index.is(Kind::Int)) {
      int64_t n = static_cast<int64_t>(v.module->children.size());
      int64_t i = index.integer < 0 ? index.integer + n : index.integer;
      if (i >= 0 && i < n)
        return Value::module_value(v.module->children[static_cast<size_t>(i)].second);
    }
    if (v.is(Kind::Module) && index.is(Kind::Str))
      if (ModuleNode *c = v.module->child(index.text))
        return Value::module_value(c);
    if (v.is(Kind::List) && e->operands[1]->kind == ExprKind::Slice) {
      // a[:k], a[k:], a[i:j]
      const Expr *slice = e->operands[1];
      std::string text = text_of(frame.file, slice->range);
      size_t colon = text.find(':');
      int64_t n = static_cast<int64_t>(v.list->size());
      auto bound = [&](std::string s, int64_t fallback) -> std::optional<int64_t> {
        if (s.find_first_not_of(' ') == std::string::npos)
          return fallback;
        Value b = eval_simple_text(s, frame);
        if (!b.is(Kind::Int))
          return std::nullopt;
        return b.integer < 0 ? b.integer + n : b.integer;
      };
      if (colon != std::string::npos && text.find(':', colon + 1) == std::string::npos) {
        auto lo = bound(text.substr(0, colon), 0), hi = bound(text.substr(colon + 1), n);
        if (lo && hi) {
          ValueList out;
          for (int64_t i = std::max<int64_t>(0, *lo); i < std::min(*hi, n); ++i)
            out.push_back((*v.list)[static_cast<size_t>(i)]);
          return Value::list_of(std::move(out));
        }
      }
    }
    if (v.is(Kind::Unknown))
      return v;
    return Value::unknown("`" + text_of(frame.file, e->range) + "`");
  }

  // A copy of a configuration value: objects, lists and dicts get their own storage (deep: at
  // every level), so that edits to the copy leave the original as it was.
  static Value copied(const Value &v, bool deep, int depth) {
    Value out = v;
    if (depth > 32)
      return out;
    auto inner = [&](const Value &x) { return deep ? copied(x, deep, depth + 1) : x; };
    if (v.is(Kind::Object) && v.object) {
      out.object = std::make_shared<ObjectData>(*v.object);
      for (auto &[k, x] : out.object->attrs)
        x = inner(x);
    } else if (v.is(Kind::List) && v.list) {
      out.list = std::make_shared<ValueList>(*v.list);
      for (Value &x : *out.list)
        x = inner(x);
    } else if (v.is(Kind::Dict) && v.dict) {
      out.dict = std::make_shared<ValueDict>(*v.dict);
      for (auto &[k, x] : *out.dict)
        x = inner(x);
    }
    return out;
  }

  static int64_t product(const std::vector<int64_t> &dims) {
    int64_t p = 1;
    for (int64_t d : dims)
      p *= d;
    return p;
  }

  // The shape `t.view(...)` / `t.reshape(...)` / `t.expand(...)` asks for: ints, -1 for the one
  // inferred dimension (view) or for a kept one (expand). Nullopt when it cannot be worked out.
  static std::optional<std::vector<int64_t>> new_shape(const Value &t, std::vector<Value> shape,
                                                       bool expand) {
    if (shape.size() == 1 && shape[0].is(Kind::List))
      shape = std::vector<Value>(*shape[0].list);
    std::vector<int64_t> dims;
    int64_t known = 1;
    int inferred = -1;
    for (size_t i = 0; i < shape.size(); ++i) {
      if (!shape[i].is(Kind::Int))
        return std::nullopt;
      int64_t d = shape[i].integer;
      if (d == -1 && expand) {
        size_t from_right = shape.size() - i;
        if (from_right > t.dims.size())
          return std::nullopt;
        d = t.dims[t.dims.size() - from_right];
      } else if (d == -1) {
        if (inferred >= 0)
          return std::nullopt;
        inferred = static_cast<int>(i);
        dims.push_back(-1);
        continue;
      }
      if (d < 0)
        return std::nullopt;
      known *= d;
      dims.push_back(d);
    }
    if (inferred >= 0) {
      if (known == 0 || *t.numel % known != 0)
        return std::nullopt;
      dims[inferred] = *t.numel / known;
      known = *t.numel;
    }
    if (!expand && known != *t.numel)
      return std::nullopt;
    return dims;
  }

  static Value tensor_like(const Value &t, std::optional<int64_t> numel) {
    Value v;
    v.kind = Kind::Tensor;
    v.numel = numel;
    v.integer_dtype = t.integer_dtype;
    v.element_bytes = t.element_bytes;
    return v;
  }

  Value binary(const std::string &op, const Value &a, const Value &b) {
    if (a.is(Kind::Tensor) || b.is(Kind::Tensor)) {
      // Elementwise with broadcasting: the larger operand decides the size (what `__init__`
      // computes: inv_freq = 1.0 / base ** (arange(0, dim, 2) / dim)).
      const Value &t = a.is(Kind::Tensor) ? a : b;
      if (a.is(Kind::Tensor) && b.is(Kind::Tensor)) {
        if (!a.numel || !b.numel)
          return tensor_like(a, std::nullopt);
        Value r = tensor_like(*a.numel >= *b.numel ? a : b, std::max(*a.numel, *b.numel));
        if (op == "@")
          r.numel = std::nullopt;
        r.integer_dtype = a.integer_dtype && b.integer_dtype;
        return r;
      }
      Value r = tensor_like(t, t.numel);
      const Value &other = a.is(Kind::Tensor) ? b : a;
      if (other.is(Kind::Float) || op == "/") {
        r.integer_dtype = false;
        r.element_bytes = 4;
      }
      return r;
    }
    if (a.is(Kind::Str) && b.is(Kind::Str) && op == "+")
      return Value::str(a.text + b.text);
    if (a.is(Kind::List) && b.is(Kind::List) && op == "+") {
      ValueList items = *a.list;
      items.insert(items.end(), b.list->begin(), b.list->end());
      return Value::list_of(std::move(items));
    }
    if (a.is(Kind::List) && b.is(Kind::Int) && op == "*") {
      ValueList items;
      for (int64_t i = 0; i < b.integer && items.size() < kMaxLoop; ++i)
        items.insert(items.end(), a.list->begin(), a.list->end());
      return Value::list_of(std::move(items));
    }
    if (a.is(Kind::Str) && op == "%")
      return Value::unknown("string formatting");
    if (!a.is_number() || !b.is_number()) {
      if (a.is(Kind::Unknown))
        return a;
      if (b.is(Kind::Unknown))
        return b;
      return Value::unknown("`" + op + "` on these values");
    }
    bool ints = !a.is(Kind::Float) && !b.is(Kind::Float);
    if (ints) {
      int64_t x = a.integer, y = b.integer;
      auto checked_result = [](std::optional<int64_t> r) {
        return r ? Value::integer_value(*r) : Value::unknown("an integer over 64 bits");
      };
      if (op == "+")
        return checked_result(checked::add(x, y));
      if (op == "-")
        return checked_result(checked::sub(x, y));
      if (op == "*")
        return checked_result(checked::mul(x, y));
      if (op == "//" || op == "%") {
        if (y == 0)
          return Value::unknown("division by zero");
        if (y == -1 && x == INT64_MIN)
          return Value::unknown("an integer over 64 bits");
        int64_t q = x / y;
        if ((x % y != 0) && ((x < 0) != (y < 0)))
          --q; // Python floors
        return Value::integer_value(op == "//" ? q : x - q * y);
      }
      if (op == "/")
        return y == 0 ? Value::unknown("division by zero")
                      : Value::real_value(static_cast<double>(x) / static_cast<double>(y));
      if (op == "**" && y >= 0 && y < 63)
        return checked_result(checked::power(x, y));
      if (op == "<<" && y >= 0 && y < 62)
        return checked_result(checked::shift_left(x, y));
      if (op == ">>" && y >= 0 && y < 63)
        return Value::integer_value(x >> y);
      if (op == "&")
        return Value::integer_value(x & y);
      if (op == "|")
        return Value::integer_value(x | y);
    }
    double x = a.as_real(), y = b.as_real();
    if (op == "+")
      return Value::real_value(x + y);
    if (op == "-")
      return Value::real_value(x - y);
    if (op == "*")
      return Value::real_value(x * y);
    if (op == "/")
      return y == 0 ? Value::unknown("division by zero") : Value::real_value(x / y);
    if (op == "//")
      return y == 0 ? Value::unknown("division by zero") : Value::real_value(std::floor(x / y));
    if (op == "**")
      return Value::real_value(std::pow(x, y));
    if (op == "%")
      return y == 0 ? Value::unknown("division by zero")
                    : Value::real_value(x - std::floor(x / y) * y);
    return Value::unknown("operator `" + op + "`");
  }

  Value compare(const std::string &op, const Value &a, const Value &b) {
    if (op == "is" || op == "is not") {
      if (a.is(Kind::Unknown) || b.is(Kind::Unknown))
        return Value::unknown("identity of an unknown value");
      bool same = (a.is(Kind::None) && b.is(Kind::None)) ||
                  (a.is(Kind::Bool) && b.is(Kind::Bool) && a.integer == b.integer);
      if (!b.is(Kind::None) && !b.is(Kind::Bool) && !(a.is(Kind::None)))
        return Value::unknown("identity");
      return Value::boolean(op == "is" ? same : !same);
    }
    if (op == "in" || op == "not in") {
      std::optional<bool> found;
      if (b.is(Kind::List)) {
        found = false;
        for (const Value &x : *b.list) {
          auto eq = equal(a, x);
          if (!eq) {
            found.reset();
            break;
          }
          if (*eq) {
            found = true;
            break;
          }
        }
      } else if (b.is(Kind::Dict)) {
        found = false;
        for (const auto &[k, x] : *b.dict) {
          auto eq = equal(a, k);
          if (eq && *eq)
            found = true;
        }
      } else if (b.is(Kind::Str) && a.is(Kind::Str)) {
        found = b.text.find(a.text) != std::string::npos;
      }
      if (!found)
        return Value::unknown("membership");
      return Value::boolean(op == "in" ? *found : !*found);
    }
    if (op == "==" || op == "!=") {
      auto eq = equal(a, b);
      if (!eq)
        return Value::unknown("comparison");
      return Value::boolean(op == "==" ? *eq : !*eq);
    }
    if (a.is_number() && b.is_number()) {
      double x = a.as_real(), y = b.as_real();
      bool r = op == "<" ? x < y : op == "<=" ? x <= y : op == ">" ? x > y : x >= y;
      return Value::boolean(r);
    }
    return Value::unknown("comparison");
  }

  // ---- calls ----

  struct Arguments {
    std::vector<Value> positional;
    std::vector<std::pair<std::string, Value>> keywords;
  };

  Arguments eval_arguments(const Expr *call, Frame &frame) {
    Arguments a;
    for (size_t i = 1; i < call->operands.size(); ++i) {
      const Expr *x = call->operands[i];
      if (x->kind == ExprKind::Starred && !x->operands.empty()) {
        Value s = eval(x->operands[0], frame);
        if (s.is(Kind::List))
          a.positional.insert(a.positional.end(), s.list->begin(), s.list->end());
        else
          a.positional.push_back(Value::unknown("*args"));
        continue;
      }
      a.positional.push_back(eval(x, frame));
    }
    for (const Keyword &k : call->keywords) {
      Value v = eval(k.value, frame);
      if (k.name.empty()) { // **kwargs
        if (v.is(Kind::Dict))
          for (const auto &[key, x] : *v.dict)
            if (key.is(Kind::Str))
              a.keywords.emplace_back(key.text, x);
        continue;
      }
      a.keywords.emplace_back(std::string(k.name), v);
    }
    return a;
  }

  static const Value *keyword_or(const Arguments &a, std::string_view name, size_t position) {
    for (const auto &[k, v] : a.keywords)
      if (k == name)
        return &v;
    return position < a.positional.size() ? &a.positional[position] : nullptr;
  }

  Value eval_call(const Expr *call, Frame &frame) {
    const Expr *callee_expr = call->operands[0];
    // super().__init__(...) / Base.__init__(self, ...)
    Value callee = eval(callee_expr, frame);
    Arguments args = eval_arguments(call, frame);
    return call_value(callee, std::move(args), frame, call);
  }

  Value call_value(const Value &callee, Arguments args, Frame &frame, const Expr *call) {
    switch (callee.kind) {
    case Kind::Class: {
      ClassRef cls{callee.class_def, callee.file};
      if (class_is_module(cls))
        return instantiate_module(cls, std::move(args.positional), std::move(args.keywords), frame,
                                  frame.module_path);
      return instantiate_object(cls, std::move(args.positional), std::move(args.keywords), frame);
    }
    case Kind::Function:
      return call_function(callee, std::move(args.positional), std::move(args.keywords), frame,
                           frame.module_path);
    case Kind::Super: {
      if (callee.text == "__init__" && frame.current_class && callee.bound_self) {
        ClassRef current{frame.current_class, frame.file};
        for (auto &[base, dotted] : bases_of(current)) {
          if (base) {
            run_init(*base, *callee.bound_self, std::move(args.positional),
                     std::move(args.keywords), frame, frame.module_path);
            return Value::none();
          }
          if (external_init(leaf_name(dotted), *callee.bound_self, args.positional, args.keywords,
                            frame))
            return Value::none();
        }
        return Value::none();
      }
      if (frame.current_class && callee.bound_self) {
        ClassRef current{frame.current_class, frame.file};
        for (auto &[base, dotted] : bases_of(current))
          if (base) {
            Value m = class_member(base, callee.text, *callee.bound_self);
            if (m.is(Kind::Function))
              return call_function(m, std::move(args.positional), std::move(args.keywords), frame,
                                   frame.module_path);
          }
      }
      return Value::unknown("super()." + callee.text);
    }
    case Kind::Namespace:
      return call_namespace(callee, std::move(args), frame, call);
    case Kind::Unknown:
      if (callee.bound_self && !callee.method_name.empty())
        return call_method(*callee.bound_self, callee.method_name, std::move(args), frame, call);
      return callee;
    default:
      return Value::unknown("call of a value that is not callable");
    }
  }

  Value call_function(const Value &fn, std::vector<Value> positional,
                      std::vector<std::pair<std::string, Value>> keywords, const Frame &caller,
                      const std::string &path = "") {
    if (depth_ >= kMaxDepth)
      return Value::unknown("calls nested too deeply");
    Frame frame;
    frame.file = fn.file;
    frame.current_class = fn.class_def;
    frame.module_path = path.empty() ? caller.module_path : path;
    if (fn.closure)
      frame.locals = *fn.closure;
    const FunctionDef *def = fn.function;
    size_t next = 0;
    std::vector<Value> args;
    if (fn.bound_self)
      args.push_back(*fn.bound_self);
    args.insert(args.end(), positional.begin(), positional.end());
    std::vector<bool> used_keyword(keywords.size(), false);
    for (const Parameter &p : def->parameters) {
      std::string name(p.name);
      bool double_star = false;
      if (p.variadic && fn.file && fn.file->source) {
        std::string_view t = fn.file->source->slice(p.range);
        double_star = t.substr(0, 2) == "**";
        if (p.range.end == 0)
          double_star = name == "kwargs";
      }
      if (p.variadic && !double_star) {
        ValueList rest;
        while (next < args.size())
          rest.push_back(args[next++]);
        frame.locals[name] = Value::list_of(std::move(rest));
        continue;
      }
      if (p.variadic) {
        ValueDict rest;
        for (size_t k = 0; k < keywords.size(); ++k)
          if (!used_keyword[k])
            rest.emplace_back(Value::str(keywords[k].first), keywords[k].second);
        frame.locals[name] = Value::dict_of(std::move(rest));
        continue;
      }
      bool bound = false;
      for (size_t k = 0; k < keywords.size(); ++k)
        if (keywords[k].first == name) {
          frame.locals[name] = keywords[k].second;
          used_keyword[k] = true;
          bound = true;
        }
      if (!bound && next < args.size()) {
        frame.locals[name] = args[next++];
        bound = true;
      }
      if (!bound) {
        if (p.default_value) {
          Frame defaults;
          defaults.file = fn.file;
          frame.locals[name] = eval(p.default_value, defaults);
        } else {
          frame.locals[name] = Value::unknown("argument `" + name + "` not given");
        }
      }
    }
    ++depth_;
    exec_block(def->body, frame);
    --depth_;
    return frame.returned ? frame.return_value : Value::none();
  }

  static Value tensor_of(std::optional<int64_t> numel, bool integer, int bytes) {
    Value v;
    v.kind = Kind::Tensor;
    v.numel = element_count(numel);
    v.integer_dtype = integer;
    v.element_bytes = bytes;
    return v;
  }

  // A size given as ints, a list of ints, or torch.Size.
  std::optional<int64_t> size_product(const std::vector<Value> &args, std::vector<int64_t> *dims) {
    std::optional<int64_t> p = 1;
    auto add = [&](const Value &v) {
      if (v.is(Kind::Int)) {
        p = element_product(p, v.integer);
        if (dims)
          dims->push_back(v.integer);
        return true;
      }
      return false;
    };
    if (args.size() == 1 && args[0].is(Kind::List)) {
      for (const Value &v : *args[0].list)
        if (!add(v))
          return std::nullopt;
      return p;
    }
    for (const Value &v : args)
      if (!add(v))
        return std::nullopt;
    return p;
  }

  // The dtype= keyword: integer? bytes?
  static void apply_dtype(const Arguments &a, Value &t) {
    const Value *d = keyword_or(a, "dtype", SIZE_MAX);
    if (!d || !d->is(Kind::Namespace))
      return;
    std::string_view leaf = leaf_name(d->text);
    if (leaf == "long" || leaf == "int64") {
      t.integer_dtype = true;
      t.element_bytes = 8;
    } else if (leaf == "int" || leaf == "int32") {
      t.integer_dtype = true;
      t.element_bytes = 4;
    } else if (leaf == "bool" || leaf == "uint8" || leaf == "int8") {
      t.integer_dtype = true;
      t.element_bytes = 1;
    } else if (leaf == "float16" || leaf == "half" || leaf == "bfloat16") {
      t.integer_dtype = false;
      t.element_bytes = 2;
    } else if (leaf == "float" || leaf == "float32") {
      t.integer_dtype = false;
      t.element_bytes = 4;
    }
  }

  Value call_namespace(const Value &callee, Arguments a, Frame &frame, const Expr *call) {
    std::string_view name = callee.text;
    std::string_view leaf = leaf_name(name);
    if (callee.bound_self)
      return call_method(*callee.bound_self, std::string(leaf), std::move(a), frame, call);
    if (starts_with(name, "builtins."))
      return call_builtin(leaf, std::move(a), frame, call);
    // torch tensor constructors
    if (leaf == "empty" || leaf == "zeros" || leaf == "ones" || leaf == "randn" || leaf == "rand" ||
        leaf == "full" || leaf == "Tensor" || leaf == "FloatTensor") {
      std::vector<Value> shape = a.positional;
      if (leaf == "full" && !shape.empty())
        shape.resize(1);
      if (const Value *s = keyword_or(a, "size", SIZE_MAX))
        shape = {*s};
      std::vector<int64_t> dims;
      Value t = tensor_of(size_product(shape, &dims), false, 4);
      t.dims = dims;
      apply_dtype(a, t);
      return t;
    }
    if (leaf == "arange" || leaf == "linspace") {
      std::vector<double> nums;
      bool all_int = true;
      for (const Value &v : a.positional) {
        if (!v.is_number())
          return tensor_of(std::nullopt, false, 4);
        nums.push_back(v.as_real());
        all_int = all_int && !v.is(Kind::Float);
      }
      for (const auto &[k, v] : a.keywords) {
        if (k == "start" || k == "end" || k == "step") {
          if (!v.is_number())
            return tensor_of(std::nullopt, false, 4);
          all_int = all_int && !v.is(Kind::Float);
        }
      }
      std::optional<int64_t> n;
      if (leaf == "linspace" && nums.size() >= 3)
        n = checked::from_real(nums[2]);
      else if (leaf == "arange" && nums.size() == 1)
        n = checked::from_real(std::ceil(nums[0]));
      else if (leaf == "arange" && nums.size() >= 2) {
        double step = nums.size() >= 3 ? nums[2] : 1;
        if (step != 0)
          if ((n = checked::from_real(std::ceil((nums[1] - nums[0]) / step))))
            n = std::max<int64_t>(0, *n);
      }
      Value t = tensor_of(n, leaf == "arange" && all_int, leaf == "arange" && all_int ? 8 : 4);
      if (n)
        t.dims = {*n};
      apply_dtype(a, t);
      return t;
    }
    if (leaf == "tensor" || leaf == "as_tensor") {
      if (a.positional.empty())
        return tensor_of(std::nullopt, false, 4);
      const Value &v = a.positional[0];
      std::optional<int64_t> n;
      bool integer = v.is(Kind::Int) || v.is(Kind::Bool);
      if (v.is_number())
        n = 1;
      else if (v.is(Kind::List)) {
        n = static_cast<int64_t>(v.list->size());
        integer = !v.list->empty() && (*v.list)[0].is(Kind::Int);
      }
      Value t = tensor_of(n, integer, integer ? 8 : 4);
      apply_dtype(a, t);
      return t;
    }
    if (leaf == "outer" && a.positional.size() == 2 && a.positional[0].is(Kind::Tensor) &&
        a.positional[1].is(Kind::Tensor)) {
      auto x = a.positional[0].numel, y = a.positional[1].numel;
      return tensor_of(element_product(x, y), false, 4);
    }
    if (leaf == "cat" || leaf == "concat" || leaf == "stack") {
      if (!a.positional.empty() && a.positional[0].is(Kind::List)) {
        std::optional<int64_t> total = 0;
        for (const Value &t : *a.positional[0].list) {
          if (!t.is(Kind::Tensor) || !t.numel)
            return tensor_of(std::nullopt, false, 4);
          total = element_sum(total, t.numel);
        }
        return tensor_of(total, false, 4);
      }
      return tensor_of(std::nullopt, false, 4);
    }
    if (leaf == "Parameter") {
      if (a.positional.empty())
        return tensor_of(std::nullopt, false, 4);
      Value t = a.positional[0];
      if (!t.is(Kind::Tensor))
        t = tensor_of(std::nullopt, false, 4);
      t.is_parameter = true;
      t.source_tensor = nullptr;
      return t;
    }
    if (leaf == "sqrt" || leaf == "log" || leaf == "ceil" || leaf == "floor" || leaf == "exp" ||
        leaf == "log2" || leaf == "isqrt") {
      if (a.positional.size() == 1 && a.positional[0].is_number()) {
        double x = a.positional[0].as_real();
        if (leaf == "ceil" || leaf == "floor" || leaf == "isqrt") {
          auto whole = checked::from_real(leaf == "ceil"    ? std::ceil(x)
                                          : leaf == "floor" ? std::floor(x)
                                                            : std::sqrt(x));
          return whole ? Value::integer_value(*whole)
                       : Value::unknown(std::string(leaf) + " of a number outside 64 bits");
        }
        return Value::real_value(leaf == "sqrt"  ? std::sqrt(x)
                                 : leaf == "log" ? std::log(x)
                                 : leaf == "exp" ? std::exp(x)
                                                 : std::log2(x));
      }
      if (a.positional.size() == 1 && a.positional[0].is(Kind::Tensor))
        return a.positional[0];
      return Value::unknown(std::string(leaf) + " of an unknown value");
    }
    if (leaf == "get_activation" || leaf == "ACT2FN") {
      ModuleNode &node = tree_->nodes.emplace_back();
      node.class_name = "Activation";
      return Value::module_value(&node);
    }
    // copy.deepcopy(config): encoder and decoder configurations edited apart (T5, BART).
    if ((name == "copy.deepcopy" || name == "copy.copy") && a.positional.size() == 1)
      return copied(a.positional[0], name == "copy.deepcopy", 0);
    // torch.tril(torch.ones(n, n)): elementwise functions keep their argument's shape.
    if ((leaf == "tril" || leaf == "triu" || leaf == "cos" || leaf == "sin" || leaf == "abs" ||
         leaf == "sigmoid" || leaf == "tanh" || leaf == "flip" || leaf == "clone") &&
        !a.positional.empty() && a.positional[0].is(Kind::Tensor)) {
      Value t = tensor_like(a.positional[0], a.positional[0].numel);
      t.dims = a.positional[0].dims;
      return t;
    }
    if (leaf == "ones_like" || leaf == "zeros_like" || leaf == "empty_like") {
      if (!a.positional.empty() && a.positional[0].is(Kind::Tensor))
        return tensor_like(a.positional[0], a.positional[0].numel);
    }
    // Module constructors: torch.nn layers, transformers' Conv1D.
    if (!leaf.empty() && std::isupper(static_cast<unsigned char>(leaf[0]))) {
      Value m = builtin_module(leaf, a.positional, a.keywords, frame, call);
      if (!m.is(Kind::Unknown))
        return m;
      return Value::unknown("class `" + std::string(name) + "` is not in the package");
    }
    return Value::unknown("`" + std::string(name) + "(...)`");
  }

  Value call_builtin(std::string_view leaf, Arguments a, Frame &frame, const Expr *call) {
    auto &p = a.positional;
    if (leaf == "super") {
      Value v;
      v.kind = Kind::Super;
      auto self = frame.locals.find("self");
      if (self != frame.locals.end())
        v.bound_self = std::make_shared<Value>(self->second);
      return v;
    }
    if (leaf == "range") {
      std::vector<int64_t> n;
      for (const Value &v : p) {
        if (!v.is(Kind::Int) && !v.is(Kind::Bool))
          return Value::unknown("range over an unknown bound");
        n.push_back(v.integer);
      }
      int64_t lo = 0, hi = 0, step = 1;
      if (n.size() == 1)
        hi = n[0];
      else if (n.size() >= 2) {
        lo = n[0];
        hi = n[1];
        if (n.size() == 3)
          step = n[2];
      }
      if (step == 0)
        return Value::unknown("range step 0");
      // Python's range(-5) is empty; a count that is negative came from a configuration that
      // makes no model (num_layers = -5), and sizes computed from it would be made up.
      if (n.size() == 1 && hi < 0)
        return Value::unknown("range(" + std::to_string(hi) + "): a negative count");
      ValueList items;
      for (std::optional<int64_t> i = lo; i && (step > 0 ? *i < hi : *i > hi);
           i = checked::add(*i, step)) {
        if (items.size() >= kMaxLoop)
          return Value::unknown("range too long");
        items.push_back(Value::integer_value(*i));
      }
      return Value::list_of(std::move(items));
    }
    if (leaf == "len") {
      if (p.size() == 1 && p[0].is(Kind::List))
        return Value::integer_value(static_cast<int64_t>(p[0].list->size()));
      if (p.size() == 1 && p[0].is(Kind::Dict))
        return Value::integer_value(static_cast<int64_t>(p[0].dict->size()));
      if (p.size() == 1 && p[0].is(Kind::Str))
        return Value::integer_value(static_cast<int64_t>(p[0].text.size()));
      if (p.size() == 1 && p[0].is(Kind::Module))
        return Value::integer_value(static_cast<int64_t>(p[0].module->children.size()));
      return Value::unknown("len of an unknown value");
    }
    if (leaf == "int" && p.size() == 1) {
      if (p[0].is(Kind::Int) || p[0].is(Kind::Bool))
        return Value::integer_value(p[0].integer);
      if (p[0].is(Kind::Float)) {
        auto whole = checked::from_real(p[0].real);
        return whole ? Value::integer_value(*whole)
                     : Value::unknown("int() of a number outside 64 bits");
      }
      if (p[0].is(Kind::Str)) {
        bool ok = false;
        int64_t v = parse_int_literal(p[0].text, &ok);
        if (ok)
          return Value::integer_value(v);
      }
      return Value::unknown("int() of an unknown value");
    }
    if (leaf == "float" && p.size() == 1 && p[0].is_number())
      return Value::real_value(p[0].as_real());
    if (leaf == "bool" && p.size() == 1) {
      auto t = truthy(p[0]);
      return t ? Value::boolean(*t) : Value::unknown("bool() of an unknown value");
    }
    if (leaf == "str" && p.size() == 1) {
      if (p[0].is(Kind::Int))
        return Value::str(std::to_string(p[0].integer));
      if (p[0].is(Kind::Str))
        return p[0];
      return Value::unknown("str()");
    }
    if (leaf == "round" && !p.empty() && p[0].is_number()) {
      auto whole = checked::from_real(std::round(p[0].as_real()));
      return whole ? Value::integer_value(*whole)
                   : Value::unknown("round() of a number outside 64 bits");
    }
    if (leaf == "abs" && p.size() == 1 && p[0].is_number()) {
      if (p[0].is(Kind::Float))
        return Value::real_value(std::fabs(p[0].real));
      return p[0].integer == INT64_MIN ? Value::unknown("an integer over 64 bits")
                                       : Value::integer_value(std::llabs(p[0].integer));
    }
    if (leaf == "min" || leaf == "max") {
      std::vector<Value> items = p;
      if (p.size() == 1 && p[0].is(Kind::List))
        items = *p[0].list;
      if (items.empty())
        return Value::unknown(std::string(leaf) + "()");
      Value best = items[0];
      for (const Value &v : items) {
        if (!v.is_number() || !best.is_number())
          return Value::unknown(std::string(leaf) + " of unknown values");
        if (leaf == "min" ? v.as_real() < best.as_real() : v.as_real() > best.as_real())
          best = v;
      }
      return best;
    }
    if (leaf == "sum" && p.size() >= 1 && p[0].is(Kind::List)) {
      Value total = Value::integer_value(0);
      for (const Value &v : *p[0].list)
        total = binary("+", total, v);
      return total;
    }
    if (leaf == "list" || leaf == "tuple" || leaf == "sorted" || leaf == "reversed") {
      if (p.empty())
        return Value::list_of({});
      if (p[0].is(Kind::List)) {
        ValueList items = *p[0].list;
        if (leaf == "reversed")
          std::reverse(items.begin(), items.end());
        return Value::list_of(std::move(items));
      }
      if (p[0].is(Kind::Dict)) {
        ValueList keys;
        for (const auto &[k, v] : *p[0].dict)
          keys.push_back(k);
        return Value::list_of(std::move(keys));
      }
      return Value::unknown(std::string(leaf) + "()");
    }
    if (leaf == "dict") {
      ValueDict items;
      if (!p.empty() && p[0].is(Kind::Dict))
        items = *p[0].dict;
      for (const auto &[k, v] : a.keywords)
        items.emplace_back(Value::str(k), v);
      return Value::dict_of(std::move(items));
    }
    if (leaf == "enumerate" && !p.empty() && p[0].is(Kind::List)) {
      ValueList items;
      int64_t i = 0;
      for (const Value &v : *p[0].list)
        items.push_back(Value::list_of({Value::integer_value(i++), v}));
      return Value::list_of(std::move(items));
    }
    if (leaf == "zip") {
      size_t n = SIZE_MAX;
      for (const Value &v : p) {
        if (!v.is(Kind::List))
          return Value::unknown("zip of unknown values");
        n = std::min(n, v.list->size());
      }
      ValueList items;
      for (size_t i = 0; i < n && !p.empty(); ++i) {
        ValueList row;
        for (const Value &v : p)
          row.push_back((*v.list)[i]);
        items.push_back(Value::list_of(std::move(row)));
      }
      return Value::list_of(std::move(items));
    }
    if (leaf == "isinstance" && p.size() == 2) {
      const Value &v = p[0];
      std::vector<Value> types = p[1].is(Kind::List) ? *p[1].list : std::vector<Value>{p[1]};
      for (const Value &t : types) {
        // A configuration object against a configuration class of the package.
        if (t.is(Kind::Class) && t.class_def && v.is(Kind::Object) && v.object &&
            v.object->class_def) {
          if (derives_from(v.object->class_def, t.class_def->name, 0))
            return Value::boolean(true);
          continue;
        }
        if (!t.is(Kind::Namespace))
          return Value::unknown("isinstance");
        std::string_view tn = leaf_name(t.text);
        bool iterable = tn == "Iterable" || tn == "Sequence" || tn == "Collection";
        bool match = (tn == "int" && v.is(Kind::Int)) || (tn == "float" && v.is(Kind::Float)) ||
                     (tn == "str" && v.is(Kind::Str)) || (tn == "bool" && v.is(Kind::Bool)) ||
                     ((tn == "list" || tn == "tuple" || iterable) && v.is(Kind::List)) ||
                     ((tn == "dict" || tn == "Mapping" || tn == "Iterable") && v.is(Kind::Dict)) ||
                     ((tn == "Number" || tn == "Integral") && v.is(Kind::Int)) ||
                     (tn == "Number" && v.is(Kind::Float)) || (iterable && v.is(Kind::Str));
        if (v.is(Kind::Unknown))
          return Value::unknown("isinstance of an unknown value");
        if (match)
          return Value::boolean(true);
        if (v.is(Kind::Object) || v.is(Kind::Module) || v.is(Kind::Tensor))
          return Value::unknown("isinstance of an object");
      }
      return Value::boolean(false);
    }
    if ((leaf == "getattr" || leaf == "hasattr") && p.size() >= 2 && p[1].is(Kind::Str)) {
      Value v = p[0].is(Kind::Unknown) ? p[0] : get_attr(p[0], p[1].text, frame);
      bool missing =
          v.is(Kind::Unknown) && (v.text.find("has no") != std::string::npos || v.text.empty());
      if (leaf == "hasattr")
        return v.is(Kind::Unknown) && !missing ? Value::unknown("hasattr")
                                               : Value::boolean(!missing);
      if (missing && p.size() >= 3)
        return p[2];
      return v;
    }
    if (leaf == "setattr" && p.size() == 3 && p[1].is(Kind::Str)) {
      if (p[0].is(Kind::Module))
        set_module_attr(*p[0].module, p[1].text, p[2]);
      else if (p[0].is(Kind::Object))
        p[0].object->attrs[p[1].text] = p[2];
      return Value::none();
    }
    if (leaf == "print")
      return Value::none();
    (void)call;
    return Value::unknown(std::string(leaf) + "()");
  }

  Value call_method(const Value &self, const std::string &name, Arguments a, Frame &frame,
                    const Expr *call) {
    auto &p = a.positional;
    switch (self.kind) {
    case Kind::List:
      if (name == "append" && p.size() == 1) {
        self.list->push_back(p[0]);
        return Value::none();
      }
      if (name == "extend" && p.size() == 1 && p[0].is(Kind::List)) {
        self.list->insert(self.list->end(), p[0].list->begin(), p[0].list->end());
        return Value::none();
      }
      if (name == "insert" && p.size() == 2 && p[0].is(Kind::Int)) {
        size_t at = static_cast<size_t>(
            std::clamp<int64_t>(p[0].integer, 0, static_cast<int64_t>(self.list->size())));
        self.list->insert(self.list->begin() + static_cast<std::ptrdiff_t>(at), p[1]);
        return Value::none();
      }
      if (name == "index" && p.size() == 1) {
        for (size_t i = 0; i < self.list->size(); ++i) {
          auto eq = equal((*self.list)[i], p[0]);
          if (eq && *eq)
            return Value::integer_value(static_cast<int64_t>(i));
        }
      }
      if (name == "count" && p.size() == 1) {
        int64_t n = 0;
        for (const Value &v : *self.list) {
          auto eq = equal(v, p[0]);
          n += eq && *eq;
        }
        return Value::integer_value(n);
      }
      break;
    case Kind::Dict:
      if ((name == "get" || name == "pop") && !p.empty()) {
        for (auto it = self.dict->begin(); it != self.dict->end(); ++it) {
          auto eq = equal(it->first, p[0]);
          if (eq && *eq) {
            Value v = it->second;
            if (name == "pop")
              self.dict->erase(it);
            return v;
          }
        }
        return p.size() >= 2 ? p[1] : Value::none();
      }
      if (name == "keys" || name == "values" || name == "items") {
        ValueList out;
        for (const auto &[k, v] : *self.dict)
          out.push_back(name == "keys" ? k : name == "values" ? v : Value::list_of({k, v}));
        return Value::list_of(std::move(out));
      }
      if (name == "update" && p.size() == 1 && p[0].is(Kind::Dict)) {
        for (const auto &kv : *p[0].dict)
          dict_set(self, kv.first, kv.second);
        return Value::none();
      }
      if (name == "setdefault" && !p.empty()) {
        for (const auto &[k, v] : *self.dict) {
          auto eq = equal(k, p[0]);
          if (eq && *eq)
            return v;
        }
        dict_set(self, p[0], p.size() >= 2 ? p[1] : Value::none());
        return p.size() >= 2 ? p[1] : Value::none();
      }
      break;
    case Kind::Str:
      if (name == "lower" || name == "upper") {
        std::string s = self.text;
        for (char &c : s)
          c = static_cast<char>(name == "lower" ? std::tolower(static_cast<unsigned char>(c))
                                                : std::toupper(static_cast<unsigned char>(c)));
        return Value::str(s);
      }
      if ((name == "startswith" || name == "endswith") && p.size() == 1 && p[0].is(Kind::Str))
        return Value::boolean(name == "startswith" ? starts_with(self.text, p[0].text)
                                                   : ends_with_str(self.text, p[0].text));
      if (name == "split" && !p.empty() && p[0].is(Kind::Str) && !p[0].text.empty()) {
        // `"gated-gelu".split("-")`: configurations derive flags from such settings.
        ValueList parts;
        const std::string &sep = p[0].text;
        for (size_t begin = 0;;) {
          size_t end = self.text.find(sep, begin);
          parts.push_back(Value::str(self.text.substr(begin, end - begin)));
          if (end == std::string::npos || parts.size() > 4096)
            break;
          begin = end + sep.size();
        }
        return Value::list_of(std::move(parts));
      }
      if (name == "format")
        return Value::unknown("str.format");
      break;
    case Kind::Tensor: {
      static const std::unordered_set<std::string> same_size = {
          "float",       "half",      "bfloat16",
          "double",      "to",        "contiguous",
          "clone",       "detach",    "view",
          "reshape",     "flatten",   "transpose",
          "permute",     "unsqueeze", "squeeze",
          "t",           "cos",       "sin",
          "exp",         "sqrt",      "rsqrt",
          "reciprocal",  "type_as",   "type",
          "pow",         "abs",       "log",
          "mul",         "div",       "add",
          "sub",         "neg",       "requires_grad_",
          "normal_",     "zero_",     "fill_",
          "uniform_",    "long",      "int",
          "bool",        "sigmoid",   "tanh",
          "cumsum",      "triu",      "tril",
          "masked_fill", "softmax"};
      if ((name == "view" || name == "reshape" || name == "expand") && self.numel)
        if (auto dims = new_shape(self, p, name == "expand")) {
          Value t = tensor_like(self, product(*dims));
          t.dims = *dims;
          return t;
        }
      if (name == "expand") // the new size is unknown; view and reshape keep the count
        return tensor_of(std::nullopt, self.integer_dtype, self.element_bytes);
      if (name == "size" && p.empty() && !self.dims.empty()) {
        ValueList items;
        for (int64_t d : self.dims)
          items.push_back(Value::integer_value(d));
        return Value::list_of(std::move(items));
      }
      if (same_size.count(name)) {
        Value t = tensor_like(self, self.numel);
        if (name != "view" && name != "reshape" && name != "flatten" && name != "transpose" &&
            name != "permute" && name != "t" && name != "unsqueeze" && name != "squeeze")
          t.dims = self.dims;
        if (name == "float" || name == "double")
          t.integer_dtype = false, t.element_bytes = name == "float" ? 4 : 8;
        if (name == "half" || name == "bfloat16")
          t.integer_dtype = false, t.element_bytes = 2;
        if (name == "long")
          t.integer_dtype = true, t.element_bytes = 8;
        if (name == "int")
          t.integer_dtype = true, t.element_bytes = 4;
        if (name == "bool")
          t.integer_dtype = true, t.element_bytes = 1;
        if (name == "to") {
          Value probe = tensor_like(t, t.numel);
          apply_dtype(a, probe);
          if (!p.empty() && p[0].is(Kind::Namespace)) {
            Arguments dtype_arg;
            dtype_arg.keywords.emplace_back("dtype", p[0]);
            apply_dtype(dtype_arg, probe);
          }
          t = probe;
        }
        return t;
      }
      if (name == "size" || name == "dim" || name == "numel") {
        if (name == "numel" && self.numel)
          return Value::integer_value(*self.numel);
        return Value::unknown("tensor." + name);
      }
      return tensor_of(std::nullopt, self.integer_dtype, self.element_bytes);
    }
    case Kind::Module: {
      ModuleNode &node = *self.module;
      if (name == "register_buffer" && p.size() >= 1 && p[0].is(Kind::Str)) {
        const Value *t = keyword_or(a, "tensor", 1);
        const Value *persistent = keyword_or(a, "persistent", 2);
        bool keep = !persistent || !persistent->is(Kind::Bool) || persistent->integer != 0;
        if (persistent && persistent->is(Kind::Unknown))
          report(frame, call->range, "`persistent=` unknown, taken as True");
        if (!t || t->is(Kind::None)) {
          module_attrs_[&node][p[0].text] = Value::none();
          return Value::none();
        }
        Value tensor = t->is(Kind::Tensor) ? *t : tensor_of(std::nullopt, false, 4);
        auto existing = std::find_if(node.buffers.begin(), node.buffers.end(),
                                     [&](const TreeTensor &b) { return b.name == p[0].text; });
        TreeTensor b = make_tensor(p[0].text, tensor, true, keep);
        if (!tensor.numel)
          report(frame, call->range,
                 "buffer `" + p[0].text + "`: size unknown (" + text_of(frame.file, call->range) +
                     ")");
        if (existing != node.buffers.end())
          *existing = b;
        else
          node.buffers.push_back(b);
        return Value::none();
      }
      if (name == "register_parameter" && p.size() >= 2 && p[0].is(Kind::Str)) {
        Value v = p[1];
        if (v.is(Kind::Tensor))
          v.is_parameter = true;
        set_module_attr(node, p[0].text, v);
        return Value::none();
      }
      if (name == "add_module" && p.size() >= 2 && p[0].is(Kind::Str)) {
        set_module_attr(node, p[0].text, p[1]);
        return Value::none();
      }
      if ((name == "append" || name == "extend") && !p.empty()) {
        ValueList items = name == "append"      ? ValueList{p[0]}
                          : p[0].is(Kind::List) ? *p[0].list
                                                : ValueList{};
        for (const Value &v : items)
          add_container_item(node, std::to_string(node.children.size()), v, frame, call);
        return Value::none();
      }
      static const std::unordered_set<std::string> ignored = {
          "post_init",
          "init_weights",
          "apply",
          "requires_grad_",
          "gradient_checkpointing_enable",
          "tie_weights",
          "train",
          "eval",
          "reset_parameters",
          "_init_weights",
          "_backward_compatibility_gradient_checkpointing"};
      if (ignored.count(name))
        return Value::none();
      break;
    }
    case Kind::Object:
      if (name == "to_dict")
        return Value::unknown("to_dict()");
      break;
    default:
      break;
    }
    return Value::unknown("`." + name + "(...)`");
  }

  static void dict_set(const Value &dict, const Value &key, const Value &v) {
    for (auto &[k, x] : *dict.dict) {
      auto eq = equal(k, key);
      if (eq && *eq) {
        x = v;
        return;
      }
    }
    dict.dict->emplace_back(key, v);
  }

  // ---- statements ----

  void assign(const Expr *target, const Value &v, Frame &frame,
              std::vector<std::pair<std::string, std::optional<Value>>> *saved = nullptr) {
    switch (target->kind) {
    case ExprKind::Name: {
      std::string name(target->text);
      if (saved && std::none_of(saved->begin(), saved->end(),
                                [&](const auto &s) { return s.first == name; })) {
        auto it = frame.locals.find(name);
        saved->emplace_back(name, it == frame.locals.end() ? std::nullopt
                                                           : std::optional<Value>(it->second));
      }
      frame.locals[name] = v;
      return;
    }
    case ExprKind::Tuple: {
      for (size_t i = 0; i < target->operands.size(); ++i) {
        Value part =
            v.is(Kind::List) && i < v.list->size() ? (*v.list)[i] : Value::unknown("unpacking");
        assign(target->operands[i], part, frame, saved);
      }
      return;
    }
    case ExprKind::Attribute: {
      Value obj = eval(target->operands[0], frame);
      std::string name(target->text);
      if (obj.is(Kind::Module))
        set_module_attr(*obj.module, name, v);
      else if (obj.is(Kind::Object))
        obj.object->attrs[name] = v;
      return;
    }
    case ExprKind::Subscript: {
      Value obj = eval(target->operands[0], frame);
      if (target->operands.size() < 2)
        return;
      Value key = eval(target->operands[1], frame);
      if (obj.is(Kind::Dict)) {
        if (key.is(Kind::Unknown))
          report_unknown_value(frame, target->operands[1], key, "dict key");
        else
          dict_set(obj, key, v);
      } else if (obj.is(Kind::List) && key.is(Kind::Int) && key.integer >= 0 &&
                 static_cast<size_t>(key.integer) < obj.list->size()) {
        (*obj.list)[static_cast<size_t>(key.integer)] = v;
      } else if (obj.is(Kind::Module) && v.is(Kind::Module)) {
        std::string name = key.is(Kind::Int)   ? std::to_string(key.integer)
                           : key.is(Kind::Str) ? key.text
                                               : "";
        if (!name.empty())
          set_module_attr(*obj.module, name, v);
      }
      return;
    }
    default:
      return;
    }
  }

  std::string_view statement_keyword(const Stmt *s, const Frame &frame) const {
    if (!frame.file || !frame.file->source)
      return {};
    std::string_view t = frame.file->source->slice(s->range);
    size_t end = t.find_first_of(" \t\n(:;");
    return t.substr(0, end);
  }

  void exec_block(const std::vector<Stmt *> &body, Frame &frame) {
    for (const Stmt *s : body) {
      if (frame.returned || frame.broke || frame.continued)
        return;
      exec(s, frame);
    }
  }

  void exec(const Stmt *s, Frame &frame) {
    if (++statements_ > kStatementBudget) {
      if (statements_ == kStatementBudget + 1)
        report(frame, s->range, "evaluation budget exhausted");
      frame.returned = true;
      return;
    }
    switch (s->kind) {
    case StmtKind::Expr:
      eval(s->value, frame);
      return;
    case StmtKind::Assign: {
      if (!s->value)
        return;
      Value v = eval(s->value, frame);
      for (const Expr *t : s->targets)
        assign(t, v, frame);
      return;
    }
    case StmtKind::AugAssign: {
      if (s->targets.empty())
        return;
      Value current = eval(s->targets[0], frame);
      Value v = binary(std::string(s->text), current, eval(s->value, frame));
      assign(s->targets[0], v, frame);
      return;
    }
    case StmtKind::If: {
      Value cond = eval(s->value, frame);
      auto t = truthy(cond);
      if (!t) {
        report_unknown_value(frame, s->value, cond, "condition (taken as true)");
        t = true;
      }
      exec_block(*t ? s->body : s->orelse, frame);
      return;
    }
    case StmtKind::For: {
      Value iterable = eval(s->value, frame);
      if (iterable.is(Kind::Module)) {
        ValueList children;
        for (const auto &[n, c] : iterable.module->children)
          children.push_back(Value::module_value(c));
        iterable = Value::list_of(std::move(children));
      }
      if (iterable.is(Kind::Dict)) {
        ValueList keys;
        for (const auto &[k, v] : *iterable.dict)
          keys.push_back(k);
        iterable = Value::list_of(std::move(keys));
      }
      if (!iterable.is(Kind::List)) {
        report_unknown_value(frame, s->value, iterable, "loop over");
        return;
      }
      ValueList items = *iterable.list;
      bool broke = false;
      for (const Value &item : items) {
        if (!s->targets.empty())
          assign(s->targets[0], item, frame);
        exec_block(s->body, frame);
        frame.continued = false;
        if (frame.broke) {
          frame.broke = false;
          broke = true;
          break;
        }
        if (frame.returned)
          return;
      }
      if (!broke)
        exec_block(s->orelse, frame);
      return;
    }
    case StmtKind::While: {
      for (size_t i = 0;; ++i) {
        auto t = truthy(eval(s->value, frame));
        if (!t || i >= kMaxLoop) {
          report(frame, s->range, "`while` loop with an unknown end");
          return;
        }
        if (!*t)
          break;
        exec_block(s->body, frame);
        frame.continued = false;
        if (frame.broke) {
          frame.broke = false;
          break;
        }
        if (frame.returned)
          return;
      }
      return;
    }
    case StmtKind::With:
    case StmtKind::Try:
      exec_block(s->body, frame);
      if (s->kind == StmtKind::Try) {
        exec_block(s->orelse, frame);
        exec_block(s->finalbody, frame);
      }
      return;
    case StmtKind::Return:
      frame.return_value = s->value ? eval(s->value, frame) : Value::none();
      frame.returned = true;
      return;
    case StmtKind::Raise:
      report(frame, s->range, "reached `" + text_of(frame.file, s->range) + "`");
      frame.returned = true;
      frame.return_value = Value::unknown("raised");
      return;
    case StmtKind::FunctionDef: {
      Value fn;
      fn.kind = Kind::Function;
      fn.function = s->function;
      fn.file = frame.file;
      fn.class_def = frame.current_class;
      fn.closure = std::make_shared<std::unordered_map<std::string, Value>>(frame.locals);
      frame.locals[std::string(s->function->name)] = fn;
      return;
    }
    case StmtKind::Other: {
      std::string_view kw = statement_keyword(s, frame);
      if (kw == "break")
        frame.broke = true;
      else if (kw == "continue")
        frame.continued = true;
      return;
    }
    default:
      return;
    }
  }
};

std::vector<const SyntaxFile *> all_files(const Package &package,
                                          const std::vector<const SyntaxFile *> &extra) {
  std::vector<const SyntaxFile *> files = extra;
  files.insert(files.end(), package.files.begin(), package.files.end());
  return files;
}

bool is_config_class(const ClassDef *c,
                     const std::unordered_map<std::string, const ClassDef *> &by_name,
                     int guard = 0) {
  if (guard > 16)
    return false;
  for (const Expr *b : c->bases) {
    std::string leaf(leaf_name(dotted_name(b)));
    if (leaf == "PretrainedConfig" || leaf == "PreTrainedConfig")
      return true;
    auto it = by_name.find(leaf);
    if (it != by_name.end() && it->second != c && is_config_class(it->second, by_name, guard + 1))
      return true;
  }
  return false;
}

} // namespace

int dtype_bytes_from_name(const std::string &raw, std::string *canonical) {
  std::string name = raw;
  if (name.rfind("torch.", 0) == 0)
    name = name.substr(6);
  struct Entry {
    const char *alias;
    const char *canonical;
    int bytes;
  };
  static const Entry entries[] = {{"bf16", "bfloat16", 2},
                                  {"bfloat16", "bfloat16", 2},
                                  {"fp16", "float16", 2},
                                  {"float16", "float16", 2},
                                  {"half", "float16", 2},
                                  {"fp32", "float32", 4},
                                  {"float32", "float32", 4},
                                  {"float", "float32", 4},
                                  {"fp64", "float64", 8},
                                  {"float64", "float64", 8},
                                  {"int8", "int8", 1},
                                  {"fp8", "float8_e4m3fn", 1},
                                  {"float8_e4m3fn", "float8_e4m3fn", 1}};
  for (const Entry &e : entries)
    if (name == e.alias) {
      if (canonical)
        *canonical = e.canonical;
      return e.bytes;
    }
  return 0;
}

ModelConfig build_model_config(const Package &package,
                               const std::vector<const SyntaxFile *> &config_files,
                               const std::string &config_class, const nlohmann::json *json) {
  ModelConfig config;
  std::vector<const SyntaxFile *> files = all_files(package, config_files);
  std::unordered_map<std::string, const ClassDef *> by_name;
  std::unordered_map<std::string, const SyntaxFile *> file_of;
  for (const SyntaxFile *f : files)
    for (const ClassDef *c : f->classes) {
      by_name.emplace(std::string(c->name), c);
      file_of.emplace(std::string(c->name), f);
    }
  std::string chosen = config_class;
  if (chosen.empty()) {
    // The model's `config_class = XConfig`.
    for (const auto &cls : package.classes)
      for (const Stmt *st : cls->def->body)
        if (st->kind == StmtKind::Assign && st->value && !st->targets.empty() &&
            is_name(st->targets[0], "config_class") && st->value->kind == ExprKind::Name &&
            by_name.count(std::string(st->value->text)) && chosen.empty())
          chosen = std::string(st->value->text);
  }
  if (chosen.empty()) {
    std::vector<std::string> candidates;
    for (const auto &[name, c] : by_name)
      if (is_config_class(c, by_name))
        candidates.push_back(name);
    if (candidates.size() == 1)
      chosen = candidates[0];
  }
  Evaluator evaluator(package, config_files, nullptr, &config.unknowns);
  if (!chosen.empty() && by_name.count(chosen)) {
    Value kwargs = json ? from_json(*json, false) : Value::dict_of({});
    Value object = evaluator.build_config(ClassRef{by_name[chosen], file_of[chosen]}, kwargs);
    if (object.is(Kind::Object)) {
      // Keys the class does not consume still become attributes (PretrainedConfig's kwargs).
      if (json)
        for (const auto &[k, v] : json->items())
          if (!object.object->attrs.count(k))
            object.object->attrs[k] = from_json(v, false);
      add_pretrained_config_defaults(object.object->attrs);
      Value map =
          evaluator.class_attribute(ClassRef{by_name[chosen], file_of[chosen]}, "attribute_map");
      if (map.is(Kind::Dict))
        for (const auto &[alias, real] : *map.dict)
          if (alias.is(Kind::Str) && real.is(Kind::Str) && object.object->attrs.count(real.text))
            object.object->attrs[alias.text] = object.object->attrs[real.text];
      bool complete = true;
      config.values = to_json(object, &complete);
      for (const auto &[k, v] : object.object->attrs)
        if (v.is(Kind::Unknown))
          config.unknowns.push_back("config." + k + ": " + v.text);
      config.present = true;
      config.class_name = chosen;
      config.source = json ? "config.json read by " + chosen : "defaults of " + chosen;
      return config;
    }
  }
  if (json) {
    config.values = *json;
    std::map<std::string, Value> defaults;
    add_pretrained_config_defaults(defaults);
    for (const auto &[k, v] : defaults)
      if (!config.values.contains(k))
        config.values[k] = to_json(v, nullptr);
    config.present = true;
    config.source = "config.json";
  }
  return config;
}

const ModuleClass *choose_root_class(const Package &package, const ModelConfig &config,
                                     const std::string &requested) {
  if (!requested.empty())
    return package.find_class(requested);
  // trust_remote_code models name their classes in auto_map ("modeling_chatglm.ChatGLMFor...").
  if (config.values.contains("auto_map") && config.values["auto_map"].is_object())
    for (const char *key : {"AutoModelForCausalLM", "AutoModelForSeq2SeqLM", "AutoModel"})
      if (config.values["auto_map"].contains(key) && config.values["auto_map"][key].is_string()) {
        std::string name = config.values["auto_map"][key].get<std::string>();
        if (const ModuleClass *c = package.find_class(std::string(leaf_name(name))))
          return c;
      }
  if (config.values.contains("architectures") && config.values["architectures"].is_array())
    for (const auto &a : config.values["architectures"])
      if (a.is_string())
        if (const ModuleClass *c = package.find_class(a.get<std::string>()))
          return c;
  std::unordered_set<std::string> used_as_child;
  for (const auto &cls : package.classes)
    for (const ChildDecl &child : cls->children)
      used_as_child.insert(child.class_name);
  // A directory may hold the TensorFlow and Flax ports beside the PyTorch model.
  auto imports_torch = [](const SyntaxFile *file) {
    for (const ImportedName &imp : file->imports)
      if (imp.module == "torch" || starts_with(imp.module, "torch."))
        return true;
    return false;
  };
  const ModuleClass *best = nullptr;
  int best_rank = -1;
  for (const auto &cls : package.classes) {
    if (!cls->is_module || !cls->find_method("__init__"))
      continue;
    std::string name(cls->name);
    int rank = imports_torch(cls->file) ? 10 : 0;
    int kind = 0;
    if (cls->is_pretrained_model)
      kind = 1;
    if (cls->is_pretrained_model && !used_as_child.count(name))
      kind = 2;
    if (name.find("For") != std::string::npos && cls->is_pretrained_model)
      kind = 3;
    if (name.find("ForConditionalGeneration") != std::string::npos && cls->is_pretrained_model)
      kind = 4;
    if (name.find("ForCausalLM") != std::string::npos && cls->is_pretrained_model)
      kind = 5;
    rank += kind;
    if (rank > best_rank) {
      best = cls.get();
      best_rank = rank;
    }
  }
  return best;
}

namespace {

// The parameter `path` names ("lm_head.weight", "model.layers.0.mlp.up.bias") below `root`, or
// null.
TreeTensor *parameter_at(ModuleNode *root, std::string_view path) {
  ModuleNode *node = root;
  for (size_t dot = path.find('.'); node && dot != std::string_view::npos; dot = path.find('.')) {
    node = node->child(std::string(path.substr(0, dot)));
    path.remove_prefix(dot + 1);
  }
  if (node)
    for (TreeTensor &t : node->parameters)
      if (t.name == path)
        return &t;
  return nullptr;
}

} // namespace

ModuleTree build_module_tree(const Package &package, const ModuleClass &root,
                             const ModelConfig &config, const std::string &dtype) {
  ModuleTree tree;
  std::string canonical;
  if (!dtype.empty() && dtype != "auto") {
    tree.dtype_bytes = dtype_bytes_from_name(dtype, &canonical);
    tree.dtype_name = canonical;
    tree.dtype_source = "--dtype";
  } else if (config.values.contains("torch_dtype") && config.values["torch_dtype"].is_string() &&
             dtype_bytes_from_name(config.values["torch_dtype"].get<std::string>(), &canonical)) {
    tree.dtype_bytes =
        dtype_bytes_from_name(config.values["torch_dtype"].get<std::string>(), &canonical);
    tree.dtype_name = canonical;
    tree.dtype_source = "torch_dtype of the configuration";
  } else {
    tree.dtype_bytes = 2;
    tree.dtype_name = "bfloat16";
    tree.dtype_source = "default (no torch_dtype in the configuration)";
  }
  Evaluator evaluator(package, {}, &tree, nullptr);
  auto cls = evaluator.find_class(root.name);
  if (!cls)
    return tree;
  Value config_value = from_json(config.values, true);
  if (config_value.is(Kind::Object)) {
    // Attribute aliases already resolved into values; the object still answers getattr.
    config_value.object->class_name = "config";
  }
  tree.root = evaluator.instantiate_root(*cls, config_value);
  if (!tree.root)
    return tree;
  // transformers' tie_weights(): output embeddings share the input embeddings' weight when
  // config.tie_word_embeddings (PretrainedConfig's default: True).
  bool tie = !config.values.contains("tie_word_embeddings") ||
             !config.values["tie_word_embeddings"].is_boolean() ||
             config.values["tie_word_embeddings"].get<bool>();
  if (config.values.contains("tie_word_embeddings") &&
      !config.values["tie_word_embeddings"].is_boolean())
    tree.unknowns.push_back({"", "tie_word_embeddings is not a bool: taken as true", ""});
  Value tied_keys = evaluator.class_attribute(*cls, "_tied_weights_keys");
  if (tied_keys.is(Kind::Dict)) {
    // transformers 5: `_tied_weights_keys = {target: source}` gives each target parameter its
    // source's storage when config.tie_word_embeddings (get_expanded_tied_weights_keys). Regular
    // expressions there are not expanded (a repository's pattern is not run): listed instead.
    for (const auto &[target_name, source_name] : *tied_keys.dict) {
      if (!tie || !target_name.is(Kind::Str) || !source_name.is(Kind::Str))
        continue;
      TreeTensor *target = parameter_at(tree.root, target_name.text);
      TreeTensor *source = parameter_at(tree.root, source_name.text);
      if (target && source)
        target->storage = source->storage;
      else
        tree.unknowns.push_back({"",
                                 "_tied_weights_keys: `" + target_name.text + "` -> `" +
                                     source_name.text + "` names no parameter; not tied",
                                 ""});
    }
  } else if (tie) {
    auto output = evaluator.call_module_method(tree.root, "get_output_embeddings");
    std::optional<Value> input = evaluator.call_module_method(tree.root, "get_input_embeddings");
    if (!input || !input->is(Kind::Module)) {
      Value prefix = evaluator.class_attribute(*cls, "base_model_prefix");
      if (prefix.is(Kind::Str))
        if (ModuleNode *base = tree.root->child(prefix.text))
          input = evaluator.call_module_method(base, "get_input_embeddings");
    }
    if (output && output->is(Kind::Module) && input && input->is(Kind::Module) &&
        output->module != input->module) {
      TreeTensor *in_weight = nullptr;
      for (TreeTensor &t : input->module->parameters)
        if (t.name == "weight")
          in_weight = &t;
      for (TreeTensor &t : output->module->parameters)
        if (t.name == "weight" && in_weight)
          t.storage = in_weight->storage;
    }
  }
  // Tied groups by storage, names sorted (find_tied_parameters).
  std::map<int, std::vector<std::string>> by_storage;
  for (const NamedTensor &t : named_tensors(tree, false))
    if (!t.tensor->is_buffer)
      by_storage[t.tensor->storage].push_back(t.name);
  for (auto &[storage, names] : by_storage)
    if (names.size() > 1) {
      std::sort(names.begin(), names.end());
      tree.tied_parameters.push_back(names);
    }
  // A tensor whose size could not be computed (a dimension unknown, negative or over the element
  // cap, as from an absurd configuration) counts 0 bytes: never silently.
  size_t unsized = 0;
  std::string first_unsized;
  for (const NamedTensor &t : named_tensors(tree, false))
    if (!t.tensor->numel && ++unsized == 1)
      first_unsized = t.name;
  if (unsized)
    tree.unknowns.push_back({"",
                             std::to_string(unsized) + " parameter(s) and buffer(s) of no known " +
                                 "size (a dimension unknown, negative or too large), `" +
                                 first_unsized + "` first",
                             ""});
  return tree;
}

std::string normalize_device(const nlohmann::json &value) {
  if (value.is_number_integer() && value.get<int64_t>() >= 0)
    return std::to_string(value.get<int64_t>());
  if (!value.is_string())
    return "";
  std::string s = value.get<std::string>();
  if (s == "cpu" || s == "disk" || s == "meta" || s == "mps")
    return s;
  if (s == "cuda")
    return "0";
  for (const char *prefix : {"cuda:", "xpu:", "npu:"})
    if (s.rfind(prefix, 0) == 0 && s.size() > std::strlen(prefix) &&
        s.find_first_not_of("0123456789", std::strlen(prefix)) == std::string::npos)
      return s.substr(std::strlen(prefix));
  if (!s.empty() && s.find_first_not_of("0123456789") == std::string::npos)
    return s;
  return "";
}

EvaluatedDeviceMap evaluate_python_device_map(const Package &package, const SyntaxFile &file,
                                              const ModelConfig &config, int gpus,
                                              const std::string &function_name) {
  EvaluatedDeviceMap out;
  Evaluator evaluator(package, {&file}, nullptr, &out.unknowns);
  evaluator.set_global(&file, "config", from_json(config.values, true));
  auto mentions_map = [](std::string_view name) {
    return name.find("device_map") != std::string_view::npos;
  };
  const FunctionDef *fn = nullptr;
  for (const FunctionDef *f : file.functions)
    if (function_name.empty() ? mentions_map(f->name) && !fn : f->name == function_name)
      fn = f;
  Value result;
  if (fn) {
    std::vector<std::pair<std::string, Value>> kwargs;
    std::string call = std::string(fn->name) + "(";
    for (const Parameter &p : fn->parameters) {
      std::string name(p.name);
      if (p.variadic)
        continue;
      std::string lower = name;
      for (char &c : lower)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (lower.find("gpu") != std::string::npos || lower.find("device") != std::string::npos) {
        kwargs.emplace_back(name, Value::integer_value(gpus));
        call += (call.back() == '(' ? "" : ", ") + name + "=" + std::to_string(gpus);
      } else if (name == "config") {
        kwargs.emplace_back(name, from_json(config.values, true));
      } else if (!p.default_value) {
        out.unknowns.push_back("argument `" + name + "` of " + std::string(fn->name) +
                               " has no value");
      }
    }
    out.origin = call + ")";
    Value f = evaluator.global_value(&file, std::string(fn->name));
    result = evaluator.call_with(f, std::move(kwargs));
  } else if (!function_name.empty()) {
    out.error = "no function `" + function_name + "` in " + file.source->display_path;
    return out;
  } else {
    std::string chosen;
    for (const Stmt *st : file.body)
      if (st->kind == StmtKind::Assign && st->value && st->value->kind == ExprKind::Dict &&
          st->targets.size() == 1 && st->targets[0]->kind == ExprKind::Name &&
          (chosen.empty() || mentions_map(st->targets[0]->text)))
        chosen = std::string(st->targets[0]->text);
    if (chosen.empty()) {
      out.error = "no dict and no function with `device_map` in its name in " +
                  file.source->display_path + " (name one with FILE.py:FUNCTION)";
      return out;
    }
    out.origin = chosen;
    result = evaluator.global_value(&file, chosen);
  }
  if (!result.is(Kind::Dict)) {
    out.error = out.origin + " did not evaluate to a dict" +
                (result.is(Kind::Unknown) && !result.text.empty() ? " (" + result.text + ")" : "");
    return out;
  }
  for (const auto &[k, v] : *result.dict) {
    if (!k.is(Kind::Str)) {
      out.unknowns.push_back("a key that is not a string");
      continue;
    }
    bool complete = true;
    std::string device = normalize_device(to_json(v, &complete));
    if (device.empty()) {
      out.unknowns.push_back("the device of `" + k.text + "`");
      continue;
    }
    out.entries.emplace_back(k.text, device);
  }
  return out;
}

std::vector<std::pair<std::string, const ModuleNode *>> named_modules(const ModuleTree &tree) {
  std::vector<std::pair<std::string, const ModuleNode *>> out;
  if (!tree.root)
    return out;
  std::unordered_set<const ModuleNode *> seen;
  std::function<void(const std::string &, const ModuleNode *)> walk = [&](const std::string &path,
                                                                          const ModuleNode *node) {
    if (!seen.insert(node).second) // a module registered twice is listed once (torch)
      return;
    out.emplace_back(path, node);
    for (const auto &[name, child] : node->children)
      walk(path.empty() ? name : path + "." + name, child);
  };
  walk("", tree.root);
  return out;
}

std::vector<NamedTensor> named_tensors(const ModuleTree &tree, bool persistent_only) {
  std::vector<NamedTensor> out;
  auto modules = named_modules(tree);
  for (bool buffers : {false, true})
    for (const auto &[path, node] : modules)
      for (const TreeTensor &t : buffers ? node->buffers : node->parameters) {
        if (persistent_only && t.is_buffer && !t.persistent)
          continue;
        out.push_back({path.empty() ? t.name : path + "." + t.name, &t, node});
      }
  return out;
}

} // namespace devlint
