// Sizes of transformers 5 models from their configuration defaults (issue 25): rules about
// transformers 5.17 itself (rope_parameters, ...) and about values that leave no size uncertain.
#include <gtest/gtest.h>

#include "frontend/python/python_frontend.h"
#include "simulation/device_map_simulation.h"
#include "simulation/module_tree.h"
#include "test_support.h"

namespace devlint {
namespace {

struct Built {
  std::unique_ptr<SourceFile> config_file, model_file;
  std::unique_ptr<SyntaxFile> config_syntax, model_syntax;
  std::unique_ptr<Package> package;
  ModelConfig config;
  ModuleTree tree;
};

// Lowers a configuration file and a modeling file, builds `config_class`'s defaults and the
// module tree of `model_class`.
Built build(const std::string &config_source, const std::string &model_source,
            const std::string &config_class, const std::string &model_class) {
  Built b;
  b.config_file = testing::source(config_source, "configuration_m.py");
  b.model_file = testing::source(model_source, "modeling_m.py");
  b.config_syntax = lower_python(*b.config_file);
  b.model_syntax = lower_python(*b.model_file);
  b.package = build_package({b.config_syntax.get(), b.model_syntax.get()}, {});
  b.config = build_model_config(*b.package, {b.config_syntax.get()}, config_class, nullptr);
  if (const ModuleClass *root = b.package->find_class(model_class))
    b.tree = build_module_tree(*b.package, *root, b.config, "fp32");
  return b;
}

std::string first_unknown(const ModuleTree &tree) {
  return tree.unknowns.empty() ? "" : tree.unknowns[0].what;
}

const char *kRopeConfig = "from huggingface_hub.dataclasses import strict\n"
                          "from ...configuration_utils import PreTrainedConfig\n"
                          "from ...modeling_rope_utils import RopeParameters\n\n"
                          "@strict\n"
                          "class MConfig(PreTrainedConfig):\n"
                          "    hidden_size: int = 8\n"
                          "    rope_parameters: RopeParameters | dict | None = None\n\n"
                          "    def __post_init__(self, **kwargs):\n"
                          "        self.head_dim = self.hidden_size // 2\n"
                          "        super().__post_init__(**kwargs)\n";

// transformers 5.17's PreTrainedConfig makes `rope_parameters` a dict with `rope_type` "default"
// (RotaryEmbeddingConfigMixin): a model reads it with .get and [] and builds the default layers.
TEST(Transformers5Sizes, RopeParametersDefaultType) {
  Built b = build(kRopeConfig,
                  "from torch import nn\n"
                  "from ...modeling_utils import PreTrainedModel\n\n"
                  "def scaled(rope_parameters, scaling):\n"
                  "    if rope_parameters.get('rope_type', 'default') != 'default':\n"
                  "        if rope_parameters.get('mscale_all_dim', 0):\n"
                  "            scaling = scaling * 2\n"
                  "    return scaling\n\n"
                  "class MModel(PreTrainedModel):\n"
                  "    def __init__(self, config):\n"
                  "        super().__init__(config)\n"
                  "        self.scaling = scaled(config.rope_parameters, 1.0)\n"
                  "        self.proj = nn.Linear(config.hidden_size, config.head_dim)\n"
                  "        for key, value in config.rope_parameters.items():\n"
                  "            if key == 'rope_type' and value == 'default':\n"
                  "                self.extra = nn.Linear(2, len(config.rope_parameters))\n"
                  "        if 'rope_theta' in config.rope_parameters:\n"
                  "            self.theta = nn.Linear(2, 2, bias=False)\n",
                  "MConfig", "MModel");
  ASSERT_NE(b.tree.root, nullptr);
  EXPECT_TRUE(b.tree.complete()) << first_unknown(b.tree);
  // proj 8x4+4, extra 2x2+2 (rope_type and rope_theta), theta 2x2.
  EXPECT_EQ(compute_module_sizes(b.tree)[""], (8 * 4 + 4 + 2 * 2 + 2 + 2 * 2) * 4);
}

} // namespace
} // namespace devlint
