// The values the simulation's evaluator computes: what a Python expression in `__init__` or a
// configuration class evaluates to (numbers, strings, containers, objects, modules, tensors with
// their size, classes, functions), or an unknown that says why.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/syntax.h"
#include "simulation/module_tree.h"

namespace devlint::simulation {

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
  std::string text;                // Str; Unknown: why; Namespace: dotted name
  std::shared_ptr<ValueList> list; // List; Tensor: a 1-D array's elements, when known
  // A List that is a Python set (`{a, b}`, `set(...)`): `==` ignores its order, and it never
  // equals a list or tuple.
  bool is_set = false;
  std::shared_ptr<ValueDict> dict;
  std::shared_ptr<ObjectData> object;
  ModuleNode *module = nullptr;
  // Tensor
  std::optional<int64_t> numel;
  std::vector<int64_t> dims; // when known
  bool integer_dtype = false;
  int element_bytes = 4;
  bool is_parameter = false;
  // `nn.Buffer(data, persistent=...)` (torch 2.5): assigned to a module attribute, it registers
  // a buffer as register_buffer does.
  bool is_buffer = false;
  bool buffer_persistent = true;
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
  // Unknown: a sub-model `from_config` could not build (it is listed, never left out silently).
  bool unbuilt_module = false;

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

std::string_view leaf_name(std::string_view dotted);
// Python truthiness; nullopt when unknown.
std::optional<bool> truthy(const Value &v);
std::optional<bool> equal(const Value &a, const Value &b);
// A value as JSON (a configuration's attributes); `complete` turns false where a part is unknown.
nlohmann::json to_json(const Value &v, bool *complete);
// A json value as Python sees it: objects become dicts (kwargs for a config class) or, with
// `as_objects`, attribute objects (a config passed to a model).
Value from_json(const nlohmann::json &j, bool as_objects);
// Whether `v` is a JSON object of the configuration made an attribute object by from_json: a
// sub-configuration or a dict (`rope_parameters`), which JSON cannot tell apart. It answers as
// both: attributes, and a dict's methods, membership, iteration and len().
bool is_configuration_mapping(const Value &v);
// Such an object as a dict of its attributes (the values shared, not copied).
Value mapping_as_dict(const Value &v);
// What a `for` loop walks: a list as it is; a dict's (or such an object's) keys; a 1-D tensor of
// known length, as that many unknown elements (`[x.item() for x in torch.linspace(0, r, n)]`);
// anything else unchanged.
Value iteration_items(const Value &v, size_t max_items);

} // namespace devlint::simulation
