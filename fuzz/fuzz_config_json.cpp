// A model's config.json and a device map, as `devlint devmap` reads them from a repository: the
// depth-limited JSON parser, then the configuration class evaluated with the document as keyword
// arguments, the module tree sized from it, accelerate's placement simulated, and the document
// checked as a device map. A bad document must end in a message, never a crash, a hang, undefined
// behaviour (configuration values are multiplied into sizes) or an exception.
#include <cstdint>

#include "frontend/python/python_frontend.h"
#include "fuzz/fuzz_support.h"
#include "model/file_input.h"
#include "simulation/device_map_check.h"
#include "simulation/device_map_simulation.h"
#include "simulation/module_tree.h"

using namespace devlint;

namespace {

// A configuration class with defaults, arithmetic and an attribute_map, and a model that sizes
// its layers from it: every value of the document can reach a shape.
const char *kConfiguration = R"(from transformers import PretrainedConfig


class FuzzConfig(PretrainedConfig):
    model_type = "fuzz"
    attribute_map = {"n_embd": "hidden_size"}

    def __init__(self, hidden_size=8, num_layers=2, vocab_size=16, heads=2, ffn=None, **kwargs):
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.vocab_size = vocab_size
        self.head_dim = hidden_size // heads
        self.ffn = ffn if ffn is not None else 4 * hidden_size
        super().__init__(**kwargs)
)";

const char *kModel = R"(import torch
from torch import nn
from transformers import PreTrainedModel

from .configuration_fuzz import FuzzConfig


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.ffn)
        self.down = nn.Linear(config.ffn, config.n_embd, bias=config.bias)
        self.norm = nn.LayerNorm([config.head_dim, config.hidden_size])
        self.register_buffer("mask", torch.ones(config.hidden_size ** 2, int(config.scale)))


class FuzzModel(PreTrainedModel):
    config_class = FuzzConfig
    _no_split_modules = ["Block"]

    def __init__(self, config):
        super().__init__(config)
        self.embed = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList([Block(config) for _ in range(config.num_layers)])
        self.head = nn.Linear(config.hidden_size << 2, round(config.vocab_size * 1.5))
)";

struct FixedPackage {
  std::unique_ptr<SourceFile> config_source =
      fuzz_source("fuzz_input/configuration_fuzz.py", kConfiguration);
  std::unique_ptr<SourceFile> model_source = fuzz_source("fuzz_input/modeling_fuzz.py", kModel);
  std::unique_ptr<SyntaxFile> config_syntax = lower_python(*config_source);
  std::unique_ptr<SyntaxFile> model_syntax = lower_python(*model_source);
  std::unique_ptr<Package> package = build_package({model_syntax.get()}, {});

  static std::unique_ptr<SourceFile> fuzz_source(const char *path, const char *text) {
    Diagnostic diagnostic;
    return source_from_bytes(path, text, diagnostic);
  }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static FixedPackage fixed;
  std::string text(reinterpret_cast<const char *>(data), size);
  nlohmann::json document;
  std::string error;
  if (!parse_json_text(text, document, error)) {
    DEVLINT_FUZZ_REQUIRE(!error.empty(), "a refused document without a reason");
    return 0;
  }
  if (!document.is_object())
    return 0;
  ModelConfig config =
      build_model_config(*fixed.package, {fixed.config_syntax.get()}, "", &document);
  const ModuleClass *root = choose_root_class(*fixed.package, config, "FuzzModel");
  if (!root)
    return 0;
  ModuleTree tree = build_module_tree(*fixed.package, *root, config, "");
  for (const NamedTensor &t : named_tensors(tree, false))
    DEVLINT_FUZZ_REQUIRE(!t.tensor->numel || *t.tensor->numel >= 0, t.name);
  SimulationRequest request;
  request.gpus = 2;
  request.no_split_module_classes = {"Block"};
  SimulationResult result = simulate_device_map(tree, request);
  DEVLINT_FUZZ_REQUIRE(result.total_size >= 0, document.dump().substr(0, 2000));
  // The same document as a hand-written device map.
  DeviceMap map;
  for (const auto &[key, value] : document.items())
    if (std::string device = normalize_device(value); !device.empty())
      map.entries.emplace_back(key, device);
  check_device_map(tree, map, request.no_split_module_classes);
  return 0;
}
