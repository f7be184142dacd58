// accelerate's placement of a model, reproduced on the module tree: `compute_module_sizes`,
// `get_balanced_memory` (transformers' device_map="auto"/"balanced") and `infer_auto_device_map`,
// including no-split classes, tied parameters, the room GPU 0 keeps for the largest layer, CPU
// and disk offload, and `clean_device_map`. The algorithm is accelerate 1.14.0's
// (src/accelerate/utils/modeling.py); it is the same in 1.2.1, the release paired with
// transformers 4.47, except that 1.14 finds a tied parameter's module by prefix.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "simulation/module_tree.h"

namespace devlint {

inline constexpr const char *kSimulatedAccelerateVersion = "1.14.0";

// A device as accelerate names it in a map: "0", "1", ... (GPU indices), "cpu", "disk".
using DeviceName = std::string;

// `{"transformer.embedding": 0, ...}` in insertion order, as `model.hf_device_map` holds it.
// `key` is the module or tensor path `path` or one of its ancestors ("" covers every path),
// checked without building `key + "."`: a device map may have many entries.
bool key_covers(const std::string &key, const std::string &path);

struct DeviceMap {
  std::vector<std::pair<std::string, DeviceName>> entries;

  // The device of a module or tensor path: the entry for it or for its closest ancestor.
  std::optional<DeviceName> device_of(const std::string &path) const;
  // Every device that holds part of `path` (its own entry, an ancestor's, or descendants').
  std::set<DeviceName> devices_under(const std::string &path) const;
  std::set<DeviceName> devices() const;
};

// `max_memory`: device -> bytes, GPUs first in index order, then "cpu", then "disk".
using MaxMemory = std::vector<std::pair<DeviceName, int64_t>>;

enum class PlacementStrategy : uint8_t { Balanced, Sequential };

struct SimulationRequest {
  PlacementStrategy strategy = PlacementStrategy::Balanced;
  // Given by the user (--max-memory): what does not fit is offloaded. Otherwise `gpus` GPUs large
  // enough for their share plus an unlimited CPU.
  std::optional<MaxMemory> max_memory;
  int gpus = 2;
  std::vector<std::string> no_split_module_classes;
  // The transformers release from_pretrained runs: 5 and later place with their own copy of
  // accelerate's functions (integrations/accelerate.py), which differs in the balanced budgets'
  // buffer and in tied modules; 4 calls accelerate's.
  int transformers_major = 4;
};

struct SimulationResult {
  DeviceMap map;                      // cleaned, as from_pretrained stores it
  MaxMemory budgets;                  // max_memory after get_balanced_memory
  std::map<DeviceName, int64_t> used; // bytes placed on each device
  int64_t total_size = 0;             // compute_module_sizes(model)[""]
  std::vector<std::string> offloaded; // map entries on "cpu" or "disk"
};

// compute_module_sizes: bytes per module/tensor path ("" = the whole model), tied tensors counted
// once (under their first name), int/bool tensors at their own size, floats at min(dtype, own).
std::map<std::string, int64_t> compute_module_sizes(const ModuleTree &tree,
                                                    std::vector<std::string> *unknown = nullptr);

SimulationResult simulate_device_map(const ModuleTree &tree, const SimulationRequest &request);

// "0=20GiB,1=24GiB,cpu=64GB" (accelerate's convert_file_size_to_int units); throws
// std::invalid_argument with a message on bad input.
MaxMemory parse_max_memory(const std::string &spec);

std::string format_bytes(int64_t bytes);

} // namespace devlint
