// Configuration classes: PretrainedConfig's defaults, dataclass-style configurations
// (transformers 5: `hidden_size: int = 768` fields, `__post_init__`) and rope_parameters.
#include "simulation/evaluator.h"

namespace devlint::simulation {

// PretrainedConfig.__init__'s attributes that models read (transformers 4.47).
void add_pretrained_config_defaults(std::map<std::string, Value> &attrs, bool dataclass_style) {
  auto set = [&](const char *name, Value v) {
    if (!dataclass_style || std::string_view(name) != "tie_word_embeddings")
      attrs.emplace(name, std::move(v));
  };
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
  if (dataclass_style) {
    // transformers 5's PreTrainedConfig fields a subclass's __post_init__ reads before its own
    // super().__post_init__ (`if self.id2label is None:`, `config.dtype is not None`).
    set("transformers_version", Value::none());
    set("dtype", Value::none());
    set("id2label", Value::none());
    set("label2id", Value::none());
  }
  // from_pretrained picks an attention implementation; every variant shares the eager weights.
  set("_attn_implementation", Value::str("eager"));
}

// Whether class decorator `d` makes a dataclass: `@dataclass`, `@dataclass(...)`,
// `@dataclasses.dataclass`, or huggingface_hub's `@strict` / `@strict(...)`, which wraps
// dataclasses (transformers 5's configurations).
bool Evaluator::is_dataclass_decorator(const Expr *d) {
  if (d->kind == ExprKind::Call && !d->operands.empty())
    d = d->operands[0];
  if (d->kind != ExprKind::Name && d->kind != ExprKind::Attribute)
    return false;
  return d->text == "dataclass" || d->text == "strict";
}

bool Evaluator::is_dataclass(const ClassDef *c) {
  return std::any_of(c->decorators.begin(), c->decorators.end(), is_dataclass_decorator);
}

// The dataclass whose generated __init__ builds an instance of `cls`: up the first bases, the
// first class that is a dataclass, unless a class defines __init__ before it (a dataclass keeps
// an __init__ its class defines). Nullopt: an ordinary __init__ runs.
std::optional<ClassRef> Evaluator::generated_init_owner(const ClassRef &cls, int guard) {
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

// The fields of `cls` and the dataclasses among its bases, bases first, as dataclasses order
// them: each annotated class attribute of a dataclass (`hidden_size: int = 768`) but ClassVars;
// a subclass's field of the same name replaces the base's default in place.
void Evaluator::collect_fields(const ClassRef &cls, std::vector<DataclassField> &fields,
                               int guard) {
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
bool Evaluator::is_transformers_config(const ClassRef &cls) {
  return derives_from(cls.def, "PretrainedConfig", 0) ||
         derives_from(cls.def, "PreTrainedConfig", 0);
}

// The __init__ a dataclass generates (transformers 5's `@strict` configurations): each field
// from its argument, else its default; keyword arguments that are not fields stay attributes,
// as PreTrainedConfig's __post_init__ keeps them; then __post_init__ derives what it derives
// (`head_dim = hidden_size // num_attention_heads`).
void Evaluator::dataclass_init(const ClassRef &cls, const ClassRef &owner, const Value &self,
                               std::vector<Value> args,
                               std::vector<std::pair<std::string, Value>> kwargs,
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
  if (is_transformers_config(cls)) {
    add_pretrained_config_defaults(attrs, true);
    // A class attribute without annotation is no field, yet `getattr(config, ...)` reads it
    // (`tie_word_embeddings = True` in a @strict configuration's body).
    if (!attrs.count("tie_word_embeddings")) {
      Value tie = class_attribute(cls, "tie_word_embeddings");
      if (tie.is(Kind::Bool))
        attrs["tie_word_embeddings"] = tie;
    }
  }
  Value post_init = class_member(cls, "__post_init__", self);
  if (post_init.is(Kind::Function))
    call_function(post_init, {}, rest, caller, caller.module_path);
  if (is_transformers_config(cls)) {
    standardize_rope_parameters(cls, self, rest, caller);
    label_maps_from_num_labels(attrs);
  }
}

// PreTrainedConfig.__post_init__ (5.x): without an `id2label`, `self.num_labels = ...` runs the
// num_labels setter, which makes `id2label = {i: f"LABEL_{i}"}` and `label2id` its inverse.
void Evaluator::label_maps_from_num_labels(std::map<std::string, Value> &attrs) {
  auto id2label = attrs.find("id2label");
  auto num_labels = attrs.find("num_labels");
  if (id2label == attrs.end() || !id2label->second.is(Kind::None) || num_labels == attrs.end() ||
      !num_labels->second.is(Kind::Int) || num_labels->second.integer < 0 ||
      num_labels->second.integer > static_cast<int64_t>(kMaxLoop))
    return;
  ValueDict ids, labels;
  for (int64_t i = 0; i < num_labels->second.integer; ++i) {
    Value label = Value::str("LABEL_" + std::to_string(i));
    ids.emplace_back(Value::integer_value(i), label);
    labels.emplace_back(label, Value::integer_value(i));
  }
  id2label->second = Value::dict_of(std::move(ids));
  attrs["label2id"] = Value::dict_of(std::move(labels));
}

namespace {
// A value JSON holds as it is: None, a bool, a number, a string, or a list of those.
bool plain_value(const Value &v, int depth = 0) {
  if (v.is(Kind::List))
    return depth < 4 && std::all_of(v.list->begin(), v.list->end(),
                                    [&](const Value &x) { return plain_value(x, depth + 1); });
  return v.is(Kind::None) || v.is(Kind::Bool) || v.is(Kind::Int) || v.is(Kind::Float) ||
         v.is(Kind::Str);
}
} // namespace

void Evaluator::keep_configuration_attributes(const Value &object, int depth) {
  if (depth > 8 || !object.is(Kind::Object) || !object.object->class_def)
    return;

  std::optional<ClassRef> most_derived = find_class(object.object->class_def->name);
  std::map<std::string, Value> &attrs = object.object->attrs;
  std::optional<ClassRef> cls = most_derived;
  for (int guard = 0; cls && guard < 16; ++guard) {
    // `attention_bias = False` in a @strict class's body is no field, yet the model reads it.
    // The root configuration keeps its class (build_module_tree): its class attributes stay
    // class attributes, as config.values shows the instance's own.
    for (const Stmt *st : cls->def->body) {
      if (depth == 0 || st->kind != StmtKind::Assign || st->targets.size() != 1 ||
          st->targets[0]->kind != ExprKind::Name)
        continue;
      std::string name(st->targets[0]->text);
      if (attrs.count(name))
        continue;
      Value v = class_attribute(*most_derived, name);
      if (plain_value(v))
        attrs[name] = v;
    }
    // RecurrentGemma's `layers_block_type`, computed from `block_types`.
    for (const FunctionDef *m : cls->def->methods) {
      std::string property(m->name);
      if (!m->is_property || attrs.count(property))
        continue;
      Value v = attribute(object, property);
      if (!v.is(Kind::Unknown))
        attrs[property] = v;
    }
    std::optional<ClassRef> base;
    for (auto &[b, dotted] : bases_of(*cls))
      if (b) {
        base = b;
        break;
      }
    cls = base;
  }
  if (most_derived) {
    Value map = class_attribute(*most_derived, "attribute_map");
    if (map.is(Kind::Dict))
      for (const auto &[alias, real] : *map.dict)
        if (alias.is(Kind::Str) && real.is(Kind::Str) && attrs.count(real.text))
          attrs[alias.text] = attrs[real.text];
  }
  for (auto &[name, v] : attrs)
    keep_configuration_attributes(v, depth + 1);
}

// What transformers 5's PreTrainedConfig.__post_init__ makes of a `rope_parameters` field: it
// calls `self.convert_rope_params_to_dict(**kwargs)`, the configuration's own (Gemma3's builds a
// dict per layer type) or RotaryEmbeddingConfigMixin's (`rope_scaling` if given, else the field,
// else {}, with `rope_theta` from the keyword, the attribute, else the class's `default_theta`,
// and `partial_rotary_factor` likewise); both end in standardize_rope_params (below).
void Evaluator::standardize_rope_parameters(
    const ClassRef &cls, const Value &self,
    const std::vector<std::pair<std::string, Value>> &kwargs, const Frame &caller) {
  std::map<std::string, Value> &attrs = self.object->attrs;
  if (!attrs.count("rope_parameters"))
    return;
  Value own = class_member(cls, "convert_rope_params_to_dict", self);
  if (own.is(Kind::Function)) {
    call_function(own, {}, kwargs, caller, caller.module_path);
    standardize_rope_params(attrs);
    return;
  }
  auto keyword = [&](const std::string &name) -> std::optional<Value> {
    for (const auto &kw : kwargs)
      if (kw.first == name)
        return kw.second;
    return std::nullopt;
  };
  Value params = attrs["rope_parameters"];
  if (std::optional<Value> scaling = keyword("rope_scaling"); scaling && scaling->is(Kind::Dict))
    params = *scaling;
  if (params.is(Kind::None))
    params = Value::dict_of({});
  if (!params.is(Kind::Dict))
    return;
  auto set_default = [&](const char *key, const Value &v) {
    for (const auto &entry : *params.dict)
      if (entry.first.is(Kind::Str) && entry.first.text == key)
        return;
    dict_set(params, Value::str(key), v);
  };
  std::optional<Value> theta = keyword("rope_theta");
  if (!theta && attrs.count("rope_theta"))
    theta = attrs["rope_theta"];
  if (!theta)
    theta = class_member(cls, "default_theta", Value::none());
  set_default("rope_theta", *theta);
  std::optional<Value> partial = keyword("partial_rotary_factor");
  if (!partial && attrs.count("partial_rotary_factor"))
    partial = attrs["partial_rotary_factor"];
  if (partial && !partial->is(Kind::None))
    set_default("partial_rotary_factor", *partial);
  attrs["rope_parameters"] = params;
  standardize_rope_params(attrs);
}

// RotaryEmbeddingConfigMixin.standardize_rope_params (modeling_rope_utils.py, 5.x): keys that
// are not all layer types make one dict, with `rope_type` ("type", else "default"), `rope_theta`
// (the attribute) and `partial_rotary_factor` (the attribute, when set); keys that are layer
// types make one such dict per layer type. llama3, yarn and longrope keep the pretraining length
// (`original_max_position_embeddings`, else `max_position_embeddings`).
void Evaluator::standardize_rope_params(std::map<std::string, Value> &attrs) {
  Value params = attrs["rope_parameters"];
  if (params.is(Kind::None) || (params.is(Kind::Dict) && params.dict->empty()))
    params = Value::dict_of({});
  if (!params.is(Kind::Dict))
    return;
  auto attribute = [&](const char *name) {
    auto it = attrs.find(name);
    return it == attrs.end() ? Value::none() : it->second;
  };
  Value theta = attribute("rope_theta"), partial = attribute("partial_rotary_factor");
  auto lookup = [](const Value &dict, const char *key) -> std::optional<Value> {
    for (const auto &entry : *dict.dict)
      if (entry.first.is(Kind::Str) && entry.first.text == key)
        return entry.second;
    return std::nullopt;
  };
  auto standardize = [&](const Value &dict, bool per_layer_type) {
    auto set_default = [&](const char *key, const Value &v) {
      if (!lookup(dict, key))
        dict_set(dict, Value::str(key), v);
    };
    std::optional<Value> type = lookup(dict, "type");
    set_default("rope_type", type ? *type : Value::str("default"));
    set_default("rope_theta", theta);
    if (!partial.is(Kind::None))
      dict_set(dict, Value::str("partial_rotary_factor"), partial);
    std::optional<Value> rope_type = lookup(dict, "rope_type");
    if (rope_type && rope_type->is(Kind::Str) &&
        (rope_type->text == "llama3" || rope_type->text == "yarn" ||
         rope_type->text == "longrope")) {
      auto original = attrs.find("original_max_position_embeddings");
      if (!per_layer_type && original != attrs.end())
        dict_set(dict, Value::str("original_max_position_embeddings"), original->second);
      else
        set_default("original_max_position_embeddings", attribute("max_position_embeddings"));
    }
  };
  bool anything = !params.dict->empty() || !theta.is(Kind::None);
  if (!anything) // "no RoPE parameters were found": nothing changes
    return;
  auto layer_types = attrs.find("layer_types");
  bool per_layer_type =
      layer_types != attrs.end() && layer_types->second.is(Kind::List) && !params.dict->empty() &&
      std::all_of(params.dict->begin(), params.dict->end(), [&](const auto &entry) {
        return std::any_of(layer_types->second.list->begin(), layer_types->second.list->end(),
                           [&](const Value &t) {
                             return t.is(Kind::Str) && entry.first.is(Kind::Str) &&
                                    t.text == entry.first.text;
                           });
      });
  if (!per_layer_type) {
    standardize(params, false);
  } else {
    for (const auto &entry : *params.dict)
      if (entry.second.is(Kind::Dict))
        standardize(entry.second, true);
  }
  attrs["rope_parameters"] = params;
}

} // namespace devlint::simulation
