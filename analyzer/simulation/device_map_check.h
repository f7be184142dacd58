// Checks a hand-written device map against the module tree, as `from_pretrained` and
// accelerate's `check_device_map` / `check_tied_parameters_on_same_device` would: parameters left
// without a device (loading fails), keys that match no module (accelerate warns; a stale map),
// keys that cut a `_no_split_modules` class, and tied weights on different devices.
#pragma once

#include <string>
#include <vector>

#include "simulation/device_map_simulation.h"
#include "simulation/module_tree.h"

namespace devlint {

enum class DeviceMapProblemKind : uint8_t {
  MissingParameters, // tensors of the state dict that no key covers
  UnknownKey,        // a key that names no module or tensor
  CutsNoSplitModule, // a no-split module spread over several devices
  TiedWeightsSplit,  // tied parameters on different devices
};

struct DeviceMapProblem {
  DeviceMapProblemKind kind;
  std::string key;                // the map key (UnknownKey) or module path
  std::string suggestion;         // UnknownKey: the closest existing path
  std::vector<std::string> names; // missing tensors, tied names, devices...
  std::string message;
};

std::vector<DeviceMapProblem> check_device_map(const ModuleTree &tree, const DeviceMap &map,
                                               const std::vector<std::string> &no_split);

// The existing module or tensor path closest to `key` (edit distance over dotted parts).
std::string closest_path(const ModuleTree &tree, const std::string &key);

} // namespace devlint
