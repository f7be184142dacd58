#include "simulation/simulated_model.h"

#include <algorithm>
#include <unordered_set>

namespace devlint {

namespace {

void add_unique(std::vector<std::string> &v, const std::string &s) {
  if (std::find(v.begin(), v.end(), s) == v.end())
    v.push_back(s);
}

// Every PreTrainedModel class of the package that from_pretrained could build, in file order.
std::vector<std::string> model_classes(const Package &package,
                                       const std::vector<const SyntaxFile *> &library_files) {
  std::vector<std::string> names;
  for (const auto &cls : package.classes)
    if (cls->is_module && cls->is_pretrained_model && cls->find_method("__init__") &&
        std::find(library_files.begin(), library_files.end(), cls->file) == library_files.end())
      add_unique(names, std::string(cls->name));
  return names;
}

// transformers' post_init gathers `_no_split_modules` from every PreTrainedModel child
// (modeling_utils.py, PreTrainedModel.post_init; _get_no_split_modules in 4.x walks them too): a
// sub-model of another package adds its model's list. Its model scope stands for that list.
void add_sub_model_no_split(SimulatedModel &setup) {
  std::unordered_set<const ModelScope *> seen{setup.root->scope};
  for (const auto &[path, node] : named_modules(setup.tree)) {
    if (!node->cls || !node->cls->is_pretrained_model || !node->cls->scope ||
        !seen.insert(node->cls->scope).second)
      continue;
    for (const std::string &c : node->cls->scope->no_split_modules)
      add_unique(setup.no_split_modules, c);
    if (node->cls->scope->refuses_string_maps)
      setup.supports_string_maps = false;
  }
}

bool json_names(const nlohmann::json &values, const char *key, const std::string &name) {
  if (!values.contains(key))
    return false;
  const nlohmann::json &v = values[key];
  auto matches = [&](const nlohmann::json &item) {
    if (!item.is_string())
      return false;
    std::string text = item.get<std::string>();
    return text == name ||
           (text.size() > name.size() &&
            text.compare(text.size() - name.size() - 1, std::string::npos, "." + name) == 0);
  };
  if (v.is_array())
    return std::any_of(v.begin(), v.end(), matches);
  if (v.is_object())
    return std::any_of(v.begin(), v.end(), matches);
  return false;
}

// Why choose_root_class picked `root` (its order: --model-class, auto_map, architectures, names).
std::string root_reason(const ModelConfig &config, const ModuleClass &root,
                        const ModelRequest &options) {
  std::string name(root.name);
  if (!options.model_class.empty())
    return "--model-class";
  if (json_names(config.values, "auto_map", name))
    return "the config's auto_map";
  if (json_names(config.values, "architectures", name))
    return "the config's architectures";
  return "no config names one: ...ForCausalLM first, then ...ForConditionalGeneration, then "
         "other ...For... PreTrainedModel classes";
}

} // namespace

void simulate_model(SimulatedModel &setup, const Package &package, const ModelInputs &inputs,
                    const ModelRequest &options) {
  const nlohmann::json *json = inputs.config_json;
  const std::string &json_path = inputs.config_json_path;
  const std::vector<const SyntaxFile *> &config_files = inputs.configuration_files;
  setup.config = build_model_config(package, config_files, "", json, inputs.auto_classes);
  if (json)
    setup.config.source =
        json_path + (setup.config.source == "config.json" ? "" : " (" + setup.config.source + ")");
  setup.root = choose_root_class(package, setup.config, options.model_class, inputs.library_files);
  std::vector<std::string> candidates = model_classes(package, inputs.library_files);
  if (!setup.root) {
    std::string listed;
    for (const std::string &c : candidates)
      listed += (listed.empty() ? "" : ", ") + c;
    setup.error = options.model_class.empty()
                      ? "no nn.Module class with an __init__ in the package"
                      : "no class `" + options.model_class + "` in the package" +
                            (listed.empty() ? "" : " (model classes: " + listed + ")");
    return;
  }
  setup.root_reason = root_reason(setup.config, *setup.root, options);
  for (const std::string &c : candidates)
    if (c != setup.root->name)
      setup.other_model_classes.push_back(c);
  // A directory with several models (data2vec's text, audio and vision) has several
  // configuration classes: the one the root names is what from_pretrained builds.
  std::string wanted = declared_config_class(*setup.root);
  if (!wanted.empty() && wanted != setup.config.class_name) {
    ModelConfig own = build_model_config(package, config_files, wanted, json, inputs.auto_classes);
    // Not the package's only configuration class either when the one the root names is not
    // read (StableDiffusionSafetyChecker's CLIPConfig beside a pipeline's LDMBertConfig): then
    // config.json alone, if any.
    if (own.class_name == wanted || !own.present || own.class_name.empty()) {
      if (json && own.present)
        own.source = json_path + (own.source == "config.json" ? "" : " (" + own.source + ")");
      setup.config = std::move(own);
    }
  }
  // diffusers' ModelMixin.from_pretrained builds `cls.from_config(config.json)`, which calls
  // `cls(**init_dict)` with the keys naming __init__'s parameters (ConfigMixin.extract_init_dict,
  // configuration_utils.py): the configuration of a `@register_to_config` __init__ is its
  // keyword arguments, their defaults where config.json has none.
  if (std::optional<std::vector<std::string>> parameters = registered_init_parameters(*setup.root);
      parameters && setup.config.class_name.empty()) {
    ModelConfig own;
    own.present = own.init_keywords = true;
    std::string init = std::string(setup.root->name) + ".__init__ (register_to_config)";
    if (json) {
      for (const std::string &key : *parameters)
        if (json->contains(key))
          own.values[key] = (*json)[key];
      own.source = json_path + " (keyword arguments of " + init + ")";
    } else {
      own.source = "defaults of " + init;
    }
    setup.config = std::move(own);
  }
  if (!options.dtype.empty() && options.dtype != "auto" && !dtype_bytes_from_name(options.dtype)) {
    setup.error = "unknown dtype `" + options.dtype + "` (bf16, fp16, fp32, int8, fp8)";
    return;
  }
  setup.tree = build_module_tree(package, *setup.root, setup.config, options.dtype, config_files,
                                 inputs.auto_classes);
  for (const std::string &u : setup.config.unknowns)
    setup.tree.unknowns.push_back({"", "configuration: " + u, ""});
  if (!setup.config.present)
    setup.tree.unknowns.push_back(
        {"", "no configuration: no config.json, and no PretrainedConfig subclass found", ""});
  if (setup.root->scope) {
    setup.no_split_modules = setup.root->scope->no_split_modules;
    setup.supports_string_maps = !setup.root->scope->refuses_string_maps;
    if (!inputs.library_files.empty())
      add_sub_model_no_split(setup);
  }
  for (const std::string &c : options.extra_no_split_modules)
    add_unique(setup.no_split_modules, c);
}

} // namespace devlint
