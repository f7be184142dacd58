// Methods called on values: lists, dicts, strings, objects, modules and tensors.
#include "simulation/evaluator.h"

namespace devlint::simulation {

Value Evaluator::call_method(const Value &self, const std::string &name, Arguments a, Frame &frame,
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
    if ((name == "strip" || name == "lstrip" || name == "rstrip") &&
        (p.empty() || (p.size() == 1 && (p[0].is(Kind::Str) || p[0].is(Kind::None))))) {
      // `[x.strip() for x in config.norm_rel_ebd.split("|")]`
      const std::string chars = p.empty() || p[0].is(Kind::None) ? " \t\n\r\f\v" : p[0].text;
      size_t begin = name == "rstrip" ? 0 : self.text.find_first_not_of(chars);
      if (begin == std::string::npos)
        return Value::str("");
      size_t end = name == "lstrip" ? self.text.size() : self.text.find_last_not_of(chars) + 1;
      return Value::str(self.text.substr(begin, end - begin));
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
    if (std::optional<Value> reshaped = tensor_method_shape(self, name, a))
      return *reshaped;
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
    // A 1-D tensor of known length: split(sizes) or split(n) gives 1-D pieces of those lengths
    // (torch.linspace(0, rate, sum(depths)).split(depths)); tolist() its elements, unknown.
    if (self.dims.size() == 1 && self.dims[0] >= 0 &&
        static_cast<size_t>(self.dims[0]) <= kMaxLoop) {
      int64_t length = self.dims[0];
      std::vector<int64_t> pieces;
      if (name == "split" && p.size() == 1 && p[0].is(Kind::List)) {
        int64_t total = 0;
        for (const Value &v : *p[0].list) {
          if (!v.is(Kind::Int) || v.integer < 0 || v.integer > length)
            return Value::unknown("tensor.split of unknown sizes");
          pieces.push_back(v.integer);
          total += v.integer;
        }
        if (total != length) // torch raises: the sizes must add up to the length
          return Value::unknown("tensor.split sizes that do not add up to its length");
      } else if (name == "split" && p.size() == 1 && p[0].is(Kind::Int) && p[0].integer > 0) {
        for (int64_t start = 0; start < length; start += p[0].integer)
          pieces.push_back(std::min(p[0].integer, length - start));
      }
      if (name == "split" && p.size() == 1 && (p[0].is(Kind::List) || p[0].is(Kind::Int))) {
        ValueList items;
        for (int64_t n : pieces) {
          Value piece = tensor_like(self, n);
          piece.dims = {n};
          items.push_back(piece);
        }
        return Value::list_of(std::move(items));
      }
      if (name == "tolist" && p.empty() && self.list &&
          self.list->size() == static_cast<size_t>(length))
        return Value::list_of(*self.list);
      if (name == "tolist" && p.empty())
        return Value::list_of(
            ValueList(static_cast<size_t>(length), Value::unknown("an element of a tensor")));
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
        probe.dims = t.dims;
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
    // nn.Module's iterators: children() and named_children() (name, module), modules() (itself
    // first, then every descendant once, depth first), parameters()/named_parameters() and
    // buffers()/named_buffers() (recursive, a shared tensor once). What they yield is read back.
    if ((name == "children" || name == "named_children" || name == "modules" ||
         name == "named_modules") &&
        p.empty() && a.keywords.empty()) {
      bool named = name.rfind("named_", 0) == 0;
      ValueList items;
      auto add = [&](const std::string &path, ModuleNode *m) {
        Value v = Value::module_value(m);
        items.push_back(named ? Value::list_of({Value::str(path), v}) : v);
      };
      if (name == "children" || name == "named_children") {
        for (const auto &[n, c] : node.children)
          add(n, c);
      } else {
        std::vector<const ModuleNode *> seen;
        std::function<void(ModuleNode *, const std::string &, int)> walk =
            [&](ModuleNode *m, const std::string &path, int depth) {
              if (depth > 64 || std::find(seen.begin(), seen.end(), m) != seen.end())
                return;
              seen.push_back(m);
              add(path, m);
              for (const auto &[n, c] : m->children)
                walk(c, path.empty() ? n : path + "." + n, depth + 1);
            };
        walk(&node, "", 0);
      }
      return Value::list_of(std::move(items));
    }
    if ((name == "parameters" || name == "named_parameters" || name == "buffers" ||
         name == "named_buffers") &&
        p.empty() && a.keywords.empty()) {
      bool named = name.rfind("named_", 0) == 0;
      bool buffers = name.find("buffers") != std::string::npos;
      ModuleTree view;
      view.root = &node;
      ValueList items;
      std::unordered_set<int> seen;
      for (const NamedTensor &t : named_tensors(view, false)) {
        if (t.tensor->is_buffer != buffers || !seen.insert(t.tensor->storage).second)
          continue;
        Value v;
        v.kind = Kind::Tensor;
        v.numel = t.tensor->numel;
        v.dims = t.tensor->dims;
        v.integer_dtype = t.tensor->integer_dtype;
        v.element_bytes = t.tensor->element_bytes;
        v.is_parameter = !buffers;
        v.source_tensor = t.tensor;
        items.push_back(named ? Value::list_of({Value::str(t.name), v}) : v);
      }
      return Value::list_of(std::move(items));
    }
    static const std::unordered_set<std::string> ignored = {
        "post_init",
        "init_weights",
        "gradient_checkpointing_enable",
        "tie_weights",
        "reset_parameters",
        "_init_weights",
        "_backward_compatibility_gradient_checkpointing"};
    if (ignored.count(name))
      return Value::none();
    // nn.Module's methods that change the module in place return it
    // (`AutoModel.from_config(c).eval()`, `layer.requires_grad_(False)`); dtypes and devices
    // do not change its element counts.
    static const std::unordered_set<std::string> returns_self = {
        "apply", "requires_grad_", "train", "eval",   "to",       "cuda",
        "cpu",   "float",          "half",  "double", "bfloat16", "share_memory"};
    if (returns_self.count(name))
      return self;
    break;
  }
  case Kind::Object:
    if (name == "__setattr__" && p.size() == 2) {
      if (!p[0].is(Kind::Str)) {
        // Which attribute changes is unknown: the configuration is, from here on.
        if (call && call->operands.size() > 1)
          report_unknown_value(frame, call->operands[1], p[0], "attribute name");
        return Value::none();
      }
      self.object->attrs[p[0].text] = p[1];
      return Value::none();
    }
    if (name == "to_dict" && p.empty()) {
      // PretrainedConfig.to_dict(): its attributes (a copy), sub-configurations as dicts, and
      // its class's model_type.
      Value out = mapping_as_dict(copied(self, true, 0));
      for (auto &[k, v] : *out.dict)
        if (is_configuration_mapping(v) || v.is(Kind::Object))
          v = call_method(v, "to_dict", {}, frame, call);
      if (self.object->class_def)
        if (std::optional<ClassRef> cls = find_class(self.object->class_def->name))
          if (Value type = class_attribute(*cls, "model_type"); type.is(Kind::Str))
            dict_set(out, Value::str("model_type"), type);
      return out;
    }
    // PretrainedConfig.get_text_config(decoder=None, encoder=None): the one sub-configuration
    // among `text_encoder` (encoder side) and `decoder`, `generator`, `text_config` (decoder
    // side) that is set, else the configuration itself (a flat encoder-decoder one asked for one
    // side is not modelled).
    if (name == "get_text_config" && p.empty()) {
      auto flag = [&](const char *key) -> std::optional<bool> {
        const Value *v = keyword_or(a, key, SIZE_MAX);
        if (!v || v->is(Kind::None))
          return std::nullopt;
        if (v->is(Kind::Bool))
          return v->integer != 0;
        return std::nullopt;
      };
      std::optional<bool> decoder = flag("decoder"), encoder = flag("encoder");
      bool both = decoder == encoder;
      std::vector<const char *> names;
      if (both || !decoder.value_or(false))
        names.push_back("text_encoder");
      if (both || decoder.value_or(false))
        for (const char *n : {"decoder", "generator", "text_config"})
          names.push_back(n);
      std::vector<Value> found;
      for (const char *n : names) {
        Value v = get_attr(self, n, frame);
        if (v.is(Kind::Unknown) && v.text.rfind("the configuration has no", 0) != 0)
          return Value::unknown("get_text_config() with `" + std::string(n) + "` unknown");
        if (!v.is(Kind::Unknown) && !v.is(Kind::None))
          found.push_back(v);
      }
      if (found.size() > 1)
        return Value::unknown("get_text_config() of several text configurations");
      if (found.size() == 1)
        return found[0];
      if (!both) {
        Value encoder_decoder = get_attr(self, "is_encoder_decoder", frame);
        if (!encoder_decoder.is(Kind::Bool) || encoder_decoder.integer != 0)
          return Value::unknown("get_text_config() of one side of a flat configuration");
      }
      return self;
    }
    // RotaryEmbeddingConfigMixin.standardize_rope_params(), called by a configuration's own
    // __post_init__ (one with `rope_theta` / `rope_scaling` fields and no `rope_parameters`):
    // it makes `rope_parameters` there and then, before the model reads `rope_type` from it.
    if (name == "standardize_rope_params" && p.empty() && a.keywords.empty() &&
        self.object->class_def) {
      std::optional<ClassRef> cls = find_class(self.object->class_def->name);
      if (cls && is_transformers_config(*cls)) {
        std::map<std::string, Value> &attrs = self.object->attrs;
        bool had = attrs.count("rope_parameters") != 0;
        if (!had) // getattr(self, "rope_parameters", None)
          attrs["rope_parameters"] = Value::none();
        standardize_rope_params(attrs);
        if (!had && attrs["rope_parameters"].is(Kind::None)) // no RoPE parameters: none set
          attrs.erase("rope_parameters");
        return Value::none();
      }
    }
    if (is_configuration_mapping(self)) {
      // A dict's method on a JSON object of the configuration: run on its attributes, then
      // keep what the method changed (pop, setdefault, update).
      Value as_dict = mapping_as_dict(self);
      Value result = call_method(as_dict, name, std::move(a), frame, call);
      self.object->attrs.clear();
      for (const auto &[k, x] : *as_dict.dict)
        if (k.is(Kind::Str))
          self.object->attrs[k.text] = x;
      return result;
    }
    break;
  default:
    break;
  }
  return Value::unknown("`." + name + "(...)`");
}

} // namespace devlint::simulation
