// One model made ready for placement questions from what the driver read: the configuration
// (config.json evaluated by the configuration class, else the class's defaults), the class
// from_pretrained would build, its module tree, and the no-split classes transformers would pass
// to accelerate. Nothing here reads a file.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "simulation/module_tree.h"

namespace devlint {

// The files a model's configuration comes from, as the driver read them.
struct ModelInputs {
  std::vector<const SyntaxFile *> configuration_files; // configuration_*.py, lowered
  const nlohmann::json *config_json = nullptr;         // config.json (an object), or null
  std::string config_json_path;                        // where it was read (names the source)
  // Files of other models' packages the package's sub-configurations name (transformers' own
  // tree): their classes build sub-models, but none of them is the model from_pretrained builds.
  std::vector<const SyntaxFile *> library_files;
  const AutoModelClasses *auto_classes = nullptr; // the tree's auto mappings, or null
};

struct ModelRequest {
  std::string model_class; // --model-class (empty: choose_root_class)
  std::string dtype;       // --dtype (empty: torch_dtype of the config, else bf16)
  std::vector<std::string> extra_no_split_modules;
};

struct SimulatedModel {
  ModelConfig config;
  const ModuleClass *root = nullptr;
  std::string root_reason; // why `root`: "--model-class", "the config's architectures", ...
  // The package's other PreTrainedModel classes with an __init__: what --model-class may pick.
  std::vector<std::string> other_model_classes;
  ModuleTree tree;
  std::vector<std::string> no_split_modules;
  bool supports_string_maps = true; // false: transformers refuses device_map="auto"
  std::string error;                // set when nothing could be built (the reason)
};

// Fills `model` (config, root, tree, no-split classes) for `package`; sets `model.error` when no
// model class or dtype fits.
void simulate_model(SimulatedModel &model, const Package &package, const ModelInputs &inputs,
                    const ModelRequest &request);

} // namespace devlint
