// Building the module tree: torch layers with their parameter shapes, containers, parameters
// and buffers registered on a module, module attributes read back.
#include "simulation/evaluator.h"

namespace devlint::simulation {

bool Evaluator::ends_with_str(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

std::function<LayerArgument(size_t, std::string_view)>
Evaluator::layer_args(const std::vector<Value> &args,
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
      a.why = v->text;
      break;
    default:
      a.kind = LayerArgument::Kind::Other;
    }
    return a;
  };
}

void Evaluator::add_layer_tensors(ModuleNode &node, const LayerShape &shape, const Frame &caller,
                                  std::string_view leaf) {
  if (!shape.unknown.empty())
    report(caller, SourceRange{}, std::string(leaf) + ": " + shape.unknown + " unknown");
  for (const LayerTensor &t : shape.tensors) {
    TreeTensor tt;
    tt.name = t.name;
    // A layer's own child (MultiheadAttention's out_proj): its tensors sit on a child node.
    ModuleNode *owner = &node;
    if (size_t dot = t.name.find('.'); dot != std::string::npos) {
      std::string child = t.name.substr(0, dot);
      owner = node.child(child);
      if (!owner) {
        owner = &tree_->nodes.emplace_back();
        owner->class_name = "Linear";
        node.children.emplace_back(child, owner);
      }
      tt.name = t.name.substr(dot + 1);
    }
    tt.numel = t.numel;
    tt.is_buffer = t.is_buffer;
    tt.integer_dtype = t.integer_dtype;
    tt.element_bytes = t.element_bytes;
    tt.dims = t.dims;
    tt.storage = next_storage_++;
    (t.is_buffer ? owner->buffers : owner->parameters).push_back(tt);
  }
}

// transformers' ACT2FN[name] / get_activation(name): of ACT2CLS's classes only nn.PReLU and
// XIELUActivation hold tensors; the rest are parameterless.
Value Evaluator::activation_module(const Value &name, const Frame &caller) {
  if (!tree_)
    return Value::unknown("");
  ModuleNode &node = tree_->nodes.emplace_back();
  node.class_name = "Activation";
  std::string_view layer = !name.is(Kind::Str)    ? ""
                           : name.text == "prelu" ? "PReLU"
                           : name.text == "xielu" ? "XIELUActivation"
                                                  : "";
  if (!layer.empty()) {
    node.class_name = std::string(layer);
    auto defaults = [](size_t, std::string_view) {
      return LayerArgument{LayerArgument::Kind::Missing, 0, 0, {}};
    };
    add_layer_tensors(node, torch_layer_shape(layer, defaults), caller, layer);
  }
  return Value::module_value(&node);
}

// The int arguments a torch.nn layer keeps as attributes unchanged (`self.in_features =
// in_features` in Linear.__init__): `self.embed.num_embeddings`, `conv.out_channels`. Those torch
// normalizes (kernel_size to a tuple, a negative padding_idx) are not kept.
void Evaluator::keep_layer_attributes(ModuleNode &node, std::string_view leaf,
                                      const std::vector<Value> &args,
                                      const std::vector<std::pair<std::string, Value>> &kwargs) {
  static const std::vector<std::pair<std::string_view, std::vector<std::string_view>>> kKept = {
      {"Linear", {"in_features", "out_features"}},
      {"Bilinear", {"in1_features", "in2_features", "out_features"}},
      {"Embedding", {"num_embeddings", "embedding_dim"}},
      {"EmbeddingBag", {"num_embeddings", "embedding_dim"}},
      {"GroupNorm", {"num_groups", "num_channels"}},
      {"BatchNorm1d", {"num_features"}},
      {"BatchNorm2d", {"num_features"}},
      {"BatchNorm3d", {"num_features"}},
      {"Conv1d", {"in_channels", "out_channels"}},
      {"Conv2d", {"in_channels", "out_channels"}},
      {"Conv3d", {"in_channels", "out_channels"}},
      {"ConvTranspose1d", {"in_channels", "out_channels"}},
      {"ConvTranspose2d", {"in_channels", "out_channels"}},
      {"ConvTranspose3d", {"in_channels", "out_channels"}},
  };
  auto layer =
      std::find_if(kKept.begin(), kKept.end(), [&](const auto &e) { return e.first == leaf; });
  if (layer == kKept.end())
    return;
  auto &attrs = module_attrs_[&node];
  for (size_t position = 0; position < layer->second.size(); ++position) {
    std::string_view keyword = layer->second[position];
    const Value *v = position < args.size() ? &args[position] : nullptr;
    for (const auto &[k, kv] : kwargs)
      if (k == keyword)
        v = &kv;
    if (v && v->is(Kind::Int))
      attrs.emplace(std::string(keyword), *v);
  }
  // torch's _ConvNd keeps kernel_size, stride, padding and dilation as tuples of one int per
  // dimension (`self.conv.kernel_size[0]`), a padding string as given, and groups.
  if (leaf.rfind("Conv", 0) == 0 && leaf.size() >= 6 && leaf.back() == 'd') {
    size_t dims = static_cast<size_t>(leaf[leaf.size() - 2] - '0');
    bool transposed = leaf.rfind("ConvTranspose", 0) == 0;
    auto argument = [&](std::string_view keyword, size_t position) -> const Value * {
      for (const auto &[k, kv] : kwargs)
        if (k == keyword)
          return &kv;
      return position < args.size() ? &args[position] : nullptr;
    };
    auto keep_tuple = [&](std::string_view keyword, size_t position, int64_t fallback) {
      const Value *v = argument(keyword, position);
      Value given = v ? *v : Value::integer_value(fallback);
      if (given.is(Kind::Int)) {
        attrs.emplace(std::string(keyword), Value::list_of(ValueList(dims, given)));
      } else if (given.is(Kind::List) && given.list->size() == dims &&
                 std::all_of(given.list->begin(), given.list->end(),
                             [](const Value &x) { return x.is(Kind::Int); })) {
        attrs.emplace(std::string(keyword), given);
      } else if (given.is(Kind::Str) && keyword == "padding") {
        attrs.emplace(std::string(keyword), given);
      }
    };
    keep_tuple("kernel_size", 2, 0);
    if (argument("kernel_size", 2)) {
      keep_tuple("stride", 3, 1);
      keep_tuple("padding", 4, 0);
      keep_tuple("dilation", transposed ? 8 : 5, 1);
      if (const Value *groups = argument("groups", 6); !groups || groups->is(Kind::Int))
        attrs.emplace("groups", groups ? *groups : Value::integer_value(1));
    }
  }
}

Value Evaluator::builtin_module(std::string_view leaf, const std::vector<Value> &args,
                                const std::vector<std::pair<std::string, Value>> &kwargs,
                                const Frame &caller, const Expr *call) {
  // Evaluating a configuration or a device-map function builds no tree: a module there is unknown.
  if (!tree_)
    return Value::unknown("");
  // `down = nn.Module(); down.block = ...`: an empty container whose attributes become children.
  if (leaf == "Module" && args.empty() && kwargs.empty()) {
    ModuleNode &node = tree_->nodes.emplace_back();
    node.class_name = "Module";
    return Value::module_value(&node);
  }
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
      // nn.ModuleDict([(name, module), ...]): an iterable of pairs, as dict() takes.
      if (args[0].is(Kind::List) && leaf == "ModuleDict") {
        Value pairs = dict_from_pairs(args[0]);
        if (!pairs.is(Kind::Dict)) {
          report_unknown_value(caller, call, pairs, "ModuleDict contents");
          return Value::module_value(&node);
        }
        for (const auto &[k, v] : *pairs.dict)
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
  keep_layer_attributes(node, leaf, args, kwargs);
  return Value::module_value(&node);
}

void Evaluator::add_container_item(ModuleNode &node, const std::string &name, const Value &v,
                                   const Frame &caller, const Expr *call) {
  if (v.is(Kind::Module))
    node.children.emplace_back(name, v.module);
  else if (v.is(Kind::Tensor) && v.is_parameter)
    node.parameters.push_back(make_tensor(name, v, false, true));
  else if (v.is(Kind::Unknown))
    report_unknown_value(caller, call, v, "container element");
}

TreeTensor Evaluator::make_tensor(const std::string &name, const Value &v, bool buffer,
                                  bool persistent) {
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

// Weight normalization splits a parameter `name` into a magnitude g (1 everywhere but `dim`,
// where it keeps the weight's size; one element for dim=None or -1, which norm over the whole
// tensor) and a direction v of the weight's shape. torch.nn.utils.weight_norm replaces it with
// `name_g` and `name_v` on the module; nn.utils.parametrizations.weight_norm moves it to
// `parametrizations.<name>.original0` (g) and `original1` (v), and the module's class becomes
// `Parametrized<Class>` (what _no_split_modules names). Both return the module.
Value Evaluator::weight_norm(const Arguments &a, bool parametrized, const Frame &caller,
                             const Expr *call) {
  const Value *module = keyword_or(a, "module", 0);
  const Value *name = keyword_or(a, "name", 1);
  const Value *dim = keyword_or(a, "dim", 2);
  if (!module || !module->is(Kind::Module) || (name && !name->is(Kind::Str)) ||
      (dim && !dim->is(Kind::Int) && !dim->is(Kind::None))) {
    if (call)
      report(caller, call->range,
             "`" + text_of(caller.file, call->range) + "`: weight_norm of unknown arguments");
    return module ? *module : Value::unknown("weight_norm");
  }
  ModuleNode &node = *module->module;
  std::string tensor = name ? name->text : "weight";
  auto weight = std::find_if(node.parameters.begin(), node.parameters.end(),
                             [&](const TreeTensor &t) { return t.name == tensor; });
  if (weight == node.parameters.end()) {
    if (call)
      report(caller, call->range,
             "`" + text_of(caller.file, call->range) +
                 "`: weight_norm of a parameter devlint does not see");
    return *module;
  }
  TreeTensor v = *weight;
  TreeTensor g = v;
  g.storage = next_storage_++;
  int64_t axis = dim && dim->is(Kind::Int) ? dim->integer : dim ? -1 : 0;
  if (axis == -1) {
    g.numel = 1;
    g.dims.clear();
  } else if (axis >= 0 && static_cast<size_t>(axis) < v.dims.size()) {
    g.numel = v.dims[static_cast<size_t>(axis)];
    for (size_t i = 0; i < g.dims.size(); ++i)
      if (i != static_cast<size_t>(axis))
        g.dims[i] = 1;
  } else {
    g.numel = std::nullopt;
    g.dims.clear();
    if (call)
      report(caller, call->range,
             "`" + text_of(caller.file, call->range) +
                 "`: weight_norm over a dimension of unknown size");
  }
  node.parameters.erase(weight);
  if (!parametrized) {
    g.name = tensor + "_g";
    v.name = tensor + "_v";
    node.parameters.push_back(g);
    node.parameters.push_back(v);
    return *module;
  }
  g.name = "original0";
  v.name = "original1";
  if (node.class_name.rfind("Parametrized", 0) != 0)
    node.class_name = "Parametrized" + node.class_name;
  ModuleNode *dict = node.child("parametrizations");
  if (!dict) {
    dict = &tree_->nodes.emplace_back();
    dict->class_name = "ModuleDict";
    node.children.emplace_back("parametrizations", dict);
  }
  ModuleNode &list = tree_->nodes.emplace_back();
  list.class_name = "ParametrizationList";
  list.parameters = {g, v};
  ModuleNode &norm = tree_->nodes.emplace_back();
  norm.class_name = "_WeightNorm";
  list.children.emplace_back("0", &norm);
  dict->children.emplace_back(tensor, &list);
  return *module;
}

void Evaluator::set_module_attr(ModuleNode &node, const std::string &name, const Value &v) {
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
  if (v.is(Kind::Tensor) && v.is_buffer && buffer == node.buffers.end() &&
      param == node.parameters.end()) {
    node.buffers.push_back(make_tensor(name, v, true, v.buffer_persistent));
    attrs.erase(name);
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

void Evaluator::keep_plain_values() {
  auto scalar = [](const Value &v) {
    return v.is(Kind::None) || v.is(Kind::Bool) || v.is(Kind::Int) || v.is(Kind::Float) ||
           v.is(Kind::Str);
  };
  // Scalars, and short lists of them (a per-stage setting: `config.cls_token[stage]`).
  auto plain = [&](const Value &v) {
    return scalar(v) || (v.is(Kind::List) && v.list && v.list->size() <= 64 &&
                         std::all_of(v.list->begin(), v.list->end(), scalar));
  };
  std::unordered_map<const ObjectData *, std::shared_ptr<const nlohmann::json>> configurations;
  for (auto &[node, attrs] : module_attrs_) {
    ModuleNode *module = const_cast<ModuleNode *>(node);
    for (const auto &[name, value] : attrs) {
      if (plain(value)) {
        module->plain_values[name] = to_json(value, nullptr);
        continue;
      }
      if (name != "config" || !value.is(Kind::Object))
        continue;
      auto &shared = configurations[value.object.get()];
      if (!shared) {
        nlohmann::json values = nlohmann::json::object();
        for (const auto &[key, item] : value.object->attrs)
          if (plain(item))
            values[key] = to_json(item, nullptr);
        shared = std::make_shared<const nlohmann::json>(std::move(values));
      }
      module->configuration = shared;
    }
  }
}

Value Evaluator::get_module_attr(ModuleNode *node, const std::string &name) {
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
  if (member.is(Kind::Function) && member.function->is_property)
    return call_property(member);
  if (!member.is(Kind::Unknown))
    return member;
  Value missing = Value::unknown("`" + node->class_name + "` has no attribute `" + name + "` yet");
  missing.method_name = name;
  missing.bound_self = std::make_shared<Value>(Value::module_value(node));
  return missing;
}

} // namespace devlint::simulation
