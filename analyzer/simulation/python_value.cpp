#include "simulation/python_value.h"

#include <cmath>

namespace devlint::simulation {

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
    if (a.list->size() != b.list->size() || a.is_set != b.is_set)
      return false;
    if (a.is_set) { // elements are unique: each of a's is in b
      for (const Value &x : *a.list) {
        bool found = false;
        for (const Value &y : *b.list) {
          auto e = equal(x, y);
          if (!e)
            return e;
          found = found || *e;
        }
        if (!found)
          return false;
      }
      return true;
    }
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
      else if (k.is(Kind::Int)) // json.dumps writes an int key as its digits (id2label)
        o[std::to_string(k.integer)] = to_json(e, complete);
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

namespace {
// The class name from_json gives the objects it makes.
constexpr const char *kConfigurationMapping = "PretrainedConfig";
} // namespace

bool is_configuration_mapping(const Value &v) {
  return v.is(Kind::Object) && v.object && !v.object->class_def &&
         v.object->class_name == kConfigurationMapping;
}

Value mapping_as_dict(const Value &v) {
  ValueDict items;
  for (const auto &[k, x] : v.object->attrs)
    items.emplace_back(Value::str(k), x);
  return Value::dict_of(std::move(items));
}

Value iteration_items(const Value &v, size_t max_items) {
  const Value &container = is_configuration_mapping(v) ? mapping_as_dict(v) : v;
  if (container.is(Kind::Dict)) {
    ValueList keys;
    for (const auto &[k, x] : *container.dict)
      keys.push_back(k);
    return Value::list_of(std::move(keys));
  }
  // A string iterates over its characters.
  if (container.is(Kind::Str) && container.text.size() <= max_items) {
    ValueList chars;
    for (char c : container.text)
      chars.push_back(Value::str(std::string(1, c)));
    return Value::list_of(std::move(chars));
  }
  if (container.is(Kind::Tensor) && container.dims.size() == 1 && container.dims[0] >= 0 &&
      static_cast<size_t>(container.dims[0]) <= max_items)
    return Value::list_of(ValueList(static_cast<size_t>(container.dims[0]),
                                    Value::unknown("an element of a tensor")));
  return container;
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
    v.object->class_name = kConfigurationMapping;
    for (const auto &[k, e] : j.items())
      v.object->attrs[k] = from_json(e, true);
    return v;
  }
  ValueDict items;
  for (const auto &[k, e] : j.items())
    items.emplace_back(Value::str(k), from_json(e, false));
  return Value::dict_of(std::move(items));
}

} // namespace devlint::simulation
