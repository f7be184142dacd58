// Evaluating expressions: literals, names, f-strings, comprehensions, subscripts, arithmetic
// and comparisons (tensor shapes included).
#include "simulation/evaluator.h"

#include <array>

namespace devlint::simulation {

int64_t Evaluator::parse_int_literal(std::string_view t, bool *ok) {
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

Value Evaluator::eval_number(const Expr *e, const Frame &frame) {
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
Value Evaluator::eval_fstring(std::string_view body, const Frame &frame) {
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

Value Evaluator::eval_simple_text(std::string text, const Frame &frame) {
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
    v = get_attr(v, text.substr(dot + 1, next == std::string::npos ? next : next - dot - 1), frame);
    dot = next;
  }
  return v;
}

// An expression's value; `(name := value)` also binds name in the frame.
Value Evaluator::eval(const Expr *e, Frame &frame) {
  Value v = eval_value(e, frame);
  if (e && !e->binds.empty())
    frame.locals[std::string(e->binds)] = v;
  return v;
}

Value Evaluator::eval_value(const Expr *e, Frame &frame) {
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
      if (prefix.find('f') != std::string_view::npos || prefix.find('F') != std::string_view::npos)
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
    if (e->text == "set")
      return set_of(items, "set");
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
    if (obj.is(Kind::Unknown) && obj.text == kTensorDevice && e->text == "type")
      return Value::unknown(std::string(kTensorDeviceType));
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
    if (e->text == "~" && v.is(Kind::Tensor)) // elementwise: same shape
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
    bool is_and = e->text == "and";
    if (!t) {
      // `unknown and False` is falsy whichever value the unknown has (`is_cuda_platform() and
      // is_ninja_available()`), `unknown or True` truthy: a condition is decided.
      Value b = eval(e->operands[1], frame);
      return b.is(Kind::Bool) && b.integer == (is_and ? 0 : 1) ? b : a;
    }
    if (is_and ? !*t : *t)
      return a;
    return eval(e->operands[1], frame);
  }
  case ExprKind::Compare:
    return compare(std::string(e->text), eval(e->operands[0], frame), eval(e->operands[1], frame));
  case ExprKind::Conditional: {
    // tree-sitter order: value if condition else other
    auto t = truthy(eval(e->operands[1], frame));
    if (!t && tree_) {
      // `DropPath(p) if p > 0 else nn.Identity()`: whichever is built, the model's size is the
      // same when both alternatives build modules of identical tensors and report nothing.
      size_t reported = tree_->unknowns.size();
      Value taken = eval(e->operands[0], frame), other = eval(e->operands[2], frame);
      if (tree_->unknowns.size() == reported && taken.is(Kind::Module) && other.is(Kind::Module) &&
          same_tensors(*taken.module, *other.module))
        return taken;
    }
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

namespace {
// Every tensor of a module and its children, by name, with what it takes: nullopt when any
// size is unknown.
std::optional<std::map<std::string, std::pair<int64_t, int>>>
tensor_sizes(const ModuleNode &node, const std::string &prefix = "", int depth = 0) {
  std::map<std::string, std::pair<int64_t, int>> out;
  if (depth > 64)
    return std::nullopt;
  for (const auto *list : {&node.parameters, &node.buffers})
    for (const TreeTensor &t : *list) {
      if (!t.numel)
        return std::nullopt;
      out[prefix + t.name] = {*t.numel, t.element_bytes};
    }
  for (const auto &[name, child] : node.children) {
    auto inner = tensor_sizes(*child, prefix + name + ".", depth + 1);
    if (!inner)
      return std::nullopt;
    out.insert(inner->begin(), inner->end());
  }
  return out;
}
} // namespace

bool Evaluator::same_tensors(const ModuleNode &a, const ModuleNode &b) {
  auto sizes_a = tensor_sizes(a), sizes_b = tensor_sizes(b);
  return sizes_a && sizes_b && *sizes_a == *sizes_b;
}

Value Evaluator::eval_comprehension(const Expr *e, Frame &frame) {
  const Expr *element = e->operands[0];
  Value iterated = iteration_items(eval(e->operands[1], frame), kMaxLoop);
  const Expr *target = e->operands[2];
  if (!iterated.is(Kind::List)) {
    // `{k: kwargs.pop(k) for k in params if k in kwargs}` with `kwargs` empty: whatever is
    // iterated, no item passes a membership test in an empty container.
    for (size_t c = 3; target->kind == ExprKind::Name && c < e->operands.size(); ++c) {
      const Expr *cond = e->operands[c];
      if (cond->kind != ExprKind::Compare || cond->text != "in" || cond->operands.size() != 2 ||
          cond->operands[0]->kind != ExprKind::Name || cond->operands[0]->text != target->text)
        continue;
      Value container = eval(cond->operands[1], frame);
      bool empty = (container.is(Kind::Dict) && container.dict->empty()) ||
                   (container.is(Kind::List) && container.list->empty());
      if (empty)
        return e->text == "dict" ? Value::dict_of({}) : Value::list_of({});
    }
    report_unknown_value(frame, e->operands[1], iterated, "loop over");
    return Value::unknown("comprehension over an unknown value");
  }
  std::vector<std::pair<std::string, std::optional<Value>>> saved;
  ValueList out, keys;
  bool unknown_condition = false;
  for (const Value &item : *iterated.list) {
    assign(target, item, frame, &saved);
    // `if` clauses (operands[3...]): an item is kept when every one holds.
    bool keep = true;
    for (size_t c = 3; keep && c < e->operands.size(); ++c) {
      Value condition = eval(e->operands[c], frame);
      std::optional<bool> holds = truthy(condition);
      if (!holds) {
        report_unknown_value(frame, e->operands[c], condition, "condition");
        unknown_condition = true;
        break;
      }
      keep = *holds;
    }
    if (unknown_condition)
      break;
    if (keep) {
      if (e->text == "dict" && !e->keywords.empty() && e->keywords[0].value)
        keys.push_back(eval(e->keywords[0].value, frame)); // the key first (Python 3.8)
      out.push_back(eval(element, frame));
    }
  }
  for (auto &[name, old] : saved) {
    if (old)
      frame.locals[name] = *old;
    else
      frame.locals.erase(name);
  }
  if (unknown_condition)
    return Value::unknown("comprehension with an unknown condition");
  if (keys.size() == out.size() && !keys.empty()) {
    Value dict = Value::dict_of({});
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i].is(Kind::Unknown))
        return Value::unknown("a dict comprehension with an unknown key");
      dict_set(dict, keys[i], out[i]);
    }
    return dict;
  }
  if (e->text == "dict" && out.empty())
    return Value::dict_of({});
  return Value::list_of(std::move(out));
}

// The start, stop and step of a slice `a:b:c` (None where absent): each bound is the part of
// the text between the slice's top-level colons it lies in (`depths[:i] : depths[: i + 1]`).
std::optional<std::array<Value, 3>> Evaluator::slice_bounds(const Expr *slice, Frame &frame) {
  std::string text = text_of(frame.file, slice->range);
  std::vector<size_t> colons;
  int depth = 0;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote) {
      if (c == '\\')
        ++i;
      else if (c == quote)
        quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      --depth;
    } else if (c == ':' && depth == 0) {
      colons.push_back(i);
    }
  }
  if (colons.empty() || colons.size() > 2)
    return std::nullopt;
  std::array<Value, 3> bounds = {Value::none(), Value::none(), Value::none()};
  for (const Expr *bound : slice->operands) {
    if (bound->range.begin < slice->range.begin)
      return std::nullopt;
    size_t offset = bound->range.begin - slice->range.begin;
    size_t part = static_cast<size_t>(
        std::count_if(colons.begin(), colons.end(), [&](size_t c) { return c < offset; }));
    bounds[part] = eval(bound, frame);
  }
  return bounds;
}

// slice.indices(n) for a slice of ints or None: start, stop and step, the bounds clamped.
std::optional<std::array<int64_t, 3>> Evaluator::slice_range(const Expr *slice, int64_t n,
                                                             Frame &frame) {
  std::optional<std::array<Value, 3>> bounds = slice_bounds(slice, frame);
  if (!bounds)
    return std::nullopt;
  for (const Value &b : *bounds)
    if (!b.is(Kind::Int) && !b.is(Kind::None))
      return std::nullopt;
  int64_t step = (*bounds)[2].is(Kind::Int) ? (*bounds)[2].integer : 1;
  if (step == 0)
    return std::nullopt;
  auto clamp = [&](const Value &b, bool is_start) -> int64_t {
    if (!b.is(Kind::Int))
      return step > 0 ? (is_start ? 0 : n) : (is_start ? n - 1 : -1);
    int64_t i = b.integer < 0 ? b.integer + n : b.integer;
    if (i < 0)
      return step > 0 ? 0 : -1;
    if (i >= n)
      return step > 0 ? n : n - 1;
    return i;
  };
  return std::array<int64_t, 3>{clamp((*bounds)[0], true), clamp((*bounds)[1], false), step};
}

Value Evaluator::eval_subscript(const Expr *e, Frame &frame) {
  Value v = eval(e->operands[0], frame);
  if (e->operands.size() < 2)
    return Value::unknown("subscript");
  if (v.is(Kind::Namespace)) {
    std::string_view leaf = leaf_name(v.text);
    if (leaf == "ACT2FN")
      return activation_module(eval(e->operands[1], frame), frame);
    // `ACT2CLS[name]` is the activation's class: calling it builds the module.
    if (leaf == "ACT2CLS") {
      Value name = eval(e->operands[1], frame);
      return name.is(Kind::Str) ? Value::ns(std::string(kActivationClass) + name.text)
                                : Value::unknown("ACT2CLS of an unknown name");
    }
    if (leaf == "CONFIG_MAPPING") { // model_type -> configuration class
      Value key = eval(e->operands[1], frame);
      if (key.is(Kind::Str))
        return configuration_class(key.text);
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
  if ((v.is(Kind::List) || v.is(Kind::Str)) && e->operands.size() == 2 &&
      e->operands[1]->kind == ExprKind::Slice) {
    // a[i:j:k] of a list or a string (`param[4:]`, `a[::-1]`): Python's slice.indices.
    int64_t n = static_cast<int64_t>(v.is(Kind::Str) ? v.text.size() : v.list->size());
    if (std::optional<std::array<int64_t, 3>> range = slice_range(e->operands[1], n, frame)) {
      auto [start, stop, step] = *range;
      std::string text;
      ValueList out;
      for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
        if (v.is(Kind::Str))
          text += v.text[static_cast<size_t>(i)];
        else
          out.push_back((*v.list)[static_cast<size_t>(i)]);
      }
      return v.is(Kind::Str) ? Value::str(text) : Value::list_of(std::move(out));
    }
  }
  if (v.is(Kind::Tensor))
    return index_tensor(v, e, frame);
  if (v.is(Kind::Unknown))
    return v;
  return Value::unknown("`" + text_of(frame.file, e->range) + "`");
}

// A copy of a configuration value: objects, lists and dicts get their own storage (deep: at
// every level), so that edits to the copy leave the original as it was.
Value Evaluator::copied(const Value &v, bool deep, int depth) {
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

int64_t Evaluator::product(const std::vector<int64_t> &dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    p *= d;
  return p;
}

// The shape `t.view(...)` / `t.reshape(...)` / `t.expand(...)` asks for: ints, -1 for the one
// inferred dimension (view) or for a kept one (expand). Nullopt when it cannot be worked out.
std::optional<std::vector<int64_t>> Evaluator::new_shape(const Value &t, std::vector<Value> shape,
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

Value Evaluator::tensor_like(const Value &t, std::optional<int64_t> numel) {
  Value v;
  v.kind = Kind::Tensor;
  v.numel = numel;
  v.integer_dtype = t.integer_dtype;
  v.element_bytes = t.element_bytes;
  return v;
}

Value Evaluator::binary(const std::string &op, const Value &a, const Value &b) {
  if (a.is(Kind::Tensor) || b.is(Kind::Tensor)) {
    // Elementwise with broadcasting: the larger operand decides the size (what `__init__`
    // computes: inv_freq = 1.0 / base ** (arange(0, dim, 2) / dim)).
    const Value &t = a.is(Kind::Tensor) ? a : b;
    // Both shapes known: torch's broadcasting (matmul's rule for `@`).
    if (has_shape(a) && has_shape(b)) {
      auto dims = op == "@" ? matmul_shape(a.dims, b.dims) : broadcast_shape(a.dims, b.dims);
      // The result's dtype: ints stay ints (but `/`, a float32); with a float operand, the
      // wider float.
      Value r = dims ? shaped(a, *dims) : tensor_like(a, std::nullopt);
      r.integer_dtype = a.integer_dtype && b.integer_dtype && op != "/";
      if (a.integer_dtype == b.integer_dtype)
        r.element_bytes =
            r.integer_dtype || !a.integer_dtype ? std::max(a.element_bytes, b.element_bytes) : 4;
      else
        r.element_bytes = a.integer_dtype ? b.element_bytes : a.element_bytes;
      return r;
    }
    if (a.is(Kind::Tensor) && b.is(Kind::Tensor)) {
      if (!a.numel || !b.numel)
        return tensor_like(a, std::nullopt);
      const Value &larger = *a.numel >= *b.numel ? a : b;
      Value r = tensor_like(larger, std::max(*a.numel, *b.numel));
      if (a.dims == b.dims || a.numel == std::optional<int64_t>(1) ||
          b.numel == std::optional<int64_t>(1))
        r.dims = larger.dims; // elementwise: the broadcast shape
      if (op == "@")
        r.numel = std::nullopt, r.dims.clear();
      r.integer_dtype = a.integer_dtype && b.integer_dtype;
      return r;
    }
    Value r = tensor_like(t, t.numel);
    r.dims = t.dims; // with a number: elementwise, the tensor's shape
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

Value Evaluator::compare(const std::string &op, const Value &a, const Value &right) {
  const Value &b = (op == "in" || op == "not in") && is_configuration_mapping(right)
                       ? mapping_as_dict(right)
                       : right;
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
  // Elementwise on tensors: a boolean tensor of the broadcast size (wavelen > low_freq_wavelen).
  if ((a.is(Kind::Tensor) || b.is(Kind::Tensor)) &&
      (op == "<" || op == "<=" || op == ">" || op == ">=" || op == "==" || op == "!=")) {
    Value r = binary(op, a, b);
    r.integer_dtype = true;
    r.element_bytes = 1;
    return r;
  }
  if (op == "==" || op == "!=") {
    auto eq = equal(a, b);
    auto accelerator = [](const Value &v) {
      return v.is(Kind::Str) && (v.text == "cuda" || v.text == "npu" || v.text == "mps" ||
                                 v.text == "xpu" || v.text == "hpu" || v.text == "xla");
    };
    auto device_type = [](const Value &v) {
      return v.is(Kind::Unknown) && v.text == kTensorDeviceType;
    };
    if ((device_type(a) && accelerator(b)) || (device_type(b) && accelerator(a)))
      eq = false;
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

} // namespace devlint::simulation
