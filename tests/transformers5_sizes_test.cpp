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

// Each parameter's and buffer's element count by its name in the tree (-1: unknown).
std::map<std::string, int64_t> element_counts(const ModuleTree &tree) {
  std::map<std::string, int64_t> out;
  for (const NamedTensor &t : named_tensors(tree, false))
    out[t.name] = t.tensor->numel.value_or(-1);
  return out;
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

namespace devlint {
namespace {

// What getattr answers on a configuration survives as its JSON: a sub-configuration's plain class
// attributes (`attention_bias = False`, no field) and @property values (another configuration
// built from `self.to_dict()`), and the root configuration's class members. A model that edits
// its copy of the configuration (`config.__setattr__(param[4:], val)` over
// `config.to_dict().items()`) builds from the edited values.
TEST(Transformers5Sizes, ConfigurationClassMembersToDictAndSetattr) {
  Built b = build("from huggingface_hub.dataclasses import strict\n"
                  "from ...configuration_utils import PreTrainedConfig\n\n"
                  "@strict\n"
                  "class PartConfig(PreTrainedConfig):\n"
                  "    model_type = 'part'\n"
                  "    hidden_size: int = 4\n"
                  "    depths: list = (1, 2)\n"
                  "    attention_bias = False\n\n"
                  "    @property\n"
                  "    def reversed_config(self):\n"
                  "        d = self.to_dict()\n"
                  "        d['depths'] = list(reversed(d['depths']))\n"
                  "        return PartConfig(**d)\n\n"
                  "@strict\n"
                  "class MConfig(PreTrainedConfig):\n"
                  "    hidden_size: int = 8\n"
                  "    t2u_hidden_size: int = 2\n"
                  "    part_config: dict | None = None\n"
                  "    mlp_bias = True\n\n"
                  "    def __post_init__(self, **kwargs):\n"
                  "        self.part_config = PartConfig()\n"
                  "        super().__post_init__(**kwargs)\n",
                  "import copy\n"
                  "from torch import nn\n"
                  "from ...modeling_utils import PreTrainedModel\n\n"
                  "class MModel(PreTrainedModel):\n"
                  "    def __init__(self, config):\n"
                  "        super().__init__(config)\n"
                  "        part = config.part_config\n"
                  "        self.a = nn.Linear(part.hidden_size, part.reversed_config.depths[0],\n"
                  "                           bias=part.attention_bias)\n"
                  "        self.b = nn.Linear(2, 2, bias=config.mlp_bias)\n"
                  "        config = copy.deepcopy(config)\n"
                  "        for param, val in config.to_dict().items():\n"
                  "            if param.startswith('t2u_'):\n"
                  "                config.__setattr__(param[4:], val)\n"
                  "        self.c = nn.Linear(config.hidden_size, 1, bias=False)\n",
                  "MConfig", "MModel");
  ASSERT_NE(b.tree.root, nullptr);
  EXPECT_TRUE(b.tree.complete()) << first_unknown(b.tree);
  // a: 4x2 without bias (depths reversed: 2); b: 2x2 + 2; c: 2x1 (hidden_size from t2u_).
  EXPECT_EQ(compute_module_sizes(b.tree)[""], (8 + 6 + 2) * 4);
}

// torch.nn's recurrent layers hold per-layer, per-direction weights (LSTM: four gates); a
// torch.nn layer devlint has no shapes for, and `**kwargs` of an unknown value, are listed as not
// evaluated, never a silent 0 bytes or a call without its keywords.
TEST(Transformers5Sizes, RecurrentLayersAndUnsizedLayersAreNeverSilent) {
  Built b = build(kRopeConfig,
                  "from torch import nn\n"
                  "from ...modeling_utils import PreTrainedModel\n\n"
                  "class MModel(PreTrainedModel):\n"
                  "    def __init__(self, config):\n"
                  "        super().__init__(config)\n"
                  "        self.lstm = nn.LSTM(input_size=3, hidden_size=2, num_layers=2,\n"
                  "                            bidirectional=True)\n"
                  "        self.gru = nn.GRUCell(3, 2, bias=False)\n",
                  "MConfig", "MModel");
  ASSERT_NE(b.tree.root, nullptr);
  EXPECT_TRUE(b.tree.complete()) << first_unknown(b.tree);
  std::map<std::string, int64_t> tensors = element_counts(b.tree);
  EXPECT_EQ(tensors["lstm.weight_ih_l0"], 8 * 3);
  EXPECT_EQ(tensors["lstm.weight_ih_l1_reverse"], 8 * 4); // both directions' outputs
  EXPECT_EQ(tensors["lstm.bias_hh_l1"], 8);
  EXPECT_EQ(tensors["gru.weight_hh"], 6 * 2);
  EXPECT_EQ(tensors.count("gru.bias_ih"), 0u);
  // LSTM: 2 directions x (24 + 16 + 8 + 8) + 2 x (32 + 16 + 8 + 8); GRUCell 18 + 12.
  EXPECT_EQ(compute_module_sizes(b.tree)[""], (112 + 128 + 30) * 4);

  Built unsized = build(kRopeConfig,
                        "from torch import nn\n"
                        "from ...modeling_utils import PreTrainedModel\n\n"
                        "class MModel(PreTrainedModel):\n"
                        "    def __init__(self, config):\n"
                        "        super().__init__(config)\n"
                        "        self.t = nn.TransformerEncoderLayer(8, 2)\n"
                        "        self.k = nn.Linear(2, 2, **config.missing)\n",
                        "MConfig", "MModel");
  ASSERT_NE(unsized.tree.root, nullptr);
  ASSERT_EQ(unsized.tree.unknowns.size(), 2u);
  EXPECT_NE(unsized.tree.unknowns[0].what.find("torch.nn.TransformerEncoderLayer is a layer"),
            std::string::npos)
      << unsized.tree.unknowns[0].what;
  EXPECT_NE(unsized.tree.unknowns[1].what.find("keyword arguments `config.missing`"),
            std::string::npos)
      << unsized.tree.unknowns[1].what;
}

// `[x.item() for x in torch.linspace(0, rate, n)]` holds n values; `DropPath(p) if p > 0 else
// nn.Identity()` with p unknown builds no parameters either way, so the size is certain; where
// the alternatives differ in size the condition stays listed.
TEST(Transformers5Sizes, LinspaceElementsAndConditionsBetweenEqualAlternatives) {
  const char *model = "import torch\n"
                      "from torch import nn\n"
                      "from ...modeling_utils import PreTrainedModel\n\n"
                      "class DropPath(nn.Module):\n"
                      "    def __init__(self, p):\n"
                      "        super().__init__()\n"
                      "        self.p = p\n\n"
                      "class MModel(PreTrainedModel):\n"
                      "    def __init__(self, config):\n"
                      "        super().__init__(config)\n"
                      "        rates = [x.item() for x in torch.linspace(0, 0.1, 3)]\n"
                      "        self.blocks = nn.ModuleList(\n"
                      "            [DropPath(r) if r > 0 else nn.Identity() for r in rates])\n"
                      "        self.proj = nn.Linear(2, 2) if rates[1] > 0 else %s\n";
  std::string equal = model;
  equal.replace(equal.find("%s"), 2, "nn.Linear(2, 2)");
  Built b = build(kRopeConfig, equal, "MConfig", "MModel");
  ASSERT_NE(b.tree.root, nullptr);
  EXPECT_TRUE(b.tree.complete()) << first_unknown(b.tree);
  EXPECT_EQ(b.tree.root->child("blocks")->children.size(), 3u);
  EXPECT_EQ(compute_module_sizes(b.tree)[""], 6 * 4);

  std::string different = model;
  different.replace(different.find("%s"), 2, "nn.Identity()");
  Built d = build(kRopeConfig, different, "MConfig", "MModel");
  ASSERT_NE(d.tree.root, nullptr);
  ASSERT_EQ(d.tree.unknowns.size(), 1u);
  EXPECT_NE(d.tree.unknowns[0].what.find("condition `rates[1] > 0`"), std::string::npos)
      << d.tree.unknowns[0].what;
}

// transformers 5's PreTrainedConfig fields a __post_init__ reads (`self.id2label is None`, then
// `self.num_labels = 3`, whose setter makes the label maps) and a model reads (`config.dtype`);
// a set of strings walks in first-appearance order (one run's PYTHONHASHSEED order: the same
// tensors); a condition whose branches only log leaves nothing unknown; the int arguments torch
// layers keep (`num_embeddings`, `out_channels`) read back; `from copy import deepcopy`.
TEST(Transformers5Sizes, ConfigurationBaseFieldsSetsLoggingBranchesAndLayerAttributes) {
  Built b =
      build("from huggingface_hub.dataclasses import strict\n"
            "from ...configuration_utils import PreTrainedConfig\n\n"
            "@strict\n"
            "class MConfig(PreTrainedConfig):\n"
            "    hidden_size: int = 8\n"
            "    layer_types: list | None = None\n\n"
            "    def __post_init__(self, **kwargs):\n"
            "        if self.id2label is None:\n"
            "            self.num_labels = kwargs.pop('num_labels', 3)\n"
            "        self.layer_types = ['full', 'sliding', 'full']\n"
            "        super().__post_init__(**kwargs)\n",
            "from copy import deepcopy\n"
            "import torch\n"
            "from torch import nn\n"
            "from ...utils import logging\n"
            "from ...modeling_utils import PreTrainedModel\n"
            "from .kernels import is_fast_path_available\n\n"
            "logger = logging.get_logger(__name__)\n\n"
            "class Rotary(nn.Module):\n"
            "    def __init__(self, config):\n"
            "        super().__init__()\n"
            "        for layer_type in list(set(config.layer_types)):\n"
            "            self.register_buffer(f'{layer_type}_inv_freq', torch.ones(2),\n"
            "                                 persistent=False)\n\n"
            "class MModel(PreTrainedModel):\n"
            "    def __init__(self, config):\n"
            "        super().__init__(config)\n"
            "        if not is_fast_path_available():\n"
            "            logger.warning_once('slow path')\n"
            "        elif config.dtype is not None:\n"
            "            pass\n"
            "        else:\n"
            "            logger.info('fast path')\n"
            "        self.rotary = Rotary(config)\n"
            "        self.embed = nn.Embedding(10, config.hidden_size)\n"
            "        self.conv = nn.Conv2d(config.hidden_size, 4, kernel_size=3)\n"
            "        decoder_config = deepcopy(config)\n"
            "        decoder_config.hidden_size = 2\n"
            "        self.head = nn.Linear(self.conv.out_channels, self.embed.num_embeddings)\n"
            "        self.classifier = nn.Linear(decoder_config.hidden_size, config.num_labels)\n"
            "        self.labels = nn.Linear(2, len(config.id2label), bias=False)\n",
            "MConfig", "MModel");
  ASSERT_NE(b.tree.root, nullptr);
  EXPECT_TRUE(b.tree.complete()) << first_unknown(b.tree);
  std::vector<std::string> rotary;
  for (const NamedTensor &t : named_tensors(b.tree, false))
    if (t.name.rfind("rotary.", 0) == 0)
      rotary.push_back(t.name);
  EXPECT_EQ(rotary, (std::vector<std::string>{"rotary.full_inv_freq", "rotary.sliding_inv_freq"}));
  // rotary 2x2, embed 10x8, conv 4x8x3x3+4, head 4x10+10, classifier 2x3+3, labels 2x3.
  EXPECT_EQ(compute_module_sizes(b.tree)[""], (4 + 80 + 288 + 4 + 50 + 9 + 6) * 4);
}

// An instance of a class outside the package assigned to a module attribute (a kernel library's
// layer, imported when the library is installed) may hold parameters: it is listed.
TEST(Transformers5Sizes, LayerOfAnUnseenClassIsListed) {
  Built b = build(kRopeConfig,
                  "from torch import nn\n"
                  "from ...modeling_utils import PreTrainedModel\n"
                  "from fla.modules import FusedRMSNormGated\n\n"
                  "class MModel(PreTrainedModel):\n"
                  "    def __init__(self, config):\n"
                  "        super().__init__(config)\n"
                  "        self.norm = FusedRMSNormGated(config.hidden_size)\n",
                  "MConfig", "MModel");
  ASSERT_NE(b.tree.root, nullptr);
  ASSERT_EQ(b.tree.unknowns.size(), 1u);
  EXPECT_NE(b.tree.unknowns[0].what.find("module attribute `self.norm`"), std::string::npos)
      << b.tree.unknowns[0].what;
}

// PreTrainedConfig.__post_init__ calls the configuration's own convert_rope_params_to_dict
// (Gemma3: one dict per layer type; GPT-NeoX: `partial_rotary_factor` from `rotary_pct`), then
// standardize_rope_params gives each dict its `rope_type` ("default").
TEST(Transformers5Sizes, ConfigurationsOwnRopeConversion) {
  Built b = build(
      "from huggingface_hub.dataclasses import strict\n"
      "from ...configuration_utils import PreTrainedConfig\n\n"
      "@strict\n"
      "class MConfig(PreTrainedConfig):\n"
      "    hidden_size: int = 16\n"
      "    rope_parameters: dict | None = None\n"
      "    layer_types: list | None = None\n\n"
      "    def __post_init__(self, **kwargs):\n"
      "        self.layer_types = ['sliding', 'full']\n"
      "        super().__post_init__(**kwargs)\n\n"
      "    def convert_rope_params_to_dict(self, **kwargs):\n"
      "        self.rope_parameters = {'sliding': {}, 'full': {'rope_theta': 1e6}}\n"
      "        self.rope_parameters['sliding'].setdefault('rope_theta', 1e4)\n"
      "        self.rope_parameters['full'].setdefault('partial_rotary_factor',\n"
      "                                                kwargs.pop('rotary_pct', 0.25))\n"
      "        self.standardize_rope_params()\n"
      "        return kwargs\n",
      "import torch\n"
      "from torch import nn\n"
      "from ...modeling_utils import PreTrainedModel\n\n"
      "class MModel(PreTrainedModel):\n"
      "    def __init__(self, config):\n"
      "        super().__init__(config)\n"
      "        for layer_type in set(config.layer_types):\n"
      "            params = config.rope_parameters[layer_type]\n"
      "            if params is None or params['rope_type'] != 'default':\n"
      "                continue\n"
      "            dim = int(config.hidden_size * params.get('partial_rotary_factor', 1.0))\n"
      "            self.register_buffer(f'{layer_type}_inv_freq',\n"
      "                                 torch.arange(0, dim, 2, dtype=torch.int64).float())\n",
      "MConfig", "MModel");
  ASSERT_NE(b.tree.root, nullptr);
  EXPECT_TRUE(b.tree.complete()) << first_unknown(b.tree);
  // sliding: 16 / 2 = 8 elements; full: 16 * 0.25 / 2 = 2.
  EXPECT_EQ(compute_module_sizes(b.tree)[""], (8 + 2) * 4);
}

// `torch.linspace(0, rate, sum(depths)).split(depths)` gives 1-D pieces of those lengths, and
// `.tolist()` their (unknown) elements: one drop rate per block. A logging-only branch may hold
// a nested condition that is known (`if config.use_fallback:` false keeps its `raise` out).
TEST(Transformers5Sizes, TensorSplitToListAndKnownConditionsInLoggingBranches) {
  Built b = build("from huggingface_hub.dataclasses import strict\n"
                  "from ...configuration_utils import PreTrainedConfig\n\n"
                  "@strict\n"
                  "class MConfig(PreTrainedConfig):\n"
                  "    depths: list = (2, 3)\n"
                  "    use_fallback: bool = False\n",
                  "import torch\n"
                  "from torch import nn\n"
                  "from ...utils import logging\n"
                  "from ...modeling_utils import PreTrainedModel\n"
                  "from .kernels import kernels_available\n\n"
                  "logger = logging.get_logger(__name__)\n\n"
                  "class DropPath(nn.Module):\n"
                  "    def __init__(self, p):\n"
                  "        super().__init__()\n"
                  "        self.p = p\n\n"
                  "class MModel(PreTrainedModel):\n"
                  "    def __init__(self, config):\n"
                  "        super().__init__(config)\n"
                  "        if not kernels_available():\n"
                  "            if config.use_fallback:\n"
                  "                raise ImportError('no fallback')\n"
                  "            else:\n"
                  "                logger.warning_once('slow path')\n"
                  "        rates = [x.tolist() for x in torch.linspace(0, 0.1, sum(config.depths))"
                  ".split(config.depths)]\n"
                  "        self.stages = nn.ModuleList()\n"
                  "        for i, depth in enumerate(config.depths):\n"
                  "            self.stages.append(nn.ModuleList(\n"
                  "                [DropPath(rates[i][j]) if rates[i][j] > 0 else nn.Identity()\n"
                  "                 for j in range(depth)]))\n"
                  "        self.proj = nn.Linear(len(rates[1]), 2)\n",
                  "MConfig", "MModel");
  ASSERT_NE(b.tree.root, nullptr);
  EXPECT_TRUE(b.tree.complete()) << first_unknown(b.tree);
  EXPECT_EQ(b.tree.root->child("stages")->children.size(), 2u);
  EXPECT_EQ(compute_module_sizes(b.tree)[""], (3 * 2 + 2) * 4);
}

// A set of ints walks in CPython's order (hash = the int, an 8-slot table, probing, growth):
// {2, 5, 8, 11} as 8, 2, 11, 5 (what Python 3 prints); any()/all() over known elements; a
// `{k: v for ...}` comprehension is a dict; a mixin's super().__init__ is the next class of the
// instance's MRO (BackboneMixin before the PreTrainedModel that keeps `self.config`).
TEST(Transformers5Sizes, IntSetOrderAnyAllDictComprehensionsAndMixinSuper) {
  Built b = build(kRopeConfig,
                  "from torch import nn\n"
                  "from ...modeling_utils import PreTrainedModel\n\n"
                  "class Mixin:\n"
                  "    def __init__(self, *args, **kwargs):\n"
                  "        super().__init__(*args, **kwargs)\n"
                  "        widths = {name: i + 1 for i, name in enumerate(['a', 'b'])}\n"
                  "        self.mixed = nn.Linear(self.config.hidden_size, widths['b'])\n\n"
                  "class MPreTrainedModel(PreTrainedModel):\n"
                  "    pass\n\n"
                  "class MModel(Mixin, MPreTrainedModel):\n"
                  "    def __init__(self, config):\n"
                  "        super().__init__(config)\n"
                  "        order = list(set([2, 5, 8, 11, 5]))\n"
                  "        grown = list(set(range(20, 0, -3)))\n"
                  "        if not all(i > 0 for i in order) or any(i > 11 for i in order):\n"
                  "            raise ValueError('not reached')\n"
                  "        self.first = nn.Linear(1, order[0], bias=False)\n"
                  "        self.second = nn.Linear(1, order[1], bias=False)\n"
                  "        self.third = nn.Linear(1, order[2], bias=False)\n"
                  "        self.grown = nn.Linear(1, grown[0], bias=False)\n",
                  "MConfig", "MModel");
  ASSERT_NE(b.tree.root, nullptr);
  EXPECT_TRUE(b.tree.complete()) << first_unknown(b.tree);
  std::map<std::string, int64_t> tensors = element_counts(b.tree);
  EXPECT_EQ(tensors["first.weight"], 8);
  EXPECT_EQ(tensors["second.weight"], 2);
  EXPECT_EQ(tensors["third.weight"], 11);
  EXPECT_EQ(tensors["grown.weight"], 2); // Python: [2, 5, 8, 11, 14, 17, 20]
  EXPECT_EQ(tensors["mixed.weight"], 8 * 2);
}

// torch.normal(mean, std, size=(n,)) is n elements; torch.rsqrt keeps its tensor's shape (a 0-dim
// scalar buffer); enumerate() over a ModuleList walks its children.
TEST(Transformers5Sizes, NormalWithSizeRsqrtAndEnumerateModuleList) {
  Built b = build(
      kRopeConfig,
      "import torch\n"
      "from torch import nn\n"
      "from ...modeling_utils import PreTrainedModel\n\n"
      "class MModel(PreTrainedModel):\n"
      "    def __init__(self, config):\n"
      "        super().__init__(config)\n"
      "        self.lambda_q = nn.Parameter(torch.normal(0, 0.1, size=(config.head_dim,)))\n"
      "        self.register_buffer('scale', torch.rsqrt(torch.tensor(2.0)), persistent=False)\n"
      "        self.layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])\n"
      "        for i, layer in enumerate(self.layers):\n"
      "            if i == 2:\n"
      "                self.last = nn.Linear(layer.out_features, 1, bias=False)\n",
      "MConfig", "MModel");
  ASSERT_NE(b.tree.root, nullptr);
  EXPECT_TRUE(b.tree.complete()) << first_unknown(b.tree);
  // lambda_q 4 (head_dim 8 // 2), scale 1, layers 3 x 6, last 2.
  EXPECT_EQ(compute_module_sizes(b.tree)[""], (4 + 1 + 18 + 2) * 4);
}

// nn.Module's iterators yield what __init__ built (`for p in self.patcher.parameters():
// p.requires_grad = False` changes no size); `a[::-1]` reverses a list; isinstance of a
// sub-configuration read back from JSON goes by its model_type.
TEST(Transformers5Sizes, ModuleIteratorsSliceStepsAndIsinstanceByModelType) {
  Built b =
      build("from huggingface_hub.dataclasses import strict\n"
            "from ...configuration_utils import PreTrainedConfig\n\n"
            "@strict\n"
            "class PartConfig(PreTrainedConfig):\n"
            "    model_type = 'part'\n"
            "    hidden_size: int = 4\n\n"
            "@strict\n"
            "class MConfig(PreTrainedConfig):\n"
            "    hidden_sizes: list = (2, 3, 5)\n"
            "    part_config: dict | None = None\n\n"
            "    def __post_init__(self, **kwargs):\n"
            "        self.part_config = PartConfig()\n"
            "        super().__post_init__(**kwargs)\n",
            "from torch import nn\n"
            "from ...modeling_utils import PreTrainedModel\n"
            "from .configuration_m import PartConfig\n\n"
            "class MModel(PreTrainedModel):\n"
            "    def __init__(self, config):\n"
            "        super().__init__(config)\n"
            "        if not isinstance(config.part_config, PartConfig):\n"
            "            raise TypeError('part_config')\n"
            "        self.patcher = nn.Sequential(nn.Linear(2, 2), nn.LayerNorm(2))\n"
            "        for param in self.patcher.parameters():\n"
            "            param.requires_grad = False\n"
            "        count = len(list(self.patcher.parameters())) + len(list(self.modules()))\n"
            "        reversed_sizes = config.hidden_sizes[::-1]\n"
            "        self.head = nn.Linear(reversed_sizes[0], count, bias=False)\n"
            "        for name, child in self.named_children():\n"
            "            if name == 'head':\n"
            "                self.tail = nn.Linear(child.in_features, 1, bias=False)\n",
            "MConfig", "MModel");
  ASSERT_NE(b.tree.root, nullptr);
  EXPECT_TRUE(b.tree.complete()) << first_unknown(b.tree);
  // patcher 6 + 4; head 5 x (4 parameters + 4 modules: the model, patcher and its two layers);
  // tail 5.
  EXPECT_EQ(compute_module_sizes(b.tree)[""], (10 + 5 * 8 + 5) * 4);
}

// Replacing a backbone's BatchNorm2d layers by a frozen one (DETR-style replace_batch_norm):
// isinstance of a module against a torch.nn class, a branch that only fills tensors in place
// (`new.weight.copy_(old.weight)` under an unknown device test), and `model._modules[name] =`.
TEST(Transformers5Sizes, FrozenBatchNormReplacement) {
  Built b = build(kRopeConfig,
                  "import torch\n"
                  "from torch import nn\n"
                  "from ...modeling_utils import PreTrainedModel\n\n"
                  "class FrozenBatchNorm2d(nn.Module):\n"
                  "    def __init__(self, n):\n"
                  "        super().__init__()\n"
                  "        self.register_buffer('weight', torch.ones(n))\n"
                  "        self.register_buffer('bias', torch.zeros(n))\n\n"
                  "def replace_batch_norm(model):\n"
                  "    for name, module in model.named_children():\n"
                  "        if isinstance(module, nn.BatchNorm2d):\n"
                  "            new_module = FrozenBatchNorm2d(module.num_features)\n"
                  "            if module.weight.device != torch.device('meta'):\n"
                  "                new_module.weight.copy_(module.weight)\n"
                  "            model._modules[name] = new_module\n"
                  "        if len(list(module.children())) > 0:\n"
                  "            replace_batch_norm(module)\n\n"
                  "class MModel(PreTrainedModel):\n"
                  "    def __init__(self, config):\n"
                  "        super().__init__(config)\n"
                  "        self.block = nn.Sequential(nn.Conv2d(3, 4, 1), nn.BatchNorm2d(4))\n"
                  "        self.norm = nn.BatchNorm2d(2)\n"
                  "        replace_batch_norm(self)\n",
                  "MConfig", "MModel");
  ASSERT_NE(b.tree.root, nullptr);
  EXPECT_TRUE(b.tree.complete()) << first_unknown(b.tree);
  EXPECT_EQ(b.tree.root->child("norm")->class_name, "FrozenBatchNorm2d");
  // conv 12 + 4; frozen norms 2 x 4 and 2 x 2 (no running stats, no num_batches_tracked).
  EXPECT_EQ(compute_module_sizes(b.tree)[""], (16 + 8 + 4) * 4);
}

} // namespace
} // namespace devlint
