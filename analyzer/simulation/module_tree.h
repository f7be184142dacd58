// The module tree that a model's `__init__` builds for one configuration, with the shape of every
// parameter and buffer: what accelerate's `compute_module_sizes` and `infer_auto_device_map` see
// on a model created under `init_empty_weights()`. Built by evaluating `__init__` (and the
// configuration class's `__init__`) on the program model, never by running Python. What cannot be
// evaluated is recorded as an unknown, never guessed silently.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/module_model.h"

namespace devlint {

// A parameter or buffer of one module (its own, not its children's).
struct TreeTensor {
  std::string name;
  std::optional<int64_t> numel; // nullopt: the shape could not be evaluated
  bool is_buffer = false;
  bool persistent = true;     // buffers: in state_dict (register_buffer(..., persistent=False))
  bool integer_dtype = false; // int/bool tensors keep their own size under any dtype (accelerate)
  int element_bytes = 4;      // as created: float32, int64 (8), bool (1)
  std::vector<int64_t> dims;  // the shape, when known (`self.position_ids.size()` reads it)
  // Tensors with the same storage are one tensor under several names (tied weights).
  int storage = -1;
};

struct ModuleNode {
  std::string class_name;
  const ModuleClass *cls = nullptr; // null for torch built-ins (Linear, Embedding, ...)
  // torch's order: `_parameters`, `_modules`, `_buffers`, each in registration order.
  std::vector<TreeTensor> parameters;
  std::vector<std::pair<std::string, ModuleNode *>> children;
  std::vector<TreeTensor> buffers;
  // What the instance's `__init__` left in its plain attributes, for the branches its methods
  // test (`if self.rotary_value:`): None, bools, numbers and strings by name. Its `self.config`'s
  // such attributes are `configuration`, shared by the modules holding one configuration object.
  nlohmann::json plain_values;
  std::shared_ptr<const nlohmann::json> configuration;

  ModuleNode *child(const std::string &name) const {
    for (const auto &[n, c] : children)
      if (n == name)
        return c;
    return nullptr;
  }
};

// Something `__init__` does that could not be evaluated (the model is then incomplete).
struct TreeUnknown {
  std::string module_path; // where in the tree ("" for the root)
  std::string what;        // the expression or statement, and why
  std::string location;    // path:line
};

struct ModuleTree {
  std::deque<ModuleNode> nodes;
  ModuleNode *root = nullptr;
  std::vector<TreeUnknown> unknowns;
  // Parameters shared under several names (lm_head.weight = embed_tokens.weight), each group
  // sorted as accelerate's find_tied_parameters returns them.
  std::vector<std::vector<std::string>> tied_parameters;
  // The root model's `_keep_in_fp32_modules` (its instance attribute, copied from the class in
  // PreTrainedModel.__init__): name fragments of parameters loaded in float32 under a float16 load.
  std::vector<std::string> keep_in_fp32_modules;
  int dtype_bytes = 2;
  std::string dtype_name = "bfloat16";
  std::string dtype_source; // "--dtype", "config torch_dtype", "default"

  bool complete() const { return root && unknowns.empty(); }
};

// transformers' auto mappings as its own tree states them (models/auto/): which class
// `AutoModel.from_config(config)` and `AutoModelForX.from_config(config)` build for a
// configuration's model_type (modeling_auto.py: `class AutoModelForCausalLM(_BaseAutoModelClass):
// _model_mapping = MODEL_FOR_CAUSAL_LM_MAPPING`, built from MODEL_FOR_CAUSAL_LM_MAPPING_NAMES).
struct AutoModelClasses {
  // auto class name ("AutoModel", "AutoModelForCausalLM") -> model_type -> model class name
  std::map<std::string, std::map<std::string, std::string>> by_auto_class;
  // The same tables by their own names ("MODEL_FOR_CAUSAL_LM_MAPPING_NAMES" -> model_type ->
  // class name): a configuration tests `text_config.model_type in MODEL_FOR_..._NAMES`.
  std::map<std::string, std::map<std::string, std::string>> by_mapping_name;
  const std::string *find(const std::string &auto_class, const std::string &model_type) const {
    auto a = by_auto_class.find(auto_class);
    if (a == by_auto_class.end())
      return nullptr;
    auto m = a->second.find(model_type);
    return m == a->second.end() ? nullptr : &m->second;
  }
};

// A model configuration: the attributes of the PretrainedConfig object `from_pretrained` builds.
struct ModelConfig {
  nlohmann::json values = nlohmann::json::object(); // attribute -> value
  std::string source;                               // "config.json", "defaults of XConfig", ...
  std::string class_name;                           // the PretrainedConfig subclass evaluated
  std::vector<std::string> unknowns;                // defaults that could not be evaluated
  bool present = false;
  // The model is built as `cls(**values)`, its __init__'s parameters being the configuration
  // (diffusers' ConfigMixin, registered_init_keywords), not as `cls(config)`.
  bool init_keywords = false;
};

// The parameters of `root`'s __init__ when it is decorated with `@register_to_config` (diffusers'
// ConfigMixin): from_config passes the configuration's keys that name one of them, private `_`
// keys left out (configuration_utils.py, extract_init_dict). Nullopt when it is not so decorated.
std::optional<std::vector<std::string>> registered_init_parameters(const ModuleClass &root);

// Builds the configuration: the config class's `__init__` (defaults, arithmetic, attribute_map)
// evaluated with `json` (config.json; may be null) as keyword arguments, as `from_dict` does.
// `config_files` are the package's configuration_*.py files; `config_class` names the class
// (empty: the model's `config_class`, else the only PretrainedConfig subclass).
// The configuration class a model class declares, or its nearest package base: its own
// `config_class = XConfig`, else its own annotation `config: XConfig` (transformers 5), else what a
// base declares, as PreTrainedModel.__init_subclass__ resolves it. Empty when none does.
std::string declared_config_class(const ModuleClass &cls, int depth = 0);

ModelConfig build_model_config(const Package &package,
                               const std::vector<const SyntaxFile *> &config_files,
                               const std::string &config_class, const nlohmann::json *json,
                               const AutoModelClasses *auto_classes = nullptr);

// The class `from_pretrained` would build: `architectures[0]` of the config, else the package's
// ...ForCausalLM / ...ForConditionalGeneration / other `PreTrainedModel` root (never a child of
// another class). Null when the package has no module class.
// Classes of `library_files` are never chosen unless requested.
const ModuleClass *choose_root_class(const Package &package, const ModelConfig &config,
                                     const std::string &requested,
                                     const std::vector<const SyntaxFile *> &library_files = {});

// Parses "bf16", "bfloat16", "fp16", "float16", "fp32", "float32", "int8", "fp8"...: bytes, or 0.
int dtype_bytes_from_name(const std::string &name, std::string *canonical = nullptr);

// Evaluates `root`'s `__init__(config)`. `dtype` empty: the config's torch_dtype, else bf16.
// `config_files`: the configuration classes, by which a sub-configuration names the model class
// `AutoModel.from_config` builds (the package's own names come first).
ModuleTree build_module_tree(const Package &package, const ModuleClass &root,
                             const ModelConfig &config, const std::string &dtype,
                             const std::vector<const SyntaxFile *> &config_files = {},
                             const AutoModelClasses *auto_classes = nullptr);

// A device map written in Python (a dict literal, or a function such as ChatGLM's
// `auto_configure_device_map(num_gpus)`), evaluated with `config` and the function's arguments:
// parameters whose name mentions gpus get `gpus`, others their defaults.
struct EvaluatedDeviceMap {
  std::vector<std::pair<std::string, std::string>> entries; // key -> "0", "cpu", "disk"
  std::vector<std::string> unknowns;                        // what could not be evaluated
  std::string origin;                                       // "auto_configure_device_map(2)"
  std::string error;                                        // set when no map was found
};
EvaluatedDeviceMap evaluate_python_device_map(const Package &package, const SyntaxFile &file,
                                              const ModelConfig &config, int gpus,
                                              const std::string &function_name);
// A map value as accelerate accepts it: 0, "cuda:1", "cpu", "disk", "meta"... -> "1"/"cpu"...;
// empty when it is not a device.
std::string normalize_device(const nlohmann::json &value);

// Every tensor of the tree by full name, in `named_parameters(remove_duplicate=False)` +
// `named_buffers()` order (parameters of all modules first, then buffers), as state_dict
// lists them when `persistent_only`.
struct NamedTensor {
  std::string name;
  const TreeTensor *tensor = nullptr;
  const ModuleNode *owner = nullptr;
};
std::vector<NamedTensor> named_tensors(const ModuleTree &tree, bool persistent_only);
// Every module by path ("" = root), pre-order, as `named_modules()`.
std::vector<std::pair<std::string, const ModuleNode *>> named_modules(const ModuleTree &tree);

} // namespace devlint
