// Composite models inside transformers' own source tree: a package under `models/` whose
// sub-configurations name other models by model_type (`CONFIG_MAPPING["llama"]()`), or whose
// files import another model's package relatively (`from ..siglip import SiglipVisionConfig`),
// has their packages beside it. The tree's auto mappings (models/auto/*.py, read as text, never
// imported) say which directory holds a model_type and which class each auto class builds for it.
#pragma once

#include <string>
#include <vector>

#include "simulation/module_tree.h"

namespace devlint {

struct SiblingModels {
  bool in_transformers_tree = false; // DIRECTORY/../auto holds the auto mappings
  AutoModelClasses auto_classes;
  // The other packages the model's configuration files name or its files import (transitively
  // through their configuration files), in the order found.
  std::vector<std::string> directories;
};

// `configuration_texts`: the text of the package's configuration_*.py files; `modeling_texts`:
// its modeling_*.py files (only their relative imports are read). Reads at most a bounded number
// of sibling packages' configuration files to follow their sub-configurations.
SiblingModels find_sibling_models(const std::string &directory,
                                  const std::vector<std::string> &configuration_texts,
                                  const std::vector<std::string> &modeling_texts = {});

} // namespace devlint
