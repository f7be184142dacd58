// Calls: arguments, package functions and classes, torch and other namespaces, builtins.
#include "simulation/evaluator.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

namespace devlint::simulation {

namespace {
// The class name of what itertools.cycle returns (an Object holding its items and position).
constexpr std::string_view kCycleIterator = "itertools.cycle";
} // namespace

Arguments Evaluator::eval_arguments(const Expr *call, Frame &frame) {
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
      if (is_configuration_mapping(v))
        v = mapping_as_dict(v);
      if (v.is(Kind::Dict)) {
        for (const auto &[key, x] : *v.dict)
          if (key.is(Kind::Str))
            a.keywords.emplace_back(key.text, x);
      } else if (!v.is(Kind::None)) {
        // The call would run with keywords devlint does not know: never silently without them.
        report_unknown_value(frame, k.value, v, "keyword arguments");
      }
      continue;
    }
    a.keywords.emplace_back(std::string(k.name), v);
  }
  return a;
}

const Value *Evaluator::keyword_or(const Arguments &a, std::string_view name, size_t position) {
  for (const auto &[k, v] : a.keywords)
    if (k == name)
      return &v;
  return position < a.positional.size() ? &a.positional[position] : nullptr;
}

Value Evaluator::eval_call(const Expr *call, Frame &frame) {
  const Expr *callee_expr = call->operands[0];
  if (std::optional<Value> sub_model = eval_from_config(call, frame))
    return *sub_model;
  // super().__init__(...) / Base.__init__(self, ...)
  Value callee = eval(callee_expr, frame);
  Arguments args = eval_arguments(call, frame);
  return call_value(callee, std::move(args), frame, call);
}

Value Evaluator::call_value(const Value &callee, Arguments args, Frame &frame, const Expr *call) {
  switch (callee.kind) {
  case Kind::Class: {
    ClassRef cls{callee.class_def, callee.file};
    if (class_is_module(cls))
      return instantiate_module(cls, std::move(args.positional), std::move(args.keywords), frame,
                                frame.module_path);
    return instantiate_object(cls, std::move(args.positional), std::move(args.keywords), frame);
  }
  case Kind::Function: {
    // A package's own probe (diffusers' `is_torch_npu_available()` returns a module global its
    // import-time check set): the machine devmap assumes, as for transformers' probes below.
    std::string_view library =
        callee.function ? library_probed_by(callee.function->name) : std::string_view();
    if (!library.empty() && args.positional.empty() && args.keywords.empty())
      return Value::boolean(library_assumed_installed(library));
    return call_function(callee, std::move(args.positional), std::move(args.keywords), frame,
                         frame.module_path);
  }
  case Kind::Super: {
    if (callee.text == "__init__" && frame.current_class && callee.bound_self) {
      if (std::optional<std::vector<MroEntry>> after =
              mro_after(*callee.bound_self, frame.current_class)) {
        // super() is the next class of the instance's MRO: a mixin's super().__init__ reaches
        // the model class after it (BackboneMixin -> the PreTrainedModel that keeps the config).
        for (const MroEntry &next : *after) {
          if (next.cls) {
            run_init(*next.cls, *callee.bound_self, std::move(args.positional),
                     std::move(args.keywords), frame, frame.module_path);
            return Value::none();
          }
          if (external_init(leaf_name(next.dotted), *callee.bound_self, args.positional,
                            args.keywords, frame))
            return Value::none();
        }
        return Value::none();
      }
      ClassRef current{frame.current_class, frame.file};
      for (auto &[base, dotted] : bases_of(current)) {
        if (base) {
          run_init(*base, *callee.bound_self, std::move(args.positional), std::move(args.keywords),
                   frame, frame.module_path);
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
      // PreTrainedConfig.__post_init__(**kwargs) (transformers 5) sets the keyword arguments no
      // field took as attributes, after what the configuration's own __post_init__ set
      // (XcodecConfig's `CONFIG_MAPPING["dac"](hidden_size=256)` over DacConfig's derived one).
      if (callee.text == "__post_init__" && callee.bound_self->is(Kind::Object) &&
          is_transformers_config(current)) {
        std::map<std::string, Value> &attrs = callee.bound_self->object->attrs;
        Value map = class_attribute(current, "attribute_map");
        for (const auto &[key, value] : args.keywords) {
          std::string name = key;
          if (map.is(Kind::Dict))
            for (const auto &[alias, real] : *map.dict)
              if (alias.is(Kind::Str) && real.is(Kind::Str) && alias.text == key)
                name = real.text;
          attrs[name] = value;
        }
        return Value::none();
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

Value Evaluator::call_function(const Value &fn, std::vector<Value> positional,
                               std::vector<std::pair<std::string, Value>> keywords,
                               const Frame &caller, const std::string &path) {
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
  // diffusers' `@register_to_config`: before __init__ runs, its arguments (defaults for those not
  // given, private `_` ones left out) are registered, and `self.config` reads them back
  // (configuration_utils.py: register_to_config's inner_init; ConfigMixin.config).
  if (fn.bound_self && fn.bound_self->is(Kind::Module) && def->name == "__init__" &&
      std::any_of(def->decorators.begin(), def->decorators.end(), [](const Expr *d) {
        return leaf_name(dotted_name(d)) == "register_to_config";
      })) {
    Value registered;
    registered.kind = Kind::Object;
    registered.object = std::make_shared<ObjectData>();
    registered.object->class_name = "FrozenDict";
    for (size_t i = 1; i < def->parameters.size(); ++i) {
      const Parameter &p = def->parameters[i];
      if (!p.variadic && p.name.rfind('_', 0) != 0)
        registered.object->attrs[std::string(p.name)] = frame.locals[std::string(p.name)];
    }
    set_module_attr(*fn.bound_self->module, "config", registered);
  }
  ++depth_;
  exec_block(def->body, frame);
  --depth_;
  return frame.returned ? frame.return_value : Value::none();
}

Value Evaluator::tensor_of(std::optional<int64_t> numel, bool integer, int bytes) {
  Value v;
  v.kind = Kind::Tensor;
  v.numel = element_count(numel);
  v.integer_dtype = integer;
  v.element_bytes = bytes;
  return v;
}

// A size given as ints, a list of ints, or torch.Size.
std::optional<int64_t> Evaluator::size_product(const std::vector<Value> &args,
                                               std::vector<int64_t> *dims) {
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
void Evaluator::apply_dtype(const Arguments &a, Value &t) {
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

Value Evaluator::call_namespace(const Value &callee, Arguments a, Frame &frame, const Expr *call) {
  std::string_view name = callee.text;
  std::string_view leaf = leaf_name(name);
  if (callee.bound_self)
    return call_method(*callee.bound_self, std::string(leaf), std::move(a), frame, call);
  if (starts_with(name, "builtins."))
    return call_builtin(leaf, std::move(a), frame, call);
  // A model loaded with a device map is built on a machine with CUDA GPUs (docs/DEVICE_MODEL.md
  // section 2: "What the constructor sees"): Apple's backend is absent there.
  if (name == "torch.cuda.is_available")
    return Value::boolean(true);
  if (name == "torch.backends.mps.is_available")
    return Value::boolean(false);
  if (starts_with(name, kActivationClass))
    return activation_module(Value::str(std::string(name.substr(kActivationClass.size()))), frame);
  if (starts_with(name, kOtherModelConfiguration))
    return configuration_of_other_model(std::string(name.substr(kOtherModelConfiguration.size())),
                                        a);
  // The math module on numbers (a configuration's sizes and a rotary embedding's correction range
  // go through math.log, math.floor, math.ceil).
  if (starts_with(name, "math.") && !a.positional.empty() &&
      std::all_of(a.positional.begin(), a.positional.end(),
                  [](const Value &v) { return v.is_number(); })) {
    double x = a.positional[0].as_real();
    auto real = [](double r) {
      return std::isfinite(r) ? Value::real_value(r) : Value::unknown("math domain");
    };
    auto integral = [](double r) {
      auto n = checked::from_real(r);
      return n ? Value::integer_value(*n) : Value::unknown("math domain");
    };
    if (a.positional.size() == 1) {
      if (leaf == "floor")
        return integral(std::floor(x));
      if (leaf == "ceil")
        return integral(std::ceil(x));
      if (leaf == "sqrt" && x >= 0)
        return real(std::sqrt(x));
      if (leaf == "exp")
        return real(std::exp(x));
      if ((leaf == "log" || leaf == "log2" || leaf == "log10") && x > 0)
        return real(leaf == "log" ? std::log(x) : leaf == "log2" ? std::log2(x) : std::log10(x));
    }
    if (a.positional.size() == 2 && leaf == "log" && x > 0 && a.positional[1].as_real() > 0 &&
        a.positional[1].as_real() != 1)
      return real(std::log(x) / std::log(a.positional[1].as_real()));
    if (a.positional.size() == 2 && leaf == "pow")
      return real(std::pow(x, a.positional[1].as_real()));
  }
  if ((ends_with_str(name, "functional.pad") || name == "F.pad") && a.positional.size() >= 2)
    if (std::optional<Value> t = padded(a.positional[0], a.positional[1]))
      return *t;
  if (std::optional<Value> reshaped = torch_function_shape(leaf, a))
    return *reshaped;
  // torch tensor constructors
  // torch.normal(mean, std, size=...) with numbers: a tensor of that size (its other forms take
  // the shape of tensor arguments).
  bool sized_normal = leaf == "normal" && keyword_or(a, "size", SIZE_MAX) &&
                      std::all_of(a.positional.begin(), a.positional.end(),
                                  [](const Value &v) { return v.is_number(); });
  // torch.Tensor([True]), torch.LongTensor(idxs): the legacy constructors given data (a list)
  // hold its elements; given sizes, they are shaped like torch.empty.
  if ((leaf == "Tensor" || leaf == "FloatTensor" || leaf == "LongTensor" || leaf == "BoolTensor") &&
      a.positional.size() == 1 && a.positional[0].is(Kind::List)) {
    const ValueList &items = *a.positional[0].list;
    bool flat = std::none_of(items.begin(), items.end(), [](const Value &v) {
      return v.is(Kind::List) || v.is(Kind::Tensor) || v.is(Kind::Unknown);
    });
    if (!flat)
      return tensor_of(std::nullopt, leaf == "LongTensor", leaf == "LongTensor" ? 8 : 4);
    auto n = static_cast<int64_t>(items.size());
    Value t = tensor_of(n, leaf == "LongTensor" || leaf == "BoolTensor",
                        leaf == "LongTensor"   ? 8
                        : leaf == "BoolTensor" ? 1
                                               : 4);
    t.dims = {n};
    return t;
  }
  // torch.Tensor(t) / FloatTensor(t) of a tensor or array: a float32 copy of its shape.
  if ((leaf == "Tensor" || leaf == "FloatTensor") && a.positional.size() == 1 &&
      a.positional[0].is(Kind::Tensor)) {
    Value t = tensor_like(a.positional[0], a.positional[0].numel);
    t.dims = a.positional[0].dims;
    t.integer_dtype = false;
    t.element_bytes = 4;
    return t;
  }
  if (leaf == "empty" || leaf == "zeros" || leaf == "ones" || leaf == "randn" || leaf == "rand" ||
      leaf == "full" || leaf == "Tensor" || leaf == "FloatTensor" || sized_normal) {
    std::vector<Value> shape = a.positional;
    if ((leaf == "full" || sized_normal) && !shape.empty())
      shape.resize(leaf == "full" ? 1 : 0);
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
    std::vector<int64_t> dims;
    bool shape_known = v.is_number(); // a 0-d tensor
    if (v.is(Kind::List)) {
      // Numbers, or rows of numbers of one length: the data's shape.
      auto numbers = [](const ValueList &items) {
        return std::all_of(items.begin(), items.end(),
                           [](const Value &x) { return x.is_number(); });
      };
      const ValueList &rows = *v.list;
      if (numbers(rows)) {
        dims = {*n};
        shape_known = true;
      } else if (std::all_of(rows.begin(), rows.end(), [&](const Value &r) {
                   return r.is(Kind::List) && r.list->size() == rows[0].list->size() &&
                          numbers(*r.list);
                 })) {
        dims = {*n, static_cast<int64_t>(rows[0].list->size())};
        n = element_product(dims[0], dims[1]);
        integer = !rows[0].list->empty() && (*rows[0].list)[0].is(Kind::Int);
        shape_known = n.has_value();
      }
    }
    Value t = tensor_of(n, integer, integer ? 8 : 4);
    if (shape_known)
      t.dims = dims;
    apply_dtype(a, t);
    return t;
  }
  if (leaf == "outer" && a.positional.size() == 2 && a.positional[0].is(Kind::Tensor) &&
      a.positional[1].is(Kind::Tensor)) {
    auto x = a.positional[0].numel, y = a.positional[1].numel;
    return tensor_of(element_product(x, y), false, 4);
  }
  // torch.einsum("i , j -> i j", a, b): each output letter's size, read from the operands'
  // shapes (sinusoidal tables, rotary frequencies).
  if (leaf == "einsum" && a.positional.size() >= 2 && a.positional[0].is(Kind::Str)) {
    std::string spec;
    for (char c : a.positional[0].text)
      if (c != ' ')
        spec += c;
    size_t arrow = spec.find("->");
    if (arrow != std::string::npos && spec.find("...") == std::string::npos) {
      std::map<char, int64_t> sizes;
      std::string inputs = spec.substr(0, arrow) + ",";
      size_t operand = 1, begin = 0;
      bool known = true;
      for (size_t comma; known && (comma = inputs.find(',', begin)) != std::string::npos;
           begin = comma + 1, ++operand) {
        std::string letters = inputs.substr(begin, comma - begin);
        const Value *t = operand < a.positional.size() ? &a.positional[operand] : nullptr;
        if (!t || !t->is(Kind::Tensor) || t->dims.size() != letters.size()) {
          known = false;
          break;
        }
        for (size_t i = 0; i < letters.size(); ++i)
          sizes[letters[i]] = t->dims[i];
      }
      std::vector<int64_t> dims;
      for (char c : spec.substr(arrow + 2))
        if (known && sizes.count(c))
          dims.push_back(sizes[c]);
        else
          known = false;
      if (known && operand == a.positional.size()) {
        std::optional<int64_t> n = 1;
        for (int64_t d : dims)
          n = element_product(n, d);
        Value t = tensor_of(n, false, 4);
        t.dims = dims;
        return t;
      }
    }
    return tensor_of(std::nullopt, false, 4);
  }
  // Elementwise on two tensors of one shape (a causal mask xor its band).
  if ((leaf == "bitwise_xor" || leaf == "bitwise_and" || leaf == "bitwise_or" ||
       leaf == "logical_and" || leaf == "logical_or" || leaf == "logical_xor") &&
      a.positional.size() == 2 && a.positional[0].is(Kind::Tensor) &&
      a.positional[1].is(Kind::Tensor) && a.positional[0].numel == a.positional[1].numel &&
      a.positional[0].dims == a.positional[1].dims)
    return a.positional[0];
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
  if (leaf == "Buffer" && (name == "nn.Buffer" || ends_with_str(name, ".nn.Buffer"))) {
    Value t = a.positional.empty() ? tensor_of(std::nullopt, false, 4) : a.positional[0];
    if (!t.is(Kind::Tensor))
      t = tensor_of(std::nullopt, false, 4);
    t.is_buffer = true;
    t.is_parameter = false;
    const Value *persistent = a.positional.size() > 1 ? &a.positional[1] : nullptr;
    for (const auto &[k, v] : a.keywords)
      if (k == "persistent")
        persistent = &v;
    if (persistent && persistent->is(Kind::Bool))
      t.buffer_persistent = persistent->integer != 0;
    return t;
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
  if (leaf == "get_activation" || leaf == "ACT2FN")
    return activation_module(a.positional.empty() ? Value::unknown("activation") : a.positional[0],
                             frame);
  if (leaf == "weight_norm" && (ends_with_str(name, "nn.utils.weight_norm") ||
                                ends_with_str(name, "nn.utils.parametrizations.weight_norm")))
    return weight_norm(a, ends_with_str(name, "parametrizations.weight_norm"), frame, call);
  // transformers' AutoConfig.for_model(model_type, **kwargs): CONFIG_MAPPING[model_type](**kwargs).
  if (name == "AutoConfig.for_model" || ends_with_str(name, ".AutoConfig.for_model")) {
    const Value *model_type = keyword_or(a, "model_type", 0);
    if (!model_type || !model_type->is(Kind::Str))
      return Value::unknown("AutoConfig.for_model of an unknown model_type");
    Arguments rest;
    if (a.positional.size() > 1)
      rest.positional.assign(a.positional.begin() + 1, a.positional.end());
    for (const auto &[k, v] : a.keywords)
      if (k != "model_type")
        rest.keywords.emplace_back(k, v);
    return call_value(configuration_class(model_type->text), std::move(rest), frame, call);
  }
  // math.prod(values) / numpy.prod(values) of numbers: their product (1 for none).
  if ((name == "math.prod" || name == "np.prod" || name == "numpy.prod") &&
      a.positional.size() == 1 && a.positional[0].is(Kind::List) && a.keywords.empty()) {
    Value product = Value::integer_value(1);
    for (const Value &v : *a.positional[0].list) {
      if (!v.is_number())
        return Value::unknown(std::string(name) + " of values that are not numbers");
      product = binary("*", product, v);
      if (!product.is_number())
        return product;
    }
    return product;
  }
  // numpy.argsort(values) of a list of numbers: a 1-D integer array of the indices that sort
  // them, its elements kept for tolist() (PP-DocLayoutV3 orders its FPN levels by stride). Equal
  // values leave the order unknown unless the sort is stable: numpy's default one is not.
  if ((name == "np.argsort" || name == "numpy.argsort") && a.positional.size() == 1 &&
      a.positional[0].is(Kind::List)) {
    bool stable = false;
    for (const auto &[key, v] : a.keywords) {
      bool one_axis = key == "axis" && v.is(Kind::Int) && (v.integer == 0 || v.integer == -1);
      bool kind = key == "kind" && v.is(Kind::Str);
      if (!one_axis && !kind)
        return Value::unknown(std::string(name) + " with `" + key + "`");
      stable = stable || (kind && (v.text == "stable" || v.text == "mergesort"));
    }
    const ValueList &values = *a.positional[0].list;
    if (values.size() > kMaxLoop ||
        !std::all_of(values.begin(), values.end(), [](const Value &v) { return v.is_number(); }))
      return Value::unknown(std::string(name) + " of values that are not numbers");
    std::vector<size_t> order(values.size());
    for (size_t i = 0; i < order.size(); ++i)
      order[i] = i;
    auto before = [&](size_t x, size_t y) { return values[x].as_real() < values[y].as_real(); };
    std::stable_sort(order.begin(), order.end(), before);
    ValueList indices;
    for (size_t i = 0; i < order.size(); ++i) {
      if (!stable && i > 0 && !before(order[i - 1], order[i]))
        return Value::unknown(std::string(name) + " of equal values (the order is unknown)");
      indices.push_back(Value::integer_value(static_cast<int64_t>(order[i])));
    }
    Value array = tensor_of(static_cast<int64_t>(indices.size()), true, 8);
    array.dims = {static_cast<int64_t>(indices.size())};
    array.list = std::make_shared<ValueList>(std::move(indices));
    return array;
  }
  // itertools.cycle(items): an iterator that next() walks round and round.
  if (name == "itertools.cycle" && a.positional.size() == 1) {
    Value items = iteration_items(a.positional[0], kMaxLoop);
    if (!items.is(Kind::List))
      return Value::unknown("itertools.cycle of an unknown iterable");
    Value it;
    it.kind = Kind::Object;
    it.object = std::make_shared<ObjectData>();
    it.object->class_name = kCycleIterator;
    it.object->attrs["items"] = items;
    it.object->attrs["position"] = Value::integer_value(0);
    return it;
  }
  // itertools.product(a, b, repeat=n): the tuples of the cartesian product, the last iterable
  // varying fastest.
  if (name == "itertools.product") {
    ValueList pools;
    for (const Value &v : a.positional) {
      Value items = iteration_items(v, kMaxLoop);
      if (!items.is(Kind::List))
        return Value::unknown("itertools.product of an unknown iterable");
      pools.push_back(items);
    }
    const Value *repeat = keyword_or(a, "repeat", SIZE_MAX);
    if (repeat && (!repeat->is(Kind::Int) || repeat->integer < 0 || repeat->integer > 16))
      return Value::unknown("itertools.product repeated an unknown number of times");
    ValueList all;
    for (int64_t r = 0; r < (repeat ? repeat->integer : 1); ++r)
      all.insert(all.end(), pools.begin(), pools.end());
    std::vector<ValueList> out = {{}};
    for (const Value &pool : all) {
      std::vector<ValueList> next;
      for (const ValueList &prefix : out)
        for (const Value &x : *pool.list) {
          if (next.size() >= kMaxLoop)
            return Value::unknown("itertools.product of too many items");
          next.push_back(prefix);
          next.back().push_back(x);
        }
      out = std::move(next);
    }
    ValueList tuples;
    for (ValueList &t : out)
      tuples.push_back(Value::list_of(std::move(t)));
    return Value::list_of(std::move(tuples));
  }
  // collections.OrderedDict(...) is a dict that keeps insertion order, as every dict does.
  if (name == "collections.OrderedDict")
    return call_builtin("dict", std::move(a), frame, call);
  // transformers' is_<library>_available(): devmap's machine has torch with CUDA and accelerate
  // (device_map="auto" needs it) and no optional library (library_assumed_installed; a
  // module-level `if is_xlstm_available(): ... else: ...` is read the same way), so a model
  // builds its own fallback.
  if (std::string_view library = library_probed_by(leaf); !library.empty() && a.positional.empty())
    return Value::boolean(library_assumed_installed(library));
  // transformers' is_deepspeed_zero3_enabled(): from_pretrained refuses a device_map under
  // ZeRO-3 (integrations/accelerate.py), so the model devmap places is built without it.
  if (leaf == "is_deepspeed_zero3_enabled" && a.positional.empty() && a.keywords.empty())
    return Value::boolean(false);
  // A logger (transformers' utils.logging.get_logger wraps the standard one): its methods log.
  if (name == "logging.get_logger" || name == "logging.getLogger")
    return Value::ns("logging.Logger");
  // torch.Size(dims) is a tuple of its ints (diffusers' RMSNorm: `self.dim = torch.Size(dim)`,
  // then `torch.ones(dim)`).
  if (name == "torch.Size" && a.positional.size() <= 1) {
    if (a.positional.empty())
      return Value::list_of({});
    if (a.positional[0].is(Kind::List))
      return Value::list_of(*a.positional[0].list);
  }
  // copy.deepcopy(config): encoder and decoder configurations edited apart (T5, BART).
  if ((name == "copy.deepcopy" || name == "copy.copy") && a.positional.size() == 1)
    return copied(a.positional[0], name == "copy.deepcopy", 0);
  // torch.tril(torch.ones(n, n)): elementwise functions keep their argument's shape.
  if ((leaf == "tril" || leaf == "triu" || leaf == "cos" || leaf == "sin" || leaf == "abs" ||
       leaf == "sigmoid" || leaf == "tanh" || leaf == "flip" || leaf == "clone" ||
       leaf == "rsqrt" || leaf == "sign" || leaf == "log1p") &&
      !a.positional.empty() && a.positional[0].is(Kind::Tensor)) {
    Value t = tensor_like(a.positional[0], a.positional[0].numel);
    t.dims = a.positional[0].dims;
    return t;
  }
  // torch.where(cond, a, b), torch.maximum(a, b): elementwise over their broadcast tensors. Where
  // every tensor argument has one shape (scalars broadcast to it), the result has that shape.
  if ((name == "torch.where" && a.positional.size() == 3) ||
      ((name == "torch.maximum" || name == "torch.minimum" || name == "torch.div" ||
        name == "torch.floor_divide" || name == "torch.remainder" || name == "torch.fmod" ||
        name == "torch.true_divide") &&
       a.positional.size() == 2)) {
    // Every tensor's shape known: they broadcast (numbers do too).
    std::optional<std::vector<int64_t>> broadcast = std::vector<int64_t>{};
    const Value *first_value = nullptr;
    for (size_t i = 0; i < a.positional.size() && broadcast; ++i) {
      const Value &v = a.positional[i];
      if (v.is(Kind::Tensor) && has_shape(v)) {
        broadcast = broadcast_shape(*broadcast, v.dims);
        if (!first_value && (name != "torch.where" || i > 0))
          first_value = &v;
      } else if (!v.is_number()) {
        broadcast = std::nullopt;
      }
    }
    if (broadcast && first_value)
      return shaped(*first_value, *broadcast);
    const Value *shape = nullptr;
    bool same = true;
    for (size_t i = 0; i < a.positional.size(); ++i) {
      const Value &v = a.positional[i];
      if (!v.is(Kind::Tensor)) {
        same = same && (v.is(Kind::Int) || v.is(Kind::Float) || v.is(Kind::Bool));
        continue;
      }
      if (!v.numel) {
        same = false;
      } else if (!shape) {
        shape = &v;
      } else if (*shape->numel != *v.numel || shape->dims != v.dims) {
        same = false;
      }
    }
    // The values' dtype, not the condition's (a boolean mask).
    const Value *values = name == "torch.where" ? nullptr : shape;
    for (size_t i = name == "torch.where" ? 1 : 0; i < a.positional.size() && !values; ++i)
      if (a.positional[i].is(Kind::Tensor))
        values = &a.positional[i];
    if (same && shape && values) {
      Value t = tensor_like(*values, shape->numel);
      t.dims = shape->dims;
      return t;
    }
  }
  // torch.ones_like(t), full_like(t, v), rand_like(t): t's shape (and dtype, unless given).
  if (leaf == "ones_like" || leaf == "zeros_like" || leaf == "empty_like" || leaf == "full_like" ||
      leaf == "rand_like" || leaf == "randn_like") {
    if (!a.positional.empty() && a.positional[0].is(Kind::Tensor)) {
      Value t = tensor_like(a.positional[0], a.positional[0].numel);
      t.dims = a.positional[0].dims;
      apply_dtype(a, t);
      return t;
    }
  }
  // torch.clamp / clip (t, min, max): elementwise, t's shape.
  if ((leaf == "clamp" || leaf == "clip") && !a.positional.empty() &&
      a.positional[0].is(Kind::Tensor)) {
    Value t = tensor_like(a.positional[0], a.positional[0].numel);
    t.dims = a.positional[0].dims;
    return t;
  }
  // Module constructors: torch.nn layers, transformers' Conv1D.
  if (!leaf.empty() && std::isupper(static_cast<unsigned char>(leaf[0]))) {
    Value m = builtin_module(leaf, a.positional, a.keywords, frame, call);
    if (!m.is(Kind::Unknown))
      return m;
    // A torch.nn layer devlint has no shapes for may hold parameters: never a silent 0 bytes.
    if ((name == "nn." + std::string(leaf) || name == "torch.nn." + std::string(leaf)) && call)
      report(frame, call->range,
             "`" + text_of(frame.file, call->range) + "`: " +
                 (tree_ ? "torch.nn." + std::string(leaf) + " is a layer devlint cannot size"
                        : std::string("a module built outside the model is not evaluated")));
    return Value::unknown("class `" + std::string(name) + "` is not in the package");
  }
  return Value::unknown("`" + std::string(name) + "(...)`");
}

// The order CPython's set walks ints in: each hashes to itself (-1 to -2), is placed by its hash
// in a table of 8 slots (linear probes of 9, then perturbation), and the table grows to four
// times the elements once 3/5 full, re-placing them in table order (Objects/setobject.c).
static std::vector<int64_t> cpython_int_set_order(const std::vector<int64_t> &values) {
  std::vector<std::optional<int64_t>> table(8);
  size_t used = 0;
  auto place = [](std::vector<std::optional<int64_t>> &t, int64_t v) {
    size_t mask = t.size() - 1;
    uint64_t hash = static_cast<uint64_t>(v == -1 ? -2 : v);
    uint64_t perturb = hash;
    size_t i = hash & mask;
    while (true) {
      size_t probes = i + 9 <= mask ? 9 : 0;
      for (size_t k = 0; k <= probes; ++k)
        if (!t[i + k]) {
          t[i + k] = v;
          return;
        }
      perturb >>= 5;
      i = (i * 5 + 1 + perturb) & mask;
    }
  };
  for (int64_t v : values) {
    if (std::any_of(table.begin(), table.end(), [&](const auto &e) { return e && *e == v; }))
      continue;
    place(table, v);
    ++used;
    if (used * 5 >= (table.size() - 1) * 3) {
      size_t size = 8;
      while (size <= used * 4)
        size <<= 1;
      std::vector<std::optional<int64_t>> grown(size);
      for (const auto &e : table)
        if (e)
          place(grown, *e);
      table = std::move(grown);
    }
  }
  std::vector<int64_t> order;
  for (const auto &e : table)
    if (e)
      order.push_back(*e);
  return order;
}

// A set as the list its iteration walks. Strings hash by PYTHONHASHSEED, so their order differs
// from run to run: first appearance is the order of one such run (the same tensors, registered in
// another order). Ints (and bools) walk in CPython's order. Other elements stay unknown.
static Value unordered_set_of(const ValueList &items, std::string_view leaf);

// A set's elements in CPython's iteration order where it is known (ints, and strings kept in
// first-seen order as before); the value remembers it is a set for `==`.
Value set_of(const ValueList &items, std::string_view leaf) {
  Value v = unordered_set_of(items, leaf);
  v.is_set = v.is(Kind::List);
  return v;
}

static Value unordered_set_of(const ValueList &items, std::string_view leaf) {
  bool strings = true, ints = true;
  std::vector<int64_t> numbers;
  constexpr int64_t kHashedAsThemselves = (int64_t{1} << 61) - 2;
  for (const Value &v : items) {
    strings = strings && v.is(Kind::Str);
    ints = ints && (v.is(Kind::Int) || v.is(Kind::Bool)) && v.integer <= kHashedAsThemselves &&
           v.integer >= -kHashedAsThemselves;
    numbers.push_back(v.integer);
  }
  if (ints && !items.empty()) {
    ValueList ordered;
    for (int64_t n : cpython_int_set_order(numbers)) {
      auto first =
          std::find_if(items.begin(), items.end(), [&](const Value &v) { return v.integer == n; });
      ordered.push_back(*first); // {True, 1} keeps the first spelling, as Python does
    }
    return Value::list_of(std::move(ordered));
  }
  if (!strings)
    return Value::unknown(std::string(leaf) + "() of elements without a known order");
  ValueList unique;
  for (const Value &v : items)
    if (std::none_of(unique.begin(), unique.end(),
                     [&](const Value &u) { return u.text == v.text; }))
      unique.push_back(v);
  return Value::list_of(std::move(unique));
}

Value Evaluator::call_builtin(std::string_view leaf, Arguments a, Frame &frame, const Expr *call) {
  auto &p = a.positional;
  // What Python does with a dict, done with a JSON object of the configuration.
  if (p.size() == 1 && is_configuration_mapping(p[0]) &&
      (leaf == "len" || leaf == "list" || leaf == "sorted" || leaf == "dict" || leaf == "tuple" ||
       leaf == "set" || leaf == "frozenset"))
    p[0] = mapping_as_dict(p[0]);
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
  if (leaf == "next" && p.size() == 1 && p[0].is(Kind::Object) && p[0].object &&
      p[0].object->class_name == kCycleIterator) {
    const Value &items = p[0].object->attrs["items"];
    Value &position = p[0].object->attrs["position"];
    if (!items.is(Kind::List) || items.list->empty() || !position.is(Kind::Int))
      return Value::unknown("next() of an empty cycle");
    Value item = (*items.list)[static_cast<size_t>(position.integer) % items.list->size()];
    position = Value::integer_value(position.integer + 1);
    return item;
  }
  // next(iter(items)) / next(module.parameters()): the first item.
  if ((leaf == "next" || leaf == "iter") && p.size() == 1 && p[0].is(Kind::List) &&
      !p[0].list->empty())
    return leaf == "next" ? (*p[0].list)[0] : p[0];
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
  // float("inf"), float("-inf"), float("nan"), float("1e-5"): Python's spellings.
  if (leaf == "float" && p.size() == 1 && p[0].is(Kind::Str)) {
    std::string t = p[0].text;
    t.erase(0, t.find_first_not_of(" \t\n"));
    t.erase(t.find_last_not_of(" \t\n") + 1);
    std::string lower;
    for (char c : t)
      lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    bool negative = !lower.empty() && lower[0] == '-';
    std::string body = lower.substr(!lower.empty() && (lower[0] == '-' || lower[0] == '+'));
    if (body == "inf" || body == "infinity")
      return Value::real_value(negative ? -HUGE_VAL : HUGE_VAL);
    if (body == "nan")
      return Value::real_value(std::nan(""));
    char *end = nullptr;
    double d = std::strtod(t.c_str(), &end);
    if (!t.empty() && end == t.c_str() + t.size())
      return Value::real_value(d);
    return Value::unknown("float() of a string that is no number");
  }
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
  if ((leaf == "any" || leaf == "all") && p.size() == 1 && p[0].is(Kind::List)) {
    // any(): true at the first true element, false when all are known false; all() the reverse.
    bool decisive = leaf == "any", unknown = false;
    for (const Value &v : *p[0].list) {
      std::optional<bool> t = truthy(v);
      if (!t)
        unknown = true;
      else if (*t == decisive)
        return Value::boolean(decisive);
    }
    return unknown ? Value::unknown(std::string(leaf) + "() of unknown values")
                   : Value::boolean(!decisive);
  }
  if (leaf == "set" || leaf == "frozenset") {
    if (p.empty())
      return set_of({}, leaf);
    Value items = p[0].is(Kind::Dict) ? call_builtin("list", a, frame, call) : p[0];
    if (!items.is(Kind::List))
      return Value::unknown(std::string(leaf) + "()");
    return set_of(*items.list, leaf);
  }
  if (leaf == "dict") {
    ValueDict items;
    if (!p.empty() && p[0].is(Kind::Dict))
      items = *p[0].dict;
    if (!p.empty() && p[0].is(Kind::List)) {
      Value built = dict_from_pairs(p[0]);
      if (!built.is(Kind::Dict))
        return built;
      items = *built.dict;
    }
    for (const auto &[k, v] : a.keywords)
      items.emplace_back(Value::str(k), v);
    return Value::dict_of(std::move(items));
  }
  if (leaf == "enumerate" && !p.empty() && p[0].is(Kind::Module)) { // a ModuleList's children
    ValueList children;
    for (const auto &[n, c] : p[0].module->children)
      children.push_back(Value::module_value(c));
    p[0] = Value::list_of(std::move(children));
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
      // A module the evaluated __init__ built from a package class against a package class
      // (`isinstance(self.encoder, SpeechT5EncoderWithTextPrenet)`): its class or a base of it.
      if (t.is(Kind::Class) && t.class_def && v.is(Kind::Module) && v.module) {
        if (std::optional<ClassRef> own = node_class(v.module)) {
          if (derives_from(own->def, t.class_def->name, 0))
            return Value::boolean(true);
          continue;
        }
        return Value::unknown("isinstance of a module of an unknown class");
      }
      // A sub-configuration read back from config.json has lost its class: its model_type
      // names it (the class that to_dict wrote it from).
      if (t.is(Kind::Class) && t.class_def && v.is(Kind::Object) && v.object &&
          !v.object->class_def) {
        Value mine = get_attr(v, "model_type", frame);
        Value theirs = class_attribute(ClassRef{t.class_def, t.file}, "model_type");
        if (mine.is(Kind::Str) && theirs.is(Kind::Str) && mine.text == theirs.text)
          return Value::boolean(true);
        if (mine.is(Kind::Str) && theirs.is(Kind::Str))
          continue;
        return Value::unknown("isinstance of a configuration without model_type");
      }
      if (!t.is(Kind::Namespace))
        return Value::unknown("isinstance");
      std::string_view tn = leaf_name(t.text);
      // A module against a torch.nn class: a torch layer is its own class; a package class is
      // the torch layer it derives from, else a plain nn.Module. torch's private bases
      // (_BatchNorm, _ConvNd) are not modelled.
      if (v.is(Kind::Module) && (starts_with(t.text, "nn.") || starts_with(t.text, "torch.nn."))) {
        if (tn == "Module")
          return Value::boolean(true);
        if (starts_with(tn, "_"))
          return Value::unknown("isinstance of a torch base class");
        std::optional<ClassRef> own = node_class(v.module);
        std::string layer = own ? builtin_layer_base(*own) : v.module->class_name;
        if (layer == tn)
          return Value::boolean(true);
        continue;
      }
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
      bool builtin_type = tn == "int" || tn == "float" || tn == "str" || tn == "bool" ||
                          tn == "list" || tn == "tuple" || tn == "dict" || tn == "Mapping" ||
                          tn == "set" || tn == "Number" || tn == "Integral" || iterable;
      // A configuration object (a PretrainedConfig) is none of Python's builtin types; a JSON
      // object of the configuration is a dict unless it is a sub-configuration, which to_dict
      // writes with its model_type.
      if (builtin_type && v.is(Kind::Object) && v.object && v.object->class_def) {
        std::optional<ClassRef> cls = find_class(v.object->class_def->name);
        if (cls && is_transformers_config(*cls))
          continue;
      }
      if (builtin_type && v.is(Kind::Object) && v.object && v.object->class_name == kCycleIterator)
        continue; // an iterator is none of them
      if ((tn == "dict" || tn == "Mapping") && is_configuration_mapping(v)) {
        if (!v.object->attrs.count("model_type"))
          return Value::boolean(true);
        continue;
      }
      // A tensor is a torch.Tensor, never a Python number or container nor a numpy array
      // (`if isinstance(pos, np.ndarray): pos = torch.from_numpy(pos)` after `torch.arange`).
      if (v.is(Kind::Tensor) && (t.text == "torch.Tensor" || t.text == "Tensor"))
        return Value::boolean(true);
      if (v.is(Kind::Tensor) &&
          (builtin_type || starts_with(t.text, "np.") || starts_with(t.text, "numpy.")))
        continue;
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
      return v.is(Kind::Unknown) && !missing ? Value::unknown("hasattr") : Value::boolean(!missing);
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

} // namespace devlint::simulation
