// The module tree and accelerate's placement, reproduced. The expected maps of the tiny model
// (tests/data/devmap_tiny) were worked out by hand from accelerate 1.14.0's source, step by step
// as written next to each case; no GPU and no accelerate run were available to record them.
#include <gtest/gtest.h>

#include <limits>

#include "driver/model_setup.h"
#include "frontend/python/python_frontend.h"
#include "model/torch_layers.h"
#include "simulation/device_map_check.h"
#include "simulation/device_map_simulation.h"
#include "simulation/python_regex.h"
#include "test_support.h"

namespace devlint {
namespace {

const std::string kTiny = std::string(DEVLINT_TESTS_DATA_DIR) + "/devmap_tiny";
const std::string kChatGLM = std::string(DEVLINT_FIXTURES_DIR) + "/devmap/chatglm3_stale_map";

using Entries = std::vector<std::pair<std::string, DeviceName>>;

std::unique_ptr<ModelSetup> load(const std::string &dir, const std::string &config = "") {
  ModelSetupOptions options;
  options.model_config = config;
  auto setup = load_model_setup(dir, options);
  EXPECT_EQ(setup->error, "");
  return setup;
}

SimulationResult simulate(const ModelSetup &setup, SimulationRequest request) {
  request.no_split_module_classes = setup.no_split_modules;
  return simulate_device_map(setup.tree, request);
}

LayerShape layer(std::string_view leaf, std::vector<LayerArgument> args) {
  return torch_layer_shape(leaf, [&](size_t position, std::string_view) {
    return position < args.size() ? args[position]
                                  : LayerArgument{LayerArgument::Kind::Missing, 0, 0, {}};
  });
}
LayerArgument integer(int64_t v) { return {LayerArgument::Kind::Int, v, 0, {}}; }

// A kernel size given as one int counts once per dimension of the convolution (UBSan found
// Conv2d's taken as 52 dimensions, the character code of its last letter).
TEST(TorchLayers, ConvolutionKernelPerDimension) {
  EXPECT_EQ(layer("Conv1d", {integer(4), integer(8), integer(3)}).tensors[0].numel, 4 * 8 * 3);
  EXPECT_EQ(layer("Conv2d", {integer(3), integer(1024), integer(14)}).tensors[0].numel,
            3 * 1024 * 14 * 14);
  EXPECT_EQ(layer("ConvTranspose3d", {integer(2), integer(4), integer(3)}).tensors[0].numel,
            2 * 4 * 27);
}

// Linear and Conv weights keep their shape (weight_norm reads a dimension of it).
TEST(TorchLayers, WeightShapes) {
  EXPECT_EQ(layer("Linear", {integer(4), integer(8)}).tensors[0].dims,
            (std::vector<int64_t>{8, 4}));
  EXPECT_EQ(layer("Conv1d", {integer(4), integer(8), integer(3)}).tensors[0].dims,
            (std::vector<int64_t>{8, 4, 3}));
  EXPECT_EQ(layer("ConvTranspose2d", {integer(4), integer(8), integer(3)}).tensors[0].dims,
            (std::vector<int64_t>{4, 8, 3, 3}));
}

// The patterns transformers 5 writes in `_tied_weights_keys`, as Python's re.search reads them.
TEST(PythonRegex, TiedWeightPatterns) {
  using simulation::python_regex_search;
  EXPECT_EQ(python_regex_search(R"(^bbox_embed.(?![0])\d+)", "bbox_embed.1.layers.0.bias"), true);
  EXPECT_EQ(python_regex_search(R"(^bbox_embed.(?![0])\d+)", "bbox_embed.0.layers.0.bias"), false);
  EXPECT_EQ(python_regex_search(R"(^layers.(?!2\.)\d+.shared_transf)", "layers.12.shared_transf.w"),
            true);
  EXPECT_EQ(python_regex_search(R"(^layers.(?!2\.)\d+.shared_transf)", "layers.2.shared_transf.w"),
            false);
  EXPECT_EQ(python_regex_search(R"(^video\.(?!rotary_emb|.*\.rope\.pos_embed))",
                                "video.a.rope.pos_embed"),
            false);
  EXPECT_EQ(python_regex_search(R"(^video\.(?!rotary_emb|.*\.rope\.pos_embed))", "video.a.weight"),
            true);
  EXPECT_EQ(python_regex_search(R"(word_embeddings.weight$)", "x.word_embeddings.weight"), true);
  EXPECT_EQ(python_regex_search(R"(^[A-Za-z0-9_\.]+(weight)|^(bias)$)", "lm_head.weight"), true);
  EXPECT_EQ(python_regex_search(R"(^[A-Za-z0-9_\.]+(weight)|^(bias)$)", "class_embed"), false);
  EXPECT_EQ(python_regex_search("a{2,3}b", "xaab"), true);
  EXPECT_EQ(python_regex_search("[^a-c]x", "cx"), false);
}

// A pattern that would backtrack for long, or syntax the matcher does not have, is no answer.
TEST(PythonRegex, BoundedWork) {
  using simulation::python_regex_search;
  EXPECT_EQ(python_regex_search("(a+)+$", std::string(40, 'a') + "b"), std::nullopt);
  EXPECT_EQ(python_regex_search("(?<=a)b", "ab"), std::nullopt);
  EXPECT_EQ(python_regex_search(R"(\bword)", "a word"), std::nullopt);
  EXPECT_EQ(python_regex_search("(", "a"), std::nullopt);
}

// Sizes from hostile or mistaken input are unknown, never an overflowed number.
TEST(TorchLayers, SizesTooLargeAreUnknown) {
  LayerShape huge = layer("Linear", {integer(int64_t{1} << 40), integer(int64_t{1} << 40)});
  ASSERT_EQ(huge.tensors.size(), 2u);
  EXPECT_FALSE(huge.tensors[0].numel.has_value()); // weight: 2^80 elements
  EXPECT_FALSE(layer("Linear", {integer(4), integer(-8)}).tensors[0].numel.has_value());
  EXPECT_FALSE(layer("Conv3d", {integer(1), integer(1), integer(int64_t{1} << 30)})
                   .tensors[0]
                   .numel.has_value());
  EXPECT_EQ(element_product(int64_t{1} << 20, int64_t{1} << 20), int64_t{1} << 40);
  EXPECT_FALSE(element_product(int64_t{1} << 40, 2).has_value());
  EXPECT_FALSE(element_sum(std::numeric_limits<int64_t>::max(), 1).has_value());
}

TEST(ModuleTree, TinyModelSizesFromConfig) {
  auto setup = load(kTiny);
  ASSERT_NE(setup->root, nullptr);
  EXPECT_EQ(setup->root->name, "TinyForCausalLM");
  EXPECT_TRUE(setup->tree.complete());
  EXPECT_EQ(setup->tree.dtype_bytes, 4); // torch_dtype float32
  auto sizes = compute_module_sizes(setup->tree);
  // embed 10x4, 4 blocks of 4x4, LayerNorm 4+4, lm_head 4x10: 152 floats.
  EXPECT_EQ(sizes[""], 608);
  EXPECT_EQ(sizes["model.layers.2"], 64);
  EXPECT_EQ(sizes["model.norm"], 32);
  EXPECT_EQ(setup->no_split_modules, std::vector<std::string>{"TinyBlock"});
}

// get_balanced_memory: per_gpu = 608 // 2 + int(1.25 * max(64 (TinyBlock), mean leaf 608 // 7 =
// 86)) = 304 + 107 = 411. infer_auto_device_map: GPU 0 keeps 160 (embed / lm_head, the largest
// layer) free, so 251 usable: model is split, embed (160) and layers.0 (64) fit, layers.1 would
// reach 288 > 251 and TinyBlock cannot be split: the rest goes to GPU 1.
TEST(DeviceMapSimulation, BalancedTwoGpus) {
  auto setup = load(kTiny);
  SimulationRequest request;
  request.gpus = 2;
  auto result = simulate(*setup, request);
  Entries expected = {{"model.embed", "0"},    {"model.layers.0", "0"}, {"model.layers.1", "1"},
                      {"model.layers.2", "1"}, {"model.layers.3", "1"}, {"model.norm", "1"},
                      {"lm_head", "1"}};
  EXPECT_EQ(result.map.entries, expected);
  EXPECT_EQ(result.budgets[0].second, 411);
  EXPECT_TRUE(result.offloaded.empty());
}

// Tied lm_head: counted once in the placement (total 448), but transformers 4 sizes the budgets
// before tying it (lm_head's own 160 bytes count: 608), so GPU 0 gets 304 + the buffer = 411. The
// largest remaining layer is lm_head at 0 bytes when `model` is treated, so model does not fit
// and is split; embed goes to GPU 0 together with its tied lm_head, and two blocks with it.
TEST(DeviceMapSimulation, TiedHeadFollowsTheEmbedding) {
  auto setup = load(kTiny, kTiny + "/config_tied.json");
  ASSERT_EQ(setup->tree.tied_parameters.size(), 1u);
  EXPECT_EQ(setup->tree.tied_parameters[0],
            (std::vector<std::string>{"lm_head.weight", "model.embed.weight"}));
  auto result = simulate(*setup, {});
  EXPECT_EQ(result.total_size, 448);
  EXPECT_EQ(result.budgets[0].second, 411);
  Entries expected = {{"model.embed", "0"},    {"lm_head", "0"},        {"model.layers.0", "0"},
                      {"model.layers.1", "0"}, {"model.layers.2", "1"}, {"model.layers.3", "1"},
                      {"model.norm", "1"}};
  EXPECT_EQ(result.map.entries, expected);
}

// max_memory {0: 300, 1: 300} without "cpu": GPU 0 keeps 160 free, so even embed (160 > 140)
// moves on; GPU 1 takes embed and two blocks (288); the rest is offloaded to disk.
TEST(DeviceMapSimulation, MaxMemoryOffloadsToDisk) {
  auto setup = load(kTiny);
  SimulationRequest request;
  request.max_memory = parse_max_memory("0=300,1=300");
  auto result = simulate(*setup, request);
  Entries expected = {{"model.embed", "1"},       {"model.layers.0", "1"},
                      {"model.layers.1", "1"},    {"model.layers.2", "disk"},
                      {"model.layers.3", "disk"}, {"model.norm", "disk"},
                      {"lm_head", "disk"}};
  EXPECT_EQ(result.map.entries, expected);
  EXPECT_EQ(result.offloaded.size(), 4u);
}

// Sequential with GPUs large enough: everything on GPU 0, cleaned to one entry.
TEST(DeviceMapSimulation, SequentialFitsOnTheFirstGpu) {
  auto setup = load(kTiny);
  SimulationRequest request;
  request.strategy = PlacementStrategy::Sequential;
  auto result = simulate(*setup, request);
  EXPECT_EQ(result.map.entries, (Entries{{"", "0"}}));
}

TEST(ModuleTree, ChatGLMParameterCountFromConfigArithmetic) {
  auto setup = load(kChatGLM);
  ASSERT_NE(setup->root, nullptr);
  EXPECT_EQ(setup->root->name, "ChatGLMForConditionalGeneration"); // auto_map, not architectures
  EXPECT_TRUE(setup->tree.complete());
  int64_t parameters = 0;
  for (const NamedTensor &t : named_tensors(setup->tree, false))
    if (!t.tensor->is_buffer)
      parameters += *t.tensor->numel;
  // ChatGLM3-6B: multi-query attention with 2 groups, swiglu MLP, 28 layers.
  EXPECT_EQ(parameters, 6243584000);
  EXPECT_TRUE(setup->tree.tied_parameters.empty()); // tie_word_embeddings: false
}

TEST(DeviceMapCheck, StaleChatGLMMapFromPythonFunction) {
  auto setup = load(kChatGLM);
  Diagnostic d;
  auto file = read_source_file(kChatGLM + "/load_on_gpus.py", 1 << 20, d);
  ASSERT_NE(file, nullptr);
  auto syntax = lower_python(*file);
  auto map = evaluate_python_device_map(*setup->package, *syntax, setup->config, 2, "");
  EXPECT_EQ(map.error, "");
  EXPECT_TRUE(map.unknowns.empty());
  ASSERT_EQ(map.entries.size(), 31u);
  EXPECT_EQ(map.entries[3], (std::pair<std::string, std::string>{"transformer.layers.0", "0"}));
  // 30 / 2 = 15 layers per GPU, two of them taken by embeddings and head.
  EXPECT_EQ(map.entries[16], (std::pair<std::string, std::string>{"transformer.layers.13", "1"}));
  DeviceMap device_map{map.entries};
  auto problems = check_device_map(setup->tree, device_map, setup->no_split_modules);
  size_t unknown_keys = 0;
  const DeviceMapProblem *missing = nullptr;
  for (const DeviceMapProblem &p : problems) {
    if (p.kind == DeviceMapProblemKind::UnknownKey)
      ++unknown_keys;
    if (p.kind == DeviceMapProblemKind::MissingParameters)
      missing = &p;
    if (p.key == "transformer.word_embeddings") {
      EXPECT_EQ(p.suggestion, "transformer.embedding.word_embeddings");
    }
    if (p.key == "lm_head") {
      EXPECT_EQ(p.suggestion, "transformer.output_layer");
    }
    if (p.key == "transformer.layers.7") {
      EXPECT_EQ(p.suggestion, "transformer.encoder.layers.7");
    }
  }
  EXPECT_EQ(unknown_keys, 31u);
  ASSERT_NE(missing, nullptr);
  // Every state_dict entry: 199 parameters and the persistent inv_freq buffer (seed 001 lists it).
  EXPECT_EQ(missing->names.size(), 200u);
  EXPECT_NE(std::find(missing->names.begin(), missing->names.end(),
                      "transformer.rotary_pos_emb.inv_freq"),
            missing->names.end());
}

TEST(DeviceMapCheck, CutNoSplitModuleAndSplitTiedWeights) {
  auto setup = load(kTiny, kTiny + "/config_tied.json");
  DeviceMap map{{{"model.embed", "0"},
                 {"model.layers.0.fc", "0"},
                 {"model.layers.0.act", "1"},
                 {"model.layers.1", "1"},
                 {"model.layers.2", "1"},
                 {"model.layers.3", "1"},
                 {"model.norm", "1"},
                 {"lm_head", "1"}}};
  auto problems = check_device_map(setup->tree, map, setup->no_split_modules);
  std::vector<DeviceMapProblemKind> kinds;
  for (const auto &p : problems)
    kinds.push_back(p.kind);
  EXPECT_EQ(kinds, (std::vector<DeviceMapProblemKind>{DeviceMapProblemKind::CutsNoSplitModule,
                                                      DeviceMapProblemKind::TiedWeightsSplit}));
  EXPECT_EQ(problems[0].key, "model.layers.0");
}

TEST(ModuleTree, UnknownConfigValuesAreReported) {
  auto f = testing::source("import torch\nfrom torch import nn\n\n"
                           "class M(nn.Module):\n"
                           "    def __init__(self, config):\n"
                           "        super().__init__()\n"
                           "        self.a = nn.Linear(config.hidden_size, 8)\n"
                           "        if config.use_extra:\n"
                           "            self.b = nn.Linear(8, 8)\n",
                           "modeling_m.py");
  auto syntax = lower_python(*f);
  auto package = build_package({syntax.get()}, {});
  ModelConfig config;
  config.values = {{"hidden_size", 16}};
  config.present = true;
  auto tree = build_module_tree(*package, *package->find_class("M"), config, "");
  ASSERT_NE(tree.root, nullptr);
  EXPECT_EQ(tree.unknowns.size(), 1u); // use_extra: reported, branch taken
  ASSERT_EQ(tree.root->children.size(), 2u);
  EXPECT_EQ(*tree.root->children[0].second->parameters[0].numel, 16 * 8);
  config.values["use_extra"] = false;
  auto known = build_module_tree(*package, *package->find_class("M"), config, "");
  EXPECT_TRUE(known.complete());
  EXPECT_EQ(known.root->children.size(), 1u);
}

// Shapes as torch computes them: a grouped Conv2d holds out * (in / groups) * k * k weights, a
// buffer built by arange(...).expand(1, -1) holds n elements, torch.zeros(buf.size()) as many,
// torch.tril(torch.ones(n, n)).view(1, 1, n, n) n * n; copy.deepcopy(config) is edited apart
// from config, and isinstance tests on configuration classes (in the configuration's __init__)
// and on collections.abc are decided.
TEST(ModuleTree, ShapesThroughViewsCopiesAndTypeTests) {
  auto f = testing::source(
      "import collections.abc\nimport copy\nimport torch\nfrom torch import nn\n\n"
      "class SubConfig(PretrainedConfig):\n"
      "    def __init__(self, width=2, **kwargs):\n"
      "        self.width = width\n\n"
      "class MConfig(PretrainedConfig):\n"
      "    def __init__(self, max_positions=5, sub_config=None, **kwargs):\n"
      "        self.max_positions = max_positions\n"
      "        if sub_config is None:\n"
      "            sub_config = SubConfig()\n"
      "        self.out_width = sub_config.width if isinstance(sub_config, SubConfig) else 0\n\n"
      "class Depthwise(nn.Conv2d):\n"
      "    def __init__(self, in_channels, kernel_size=3):\n"
      "        super().__init__(in_channels=in_channels, out_channels=in_channels,\n"
      "                         kernel_size=kernel_size, groups=in_channels, bias=False)\n\n"
      "class M(nn.Module):\n"
      "    def __init__(self, config):\n"
      "        super().__init__()\n"
      "        self.conv = nn.Conv2d(3, 8, kernel_size=(3, 5))\n"
      "        self.conv1d = nn.Conv1d(4, 6, 3)\n"
      "        self.dw = Depthwise(16, kernel_size=5)\n"
      "        n = config.max_positions\n"
      "        self.register_buffer('position_ids', torch.arange(n).expand((1, -1)))\n"
      "        self.register_buffer('token_type_ids', torch.zeros(self.position_ids.size(), "
      "dtype=torch.long))\n"
      "        self.register_buffer('bias', torch.tril(torch.ones((n, n), dtype=torch.bool))"
      ".view(1, 1, n, n))\n"
      "        decoder_config = copy.deepcopy(config)\n"
      "        decoder_config.max_positions = 2\n"
      "        size = config.max_positions\n"
      "        size = size if isinstance(size, collections.abc.Iterable) else (size, size)\n"
      "        self.out = nn.Linear(size[0] * config.out_width, decoder_config.max_positions)\n",
      "modeling_m.py");
  auto syntax = lower_python(*f);
  auto package = build_package({syntax.get()}, {});
  nlohmann::json json = {{"max_positions", 7}};
  auto config = build_model_config(*package, {}, "MConfig", &json);
  ASSERT_TRUE(config.present);
  auto tree = build_module_tree(*package, *package->find_class("M"), config, "");
  ASSERT_NE(tree.root, nullptr);
  EXPECT_TRUE(tree.complete()) << (tree.unknowns.empty() ? "" : tree.unknowns[0].what);
  auto numel = [&](const std::string &name) -> int64_t {
    for (const NamedTensor &t : named_tensors(tree, false))
      if (t.name == name)
        return t.tensor->numel.value_or(-1);
    return -2;
  };
  EXPECT_EQ(numel("conv.weight"), 8 * 3 * 3 * 5);
  EXPECT_EQ(numel("conv1d.weight"), 6 * 4 * 3);
  EXPECT_EQ(numel("dw.weight"), 16 * 1 * 5 * 5);
  EXPECT_EQ(numel("position_ids"), 7);
  EXPECT_EQ(numel("token_type_ids"), 7);
  EXPECT_EQ(numel("bias"), 49);
  EXPECT_EQ(numel("out.weight"), 7 * 2 * 2);
}

// Tensors torch registers without register_buffer or a Linear: `self.x = nn.Buffer(t)` (torch
// 2.5) is a buffer, persistent unless it says otherwise; nn.MultiheadAttention holds its packed
// input projection and an out_proj child (as model sizes recorded with transformers 5.17 showed:
// SigLIP's pooling head, MoE gates' e_score_correction_bias); a comment first inside
// parentheses does not hide the expression (Kimi-Linear's attention layers were left out); a
// comprehension's `if` keeps only the items it accepts (Inkling's sliding-window layers).
TEST(ModuleTree, BufferAssignmentsAndMultiheadAttentionAreSized) {
  auto f = testing::source(
      "import torch\nfrom torch import nn\n\n"
      "class M(nn.Module):\n"
      "    def __init__(self, config):\n"
      "        super().__init__()\n"
      "        self.bias = nn.Buffer(torch.zeros((6), dtype=torch.float32))\n"
      "        self.cache = nn.Buffer(torch.ones(3, 4), persistent=False)\n"
      "        self.attention = nn.MultiheadAttention(8, 2, batch_first=True)\n"
      "        self.cross = nn.MultiheadAttention(8, 2, kdim=4, vdim=4, bias=False)\n"
      "        self.mixer = (\n"
      "            # a comment first inside the parentheses\n"
      "            nn.Linear(2, 3) if config is None else nn.Linear(4, 5)\n"
      "        )\n"
      "        kept = {i for i in range(4) if (i + 1) % 2}\n"
      "        self.blocks = nn.ModuleList([nn.Linear(2, 2) for i in range(4) if i in kept])\n",
      "modeling_m.py");
  auto syntax = lower_python(*f);
  auto package = build_package({syntax.get()}, {});
  auto tree = build_module_tree(*package, *package->find_class("M"), ModelConfig{}, "fp32");
  ASSERT_NE(tree.root, nullptr);
  EXPECT_TRUE(tree.complete()) << (tree.unknowns.empty() ? "" : tree.unknowns[0].what);
  std::map<std::string, std::pair<int64_t, std::string>> tensors;
  for (const NamedTensor &t : named_tensors(tree, false))
    tensors[t.name] = {t.tensor->numel.value_or(-1), !t.tensor->is_buffer ? "parameter"
                                                     : t.tensor->persistent
                                                         ? "buffer"
                                                         : "non-persistent buffer"};
  std::map<std::string, std::pair<int64_t, std::string>> expected = {
      {"bias", {6, "buffer"}},
      {"cache", {12, "non-persistent buffer"}},
      {"attention.in_proj_weight", {3 * 8 * 8, "parameter"}},
      {"attention.in_proj_bias", {3 * 8, "parameter"}},
      {"attention.out_proj.weight", {8 * 8, "parameter"}},
      {"attention.out_proj.bias", {8, "parameter"}},
      {"cross.q_proj_weight", {8 * 8, "parameter"}},
      {"cross.k_proj_weight", {8 * 4, "parameter"}},
      {"cross.v_proj_weight", {8 * 4, "parameter"}},
      {"cross.out_proj.weight", {8 * 8, "parameter"}},
      {"mixer.weight", {4 * 5, "parameter"}},
      {"mixer.bias", {5, "parameter"}},
      {"blocks.0.weight", {4, "parameter"}},
      {"blocks.0.bias", {2, "parameter"}},
      {"blocks.1.weight", {4, "parameter"}},
      {"blocks.1.bias", {2, "parameter"}},
  };
  EXPECT_EQ(tensors, expected);
  ASSERT_NE(tree.root->child("attention"), nullptr);
  EXPECT_NE(tree.root->child("attention")->child("out_proj"), nullptr);
}

TEST(DeviceMapSimulation, MaxMemoryParsing) {
  auto m = parse_max_memory("1=24GiB,cpu=1GB,0=20GiB");
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0], (std::pair<DeviceName, int64_t>{"0", int64_t{20} << 30}));
  EXPECT_EQ(m[1].first, "1");
  EXPECT_EQ(m[2], (std::pair<DeviceName, int64_t>{"cpu", 1000000000}));
  EXPECT_THROW(parse_max_memory("0=lots"), std::invalid_argument);
  EXPECT_THROW(parse_max_memory("gpu0=1GiB"), std::invalid_argument);
  EXPECT_THROW(parse_max_memory("0=1GiB,0=2GiB"), std::invalid_argument);
}

// transformers 5's configurations are dataclasses (huggingface_hub's @strict): annotated class
// attributes are the fields, the generated __init__ takes them as keyword arguments, and
// __post_init__ derives the rest (tests/data/devmap_dataclass_config).
const std::string kDataclassConfig =
    std::string(DEVLINT_TESTS_DATA_DIR) + "/devmap_dataclass_config";

TEST(ModuleTree, DataclassConfigurationDefaultsSizeTheModel) {
  auto setup = load(kDataclassConfig);
  ASSERT_NE(setup->root, nullptr);
  EXPECT_EQ(setup->config.class_name, "Tiny5Config");
  EXPECT_TRUE(setup->tree.complete())
      << (setup->tree.unknowns.empty() ? "" : setup->tree.unknowns[0].what);
  const nlohmann::json &values = setup->config.values;
  EXPECT_EQ(values.value("hidden_size", 0), 8);
  EXPECT_EQ(values.value("head_dim", 0), 4);               // __post_init__: 8 // 2
  EXPECT_EQ(values.value("is_gated_act", false), true);    // "gated-gelu".split("-")[0]
  EXPECT_EQ(values.value("initializer_range", 0.0), 0.02); // interval(...)(default=0.02)
  EXPECT_FALSE(values.contains("model_type"));             // a class attribute, not a field
  // embed 10x8, 3 blocks of q 8x8 + wi, wi_gate 8x16 + wo 16x8, lm_head 8x10: 1504 elements.
  auto sizes = compute_module_sizes(setup->tree);
  EXPECT_EQ(sizes[""], 1504 * setup->tree.dtype_bytes);
  EXPECT_EQ(sizes["model.layers.0"], 448 * setup->tree.dtype_bytes);
}

TEST(ModuleTree, DataclassConfigurationTakesConfigJsonAsKeywords) {
  auto setup = load(kDataclassConfig, kDataclassConfig + "/config_relu.json");
  ASSERT_NE(setup->root, nullptr);
  EXPECT_TRUE(setup->tree.complete());
  EXPECT_EQ(setup->tree.dtype_bytes, 4);
  EXPECT_EQ(setup->config.values.value("is_gated_act", true), false); // "relu"
  EXPECT_TRUE(setup->config.values.contains("architectures")); // not a field: kept as attribute
  // 2 blocks without wi_gate: 80 + 2 * (64 + 128 + 128) + 80 elements.
  EXPECT_EQ(compute_module_sizes(setup->tree)[""], 800 * 4);
}

TEST(ModuleTree, DataclassSubclassInheritsFieldsAndOverridesDefaults) {
  std::vector<std::unique_ptr<SourceFile>> sources;
  std::vector<std::unique_ptr<SyntaxFile>> syntax;
  for (const char *name : {"configuration_tiny5.py", "modeling_tiny5.py"}) {
    Diagnostic d;
    sources.push_back(read_source_file(kDataclassConfig + "/" + name, 1 << 20, d));
    ASSERT_NE(sources.back(), nullptr) << d.message;
    syntax.push_back(lower_python(*sources.back()));
  }
  auto package = build_package({syntax[0].get(), syntax[1].get()}, {});
  auto config = build_model_config(*package, {syntax[0].get()}, "Tiny5WideConfig", nullptr);
  ASSERT_TRUE(config.present);
  EXPECT_EQ(config.values.value("hidden_size", 0), 16);      // the subclass's default
  EXPECT_EQ(config.values.value("num_hidden_layers", 0), 3); // the base's field
  EXPECT_EQ(config.values.value("head_dim", 0), 8);          // the base's __post_init__
}

// A dataclass keeps an __init__ its class defines: only its explicit code runs.
TEST(ModuleTree, DataclassWithItsOwnInitRunsIt) {
  auto f = testing::source("from dataclasses import dataclass\n"
                           "from transformers import PretrainedConfig\n\n"
                           "@dataclass\n"
                           "class OwnConfig(PretrainedConfig):\n"
                           "    hidden_size: int = 8\n\n"
                           "    def __init__(self, width=32, **kwargs):\n"
                           "        self.width = width\n"
                           "        super().__init__(**kwargs)\n",
                           "configuration_own.py");
  auto syntax = lower_python(*f);
  auto package = build_package({syntax.get()}, {});
  auto config = build_model_config(*package, {syntax.get()}, "OwnConfig", nullptr);
  ASSERT_TRUE(config.present);
  EXPECT_EQ(config.values.value("width", 0), 32);
  EXPECT_FALSE(config.values.contains("hidden_size"));
}

// transformers 5 ties what `_tied_weights_keys = {target: source}` names, when the configuration
// says tie_word_embeddings; the tied head then takes no room of its own.
TEST(ModuleTree, TiedWeightsKeysDictTiesTargetToSource) {
  auto untied = load(kDataclassConfig); // tie_word_embeddings: False by the config's default
  EXPECT_TRUE(untied->tree.tied_parameters.empty());
  auto tied = load(kDataclassConfig, kDataclassConfig + "/config_tied.json");
  std::vector<std::vector<std::string>> expected = {
      {"lm_head.weight", "model.embed_tokens.weight"}};
  EXPECT_EQ(tied->tree.tied_parameters, expected);
  EXPECT_EQ(compute_module_sizes(tied->tree)[""], (1504 - 80) * 4);
}

// transformers 5's PreTrainedConfig.__post_init__ turns a `rope_parameters` field into a dict with
// `rope_type` ("default") and `rope_theta`; rotary embeddings index it like a dict.
TEST(ModuleTree, DataclassConfigurationStandardizesRopeParameters) {
  auto config_file = testing::source("from huggingface_hub.dataclasses import strict\n"
                                     "from ...configuration_utils import PreTrainedConfig\n\n"
                                     "@strict\n"
                                     "class RopeConfig(PreTrainedConfig):\n"
                                     "    default_theta = 10000.0\n"
                                     "    hidden_size: int = 8\n"
                                     "    rope_parameters: dict | None = None\n",
                                     "configuration_rope.py");
  auto model_file = testing::source(
      "import torch\nfrom torch import nn\n\n"
      "class Rotary(nn.Module):\n"
      "    def __init__(self, config):\n"
      "        super().__init__()\n"
      "        self.rope_type = config.rope_parameters['rope_type']\n"
      "        if self.rope_type != 'default':\n"
      "            self.extra = nn.Linear(4, 4)\n"
      "        base = config.rope_parameters['rope_theta']\n"
      "        self.register_buffer('inv_freq', torch.arange(0, config.hidden_size, 2), "
      "persistent=False)\n",
      "modeling_rope.py");
  auto config_syntax = lower_python(*config_file);
  auto model_syntax = lower_python(*model_file);
  auto package = build_package({config_syntax.get(), model_syntax.get()}, {});
  auto config = build_model_config(*package, {config_syntax.get()}, "RopeConfig", nullptr);
  ASSERT_TRUE(config.present);
  nlohmann::json expected = {{"rope_theta", 10000.0}, {"rope_type", "default"}};
  EXPECT_EQ(config.values["rope_parameters"], expected);
  auto tree = build_module_tree(*package, *package->find_class("Rotary"), config, "");
  ASSERT_NE(tree.root, nullptr);
  EXPECT_TRUE(tree.complete()) << (tree.unknowns.empty() ? "" : tree.unknowns[0].what);
  EXPECT_EQ(tree.root->child("extra"), nullptr);
}

// A configuration's @property is read as an attribute (RecurrentGemma's layers_block_type);
// transformers' ACT2FN["xielu"] holds two parameters and two buffers, the other activations
// nothing; a tied target becomes the source tensor, shape included (Ovis2's defaults give its
// head another width than the Qwen2 embedding it is tied to). Counts as transformers 5.17 builds.
TEST(ModuleTree, ConfigurationPropertiesActivationsAndTiedShapes) {
  auto config_file =
      testing::source("from huggingface_hub.dataclasses import strict\n"
                      "from ...configuration_utils import PreTrainedConfig\n\n"
                      "@strict\n"
                      "class KindsConfig(PreTrainedConfig):\n"
                      "    hidden_size: int = 8\n"
                      "    block_types: list = ('a', 'b')\n"
                      "    num_hidden_layers: int = 5\n"
                      "    tie_word_embeddings: bool = True\n\n"
                      "    @property\n"
                      "    def layers_block_type(self):\n"
                      "        return (self.block_types * 100)[: self.num_hidden_layers]\n",
                      "configuration_kinds.py");
  auto model_file = testing::source(
      "from torch import nn\n"
      "from ...activations import ACT2FN\n"
      "from ...modeling_utils import PreTrainedModel\n\n"
      "class Block(nn.Module):\n"
      "    def __init__(self, config, kind):\n"
      "        super().__init__()\n"
      "        self.proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)\n"
      "        self.act = ACT2FN['xielu' if kind == 'a' else 'gelu']\n\n"
      "class KindsModel(PreTrainedModel):\n"
      "    _tied_weights_keys = {'lm_head.weight': 'embed.weight'}\n"
      "    def __init__(self, config):\n"
      "        super().__init__(config)\n"
      "        self.embed = nn.Embedding(10, config.hidden_size)\n"
      "        self.layers = nn.ModuleList([Block(config, k) for k in config.layers_block_type])\n"
      "        self.lm_head = nn.Linear(4, 10, bias=False)\n",
      "modeling_kinds.py");
  auto config_syntax = lower_python(*config_file);
  auto model_syntax = lower_python(*model_file);
  auto package = build_package({config_syntax.get(), model_syntax.get()}, {});
  auto config = build_model_config(*package, {config_syntax.get()}, "KindsConfig", nullptr);
  ASSERT_TRUE(config.present);
  EXPECT_EQ(config.values["layers_block_type"], nlohmann::json({"a", "b", "a", "b", "a"}));
  auto tree = build_module_tree(*package, *package->find_class("KindsModel"), config, "fp32");
  ASSERT_NE(tree.root, nullptr);
  EXPECT_TRUE(tree.complete()) << (tree.unknowns.empty() ? "" : tree.unknowns[0].what);
  std::map<std::string, int64_t> tensors;
  for (const NamedTensor &t : named_tensors(tree, false))
    tensors[t.name] = t.tensor->numel.value_or(-1);
  EXPECT_EQ(tensors.size(), 2u + 5u + 3u * 4u); // embed, lm_head, 5 proj, 3 xIELU x 4
  EXPECT_EQ(tensors["layers.0.act.alpha_p"], 1);
  EXPECT_EQ(tensors["layers.4.act.eps"], 1);
  EXPECT_EQ(tensors.count("layers.1.act.alpha_p"), 0u);
  EXPECT_EQ(tensors["lm_head.weight"], 80); // the embedding's 10 x 8, not its own 10 x 4
  // embed 80 + 5 proj x 64 + 3 x (2 bfloat16 parameters + 2 bfloat16 buffers) x 2 bytes.
  EXPECT_EQ(compute_module_sizes(tree)[""], (80 + 5 * 64) * 4 + 3 * 4 * 2);
}

} // namespace
} // namespace devlint
