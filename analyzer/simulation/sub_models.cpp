// Composite models: sub-models built from a sub-configuration (`AutoModel.from_config(
// config.vision_config)`, `VisionModel._from_config(config.vision_config)`), and sub-configurations
// looked up by model_type (`CONFIG_MAPPING["llama"](**text_config)`). What the package does not
// define is never guessed: a configuration of another model keeps only the values it was given,
// and a sub-model whose class the package lacks is listed as not built (docs/DEVICE_MODEL.md,
// "Composite models").
#include "simulation/evaluator.h"

namespace devlint::simulation {

namespace {

// Keyword arguments that loading consumes before `cls(config, **kwargs)`
// (PreTrainedModel._from_config pops torch_dtype; the auto classes take trust_remote_code).
bool consumed_by_loading(std::string_view keyword) {
  return keyword == "torch_dtype" || keyword == "dtype" || keyword == "attn_implementation" ||
         keyword == "trust_remote_code";
}

} // namespace

// transformers builds `X.from_config(config, **kwargs)` / `X._from_config(config, **kwargs)` as
// `X(config, **kwargs)` (modeling_utils.py, PreTrainedModel._from_config); an auto class first
// picks X by the configuration's class (auto_factory.py, _BaseAutoModelClass.from_config:
// `_get_model_class(config, cls._model_mapping)`). Nullopt when the call is not one of these (a
// package class's own `from_config` runs as written).
std::optional<Value> Evaluator::eval_from_config(const Expr *call, Frame &frame) {
  const Expr *callee = call->operands[0];
  if (callee->kind != ExprKind::Attribute || callee->operands.empty() ||
      (callee->text != "from_config" && callee->text != "_from_config"))
    return std::nullopt;
  Value owner = eval(callee->operands[0], frame);
  // AutoModel*, and the tree's other auto classes with a model mapping (AutoBackbone, whose
  // _BaseAutoBackboneClass builds from a configuration as _BaseAutoModelClass does).
  bool auto_class = owner.is(Kind::Namespace) &&
                    (starts_with(leaf_name(owner.text), "AutoModel") ||
                     (auto_classes_ &&
                      auto_classes_->by_auto_class.count(std::string(leaf_name(owner.text))) != 0));
  if (owner.is(Kind::Class)) {
    ClassRef cls{owner.class_def, owner.file};
    if (!class_is_module(cls) ||
        class_member(cls, std::string(callee->text), Value::none()).is(Kind::Function))
      return std::nullopt;
  } else if (!auto_class) {
    return std::nullopt;
  }
  Arguments args = eval_arguments(call, frame);
  const Value *given = keyword_or(args, "config", 0);
  Value config = given ? *given : Value::unknown("no configuration given");
  std::vector<std::pair<std::string, Value>> kwargs;
  for (auto &[k, v] : args.keywords)
    if (k != "config" && !consumed_by_loading(k))
      kwargs.emplace_back(k, v);
  std::optional<ClassRef> cls;
  std::string why;
  if (auto_class)
    cls = auto_model_class(leaf_name(owner.text), config, why);
  else
    cls = ClassRef{owner.class_def, owner.file};
  if (!cls) {
    std::string expression = "`" + text_of(frame.file, call->range) + "`";
    report(frame, call->range,
           (assignment_target_.empty() ? "sub-model " : "sub-model `" + assignment_target_ + "` ") +
               expression + " not built: " + why);
    Value unbuilt = Value::unknown("sub-model " + expression + " not built");
    unbuilt.unbuilt_module = true;
    return unbuilt;
  }
  return instantiate_module(*cls, {config}, std::move(kwargs), frame, frame.module_path);
}

// The package's class that `AutoModel` (the base model) or `AutoModelForX` (a class named
// ...ForX) builds for `config`: a PreTrainedModel whose `config_class` is the configuration's
// class, as transformers' model mappings pair them. Nullopt, with `why`, when there is none or
// several.
std::optional<ClassRef> Evaluator::auto_model_class(std::string_view auto_class,
                                                    const Value &config, std::string &why) {
  if (!config.is(Kind::Object)) {
    why = "its configuration is unknown" + (config.text.empty() ? "" : " (" + config.text + ")");
    return std::nullopt;
  }
  Value model_type = get_attr(config, "model_type", Frame());
  std::string described = model_type.is(Kind::Str) ? "model_type `" + model_type.text + "`"
                          : config.object->class_name.empty()
                              ? std::string("a configuration without model_type")
                              : config.object->class_name;
  // A sub-configuration read back from config.values has lost its class: its model_type names it.
  const ClassDef *config_class_def = config.object->class_def;
  if (!config_class_def && model_type.is(Kind::Str)) {
    Value named = configuration_class(model_type.text);
    config_class_def = named.is(Kind::Class) ? named.class_def : nullptr;
  }
  if (!config_class_def) {
    why = "the package has no model class for " + described;
    return std::nullopt;
  }
  // The tree's own mapping decides where it names the class (CLIPVisionModel, not
  // CLIPVisionModelWithProjection, for clip_vision_model).
  if (auto_classes_ && model_type.is(Kind::Str))
    if (const std::string *name = auto_classes_->find(std::string(auto_class), model_type.text))
      if (std::optional<ClassRef> ref = find_class(*name))
        return ref;
  if (!starts_with(auto_class, "AutoModel")) {
    why = "the tree's mapping of " + std::string(auto_class) + " has no class for " + described;
    return std::nullopt;
  }
  std::string_view suffix = auto_class.substr(std::string_view("AutoModel").size());
  std::vector<ClassRef> found;
  std::string names;
  for (const auto &model : package_.classes) {
    std::string_view name = model->name;
    if (!model->is_module || !model->is_pretrained_model || !model->find_method("__init__"))
      continue;
    if (suffix.empty() ? name.find("For") != std::string_view::npos : !ends_with(name, suffix))
      continue;
    std::optional<ClassRef> ref = find_class(name);
    if (!ref)
      continue;
    const ClassDef *declared = nullptr;
    if (std::optional<ClassRef> named = find_class(declared_config_class(*model)))
      declared = named->def;
    if (!declared) {
      Value config_class = class_attribute(*ref, "config_class");
      declared = config_class.is(Kind::Class) ? config_class.class_def : nullptr;
    }
    if (declared != config_class_def)
      continue;
    found.push_back(*ref);
    names += (names.empty() ? "`" : ", `") + std::string(name) + "`";
  }
  if (found.size() == 1)
    return found[0];
  why = found.empty()
            ? "no class of the package has `config_class = " + std::string(config_class_def->name) +
                  "`" + (suffix.empty() ? "" : " and a name ending in " + std::string(suffix))
            : "several classes fit (" + names + ")";
  return std::nullopt;
}

// CONFIG_MAPPING[model_type]: the package's configuration class with that `model_type`, else a
// stand-in for another model's class (configuration_of_other_model).
Value Evaluator::configuration_class(const std::string &model_type) {
  std::vector<std::string> names;
  for (const auto &[name, cls] : classes_)
    names.push_back(name);
  std::sort(names.begin(), names.end()); // one answer however the index is ordered
  for (const std::string &name : names) {
    const ClassRef &cls = classes_.at(name);
    if (!is_transformers_config(cls))
      continue;
    Value declared = class_attribute(cls, "model_type");
    if (declared.is(Kind::Str) && declared.text == model_type) {
      Value v;
      v.kind = Kind::Class;
      v.class_def = cls.def;
      v.file = cls.file;
      return v;
    }
  }
  return Value::ns(std::string(kOtherModelConfiguration) + model_type);
}

// Another model's configuration class called with keyword arguments: PretrainedConfig's own
// attributes and the arguments, which its `__init__` stores (config.json holds them as
// `to_dict()` wrote them); every other attribute of that class stays unknown, never a guess.
Value Evaluator::configuration_of_other_model(const std::string &model_type, const Arguments &a) {
  Value config;
  config.kind = Kind::Object;
  config.object = std::make_shared<ObjectData>();
  config.object->class_name = "the configuration of model_type `" + model_type + "`";
  add_pretrained_config_defaults(config.object->attrs);
  for (const auto &[k, v] : a.keywords)
    config.object->attrs[k] = v;
  config.object->attrs["model_type"] = Value::str(model_type);
  return config;
}

} // namespace devlint::simulation
