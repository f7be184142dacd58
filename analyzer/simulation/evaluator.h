// A small evaluator for the Python that `__init__` methods run: assignments, arithmetic on config
// values, if/for/while over known values, comprehensions, calls of package classes, functions and
// methods, and the torch constructors that decide parameter shapes. Anything else yields an
// unknown value that is recorded where it decides a shape, a branch or a loop.
// The evaluator is one class; its parts live in files by responsibility: evaluator_classes.cpp
// (classes, method resolution, super(), instantiation, attribute lookup), configuration_classes.cpp
// (dataclass-style configurations), tree_building.cpp (modules, parameters and buffers of the
// tree), expressions.cpp, calls.cpp (calls, torch namespaces, builtins), value_methods.cpp
// (methods of lists, dicts, strings, tensors), statements.cpp.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "model/checked_math.h"
#include "model/text.h"
#include "model/torch_layers.h"
#include "simulation/module_tree.h"
#include "simulation/python_value.h"

namespace devlint::simulation {

// PretrainedConfig.__init__'s attributes that models read (transformers 4.47). A dataclass-style
// configuration (`dataclass_style`) is transformers 5's PreTrainedConfig, which declares no
// `tie_word_embeddings` (configuration_utils.py): a configuration that does not declare it
// ties nothing there (`getattr(config, "tie_word_embeddings", False)`).
void add_pretrained_config_defaults(std::map<std::string, Value> &attrs,
                                    bool dataclass_style = false);

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

// One class of a method resolution order: a package class, or a base outside the package by its
// dotted name.
struct MroEntry {
  std::optional<ClassRef> cls;
  std::string dotted;
};

// A configuration class that CONFIG_MAPPING names but the package does not define: a namespace
// value `kOtherModelConfiguration + model_type`, called like the class (sub_models.cpp).
inline constexpr std::string_view kOtherModelConfiguration = "configuration of model_type ";
// The Namespace value naming transformers' `ACT2CLS[name]`, the class of activation `name`.
inline constexpr std::string_view kActivationClass = "activation class ";
// What a constructor reads of a tensor's device (unknown values named so): the device is the CPU
// or the meta device while a model is built for a device map, never an accelerator, so
// `freqs.device.type == "npu"` is false (docs/DEVICE_MODEL.md, "What the constructor sees").
inline constexpr std::string_view kTensorDevice = "tensor.device";
inline constexpr std::string_view kTensorDeviceType = "tensor.device.type";

constexpr int kMaxDepth = 48;
constexpr size_t kMaxLoop = 20000;
constexpr uint64_t kStatementBudget = 3'000'000;

struct DataclassField {
  std::string name;
  const Expr *default_value = nullptr; // null: no default
  const SyntaxFile *file = nullptr;
};

struct Arguments {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keywords;
};
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

  // Files indexed after the package's (a name the package defines keeps its class).
  void add_files(const std::vector<const SyntaxFile *> &files) {
    for (const SyntaxFile *f : files)
      index_file(f);
  }

  // transformers' auto mappings (null: pick by the package's `config_class`es alone).
  void set_auto_classes(const AutoModelClasses *auto_classes) { auto_classes_ = auto_classes; }

  static bool is_dataclass_config(const ClassDef *c) { return is_dataclass(c); }

  // ---- entry points ----

  ModuleNode *instantiate_root(const ClassRef &cls, const Value &config);
  // `cls(**keywords)`: diffusers' ConfigMixin.from_config builds a model from its configuration so.
  ModuleNode *instantiate_root_with_keywords(const ClassRef &cls,
                                             std::vector<std::pair<std::string, Value>> keywords);

  Value build_config(const ClassRef &cls, const Value &kwargs_dict);
  // Makes attributes of what getattr answers on a configuration object beyond its instance
  // attributes, so that they survive as the configuration's JSON: its class's plain class
  // attributes, attribute_map aliases and @property values, in its sub-configurations too.
  void keep_configuration_attributes(const Value &object, int depth = 0);

  Value global_value(const SyntaxFile *file, const std::string &name);
  Value call_with(const Value &fn, std::vector<std::pair<std::string, Value>> kwargs);
  void set_global(const SyntaxFile *file, const std::string &name, Value v);

  std::optional<ClassRef> find_class(std::string_view name) const;

  std::optional<Value> call_module_method(ModuleNode *node, std::string_view method);

  Value class_attribute(const ClassRef &cls, const std::string &name);

  std::optional<ClassRef> node_class(const ModuleNode *node) const;
  std::optional<std::vector<MroEntry>> linearize(const ClassRef &cls, int guard = 0);
  std::optional<std::vector<MroEntry>> mro_after(const Value &self, const ClassDef *current);

  // `getattr(node, name)` as the evaluated __init__ left it.
  Value module_attribute(ModuleNode *node, const std::string &name) {
    return get_module_attr(node, name);
  }
  // `getattr(obj, name)` (attribute_map and class members included); unknown when missing.
  Value attribute(const Value &obj, const std::string &name);

  // Copies each module's plain attributes and its configuration's into the tree
  // (ModuleNode::plain_values, ModuleNode::configuration), as `__init__` left them.
  void keep_plain_values();

private:
  const Package &package_;
  const AutoModelClasses *auto_classes_ = nullptr;
  ModuleTree *tree_;
  std::vector<std::string> *config_unknowns_;
  std::unordered_map<std::string, ClassRef> classes_;
  std::unordered_map<const SyntaxFile *, std::unordered_map<std::string, const Expr *>> globals_;
  std::unordered_map<const SyntaxFile *, std::unordered_map<std::string, std::string>> imports_;
  // The module each name of a `from MODULE import NAME` came from, per file.
  std::unordered_map<const SyntaxFile *, std::unordered_map<std::string, std::string>>
      import_modules_;
  std::unordered_map<std::string, std::pair<const FunctionDef *, const SyntaxFile *>> functions_;
  std::map<std::pair<const SyntaxFile *, std::string>, Value> global_cache_;
  std::unordered_map<const ModuleNode *, std::map<std::string, Value>> module_attrs_;
  std::unordered_map<const ModuleNode *, ClassRef> node_classes_;
  std::set<std::pair<const SyntaxFile *, uint32_t>> reported_;
  std::unordered_set<const SyntaxFile *> indexed_;
  int depth_ = 0;
  uint64_t statements_ = 0;
  // The handlers' exception types of each `try` body being run, innermost last; and whether a
  // `raise` one of them catches is unwinding to it (every block stops until that `try`).
  std::vector<const std::vector<std::string_view> *> catching_;
  bool unwinding_ = false;
  std::string raised_name_; // the class the unwinding `raise` raises ("" for a bare `raise`)
  int next_storage_ = 0;
  // `self.NAME` while the value assigned to it is evaluated (names a sub-model not built).
  std::string assignment_target_;

  void index_file(const SyntaxFile *f);

  std::string location(const SyntaxFile *file, const SourceRange &r) const;

  std::string text_of(const SyntaxFile *file, const SourceRange &r) const;

  void report(const Frame &frame, const SourceRange &r, const std::string &what);
  void report_unknown_value(const Frame &frame, const Expr *e, const Value &v,
                            const std::string &role);

  // ---- classes ----

  const ModuleClass *module_class_of(const ClassRef &cls) const;
  bool class_is_module(const ClassRef &cls) const;

  std::vector<std::pair<std::optional<ClassRef>, std::string>> bases_of(const ClassRef &cls);

  bool derives_from(const ClassDef *def, std::string_view name, int guard);

  Value class_member(std::optional<ClassRef> cls, const std::string &name, const Value &self,
                     int guard = 0);

  std::string builtin_layer_base(const ClassRef &cls, int guard = 0);

  Value instantiate_module(const ClassRef &cls, std::vector<Value> args,
                           std::vector<std::pair<std::string, Value>> kwargs, const Frame &caller,
                           const std::string &path);

  Value instantiate_object(const ClassRef &cls, std::vector<Value> args,
                           std::vector<std::pair<std::string, Value>> kwargs, const Frame &caller);

  static bool is_dataclass_decorator(const Expr *d);
  static bool is_dataclass(const ClassDef *c);

  std::optional<ClassRef> generated_init_owner(const ClassRef &cls, int guard = 0);

  void collect_fields(const ClassRef &cls, std::vector<DataclassField> &fields, int guard = 0);

  bool is_transformers_config(const ClassRef &cls);

  void dataclass_init(const ClassRef &cls, const ClassRef &owner, const Value &self,
                      std::vector<Value> args, std::vector<std::pair<std::string, Value>> kwargs,
                      const Frame &caller);

  void label_maps_from_num_labels(std::map<std::string, Value> &attrs);
  void standardize_rope_parameters(const ClassRef &cls, const Value &self,
                                   const std::vector<std::pair<std::string, Value>> &kwargs,
                                   const Frame &caller);
  void standardize_rope_params(std::map<std::string, Value> &attrs);

  void run_init(const ClassRef &cls, const Value &self, std::vector<Value> args,
                std::vector<std::pair<std::string, Value>> kwargs, const Frame &caller,
                const std::string &path, int guard = 0);

  void keep_layer_attributes(ModuleNode &node, std::string_view leaf,
                             const std::vector<Value> &args,
                             const std::vector<std::pair<std::string, Value>> &kwargs);
  bool external_init(std::string_view leaf, const Value &self, const std::vector<Value> &args,
                     const std::vector<std::pair<std::string, Value>> &kwargs, const Frame &caller);

  static bool ends_with_str(std::string_view s, std::string_view p);

  std::function<LayerArgument(size_t, std::string_view)>
  layer_args(const std::vector<Value> &args,
             const std::vector<std::pair<std::string, Value>> &kwargs);

  void add_layer_tensors(ModuleNode &node, const LayerShape &shape, const Frame &caller,
                         std::string_view leaf);

  Value builtin_module(std::string_view leaf, const std::vector<Value> &args,
                       const std::vector<std::pair<std::string, Value>> &kwargs,
                       const Frame &caller, const Expr *call);

  void add_container_item(ModuleNode &node, const std::string &name, const Value &v,
                          const Frame &caller, const Expr *call);

  TreeTensor make_tensor(const std::string &name, const Value &v, bool buffer, bool persistent);
  // torch.nn.utils.weight_norm / nn.utils.parametrizations.weight_norm(module, name, dim).
  Value weight_norm(const Arguments &a, bool parametrized, const Frame &caller, const Expr *call);

  // ---- attributes ----

  void set_module_attr(ModuleNode &node, const std::string &name, const Value &v);

  Value get_module_attr(ModuleNode *node, const std::string &name);
  Value call_property(const Value &getter);

  Value get_attr(const Value &obj, const std::string &name, const Frame &frame);

  // ---- names ----

  Value lookup(const std::string &name, const Frame &frame);
  // A module-level value of `file`, evaluated once.
  Value global_value(const SyntaxFile *file, const std::string &name, const Expr *value);
  // `name` assigned at module level in an indexed file of the module `module` names
  // (`from ...modeling_rope_utils import ROPE_INIT_FUNCTIONS`), if any.
  std::optional<Value> imported_global(const std::string &module, const std::string &name);

  // ---- expressions ----

  int64_t parse_int_literal(std::string_view t, bool *ok);

  Value eval_number(const Expr *e, const Frame &frame);

  Value eval_fstring(std::string_view body, const Frame &frame);

  Value eval_simple_text(std::string text, const Frame &frame);

  Value eval(const Expr *e, Frame &frame);
  Value eval_value(const Expr *e, Frame &frame);

  Value eval_comprehension(const Expr *e, Frame &frame);

  Value eval_subscript(const Expr *e, Frame &frame);
  std::optional<std::array<Value, 3>> slice_bounds(const Expr *slice, Frame &frame);
  std::optional<std::array<int64_t, 3>> slice_range(const Expr *slice, int64_t n, Frame &frame);
  Value activation_module(const Value &name, const Frame &caller);

  static Value copied(const Value &v, bool deep, int depth);

  static int64_t product(const std::vector<int64_t> &dims);

  static std::optional<std::vector<int64_t>> new_shape(const Value &t, std::vector<Value> shape,
                                                       bool expand);

  static Value tensor_like(const Value &t, std::optional<int64_t> numel);

  // ---- tensor shapes (tensor_shapes.cpp) ----

  static bool has_shape(const Value &t);
  static Value shaped(const Value &like, std::vector<int64_t> dims);
  static std::optional<std::vector<int64_t>> broadcast_shape(const std::vector<int64_t> &a,
                                                             const std::vector<int64_t> &b);
  static std::optional<std::vector<int64_t>> matmul_shape(std::vector<int64_t> a,
                                                          std::vector<int64_t> b);
  Value index_tensor(const Value &t, const Expr *e, Frame &frame);
  static std::optional<Value> tensor_method_shape(const Value &self, const std::string &name,
                                                  const Arguments &a);
  static std::optional<Value> torch_function_shape(std::string_view leaf, const Arguments &a);
  static std::optional<Value> padded(const Value &t, const Value &pad);

  Value binary(const std::string &op, const Value &a, const Value &b);

  Value compare(const std::string &op, const Value &a, const Value &b);

  // ---- calls ----

  Arguments eval_arguments(const Expr *call, Frame &frame);
  // Whether two built modules hold the same tensors (names, element counts, element sizes).
  static bool same_tensors(const ModuleNode &a, const ModuleNode &b);

  static const Value *keyword_or(const Arguments &a, std::string_view name, size_t position);

  Value eval_call(const Expr *call, Frame &frame);

  // ---- composite models (sub_models.cpp) ----

  std::optional<Value> eval_from_config(const Expr *call, Frame &frame);
  std::optional<ClassRef> auto_model_class(std::string_view auto_class, const Value &config,
                                           std::string &why);
  Value configuration_class(const std::string &model_type);
  Value configuration_of_other_model(const std::string &model_type, const Arguments &a);

  Value call_value(const Value &callee, Arguments args, Frame &frame, const Expr *call);

  Value call_function(const Value &fn, std::vector<Value> positional,
                      std::vector<std::pair<std::string, Value>> keywords, const Frame &caller,
                      const std::string &path = "");

  static Value tensor_of(std::optional<int64_t> numel, bool integer, int bytes);

  std::optional<int64_t> size_product(const std::vector<Value> &args, std::vector<int64_t> *dims);

  static void apply_dtype(const Arguments &a, Value &t);

  Value call_namespace(const Value &callee, Arguments a, Frame &frame, const Expr *call);

  Value call_builtin(std::string_view leaf, Arguments a, Frame &frame, const Expr *call);

  Value call_method(const Value &self, const std::string &name, Arguments a, Frame &frame,
                    const Expr *call);

  static void dict_set(const Value &dict, const Value &key, const Value &v);
  // dict(pairs): a list of (key, value) in order, a repeated key keeping its first place and
  // its last value; unknown unless each item is a pair.
  static Value dict_from_pairs(const Value &pairs);

  // ---- statements ----

  void assign(const Expr *target, const Value &v, Frame &frame,
              std::vector<std::pair<std::string, std::optional<Value>>> *saved = nullptr);

  std::string_view statement_keyword(const Stmt *s, const Frame &frame) const;
  // Whether running `block` leaves the module being built as it was: it only logs, fills
  // tensors in place, or calls the file's functions without `self`.
  bool builds_nothing(const std::vector<Stmt *> &block, Frame &frame);

  void exec_block(const std::vector<Stmt *> &body, Frame &frame);

  void exec(const Stmt *s, Frame &frame);
};

// `{a, b}`, set(items), frozenset(items): a List marked as a set, its elements in CPython's order
// where known; unknown when the order is not (elements of other kinds).
Value set_of(const ValueList &items, std::string_view leaf);

} // namespace devlint::simulation
