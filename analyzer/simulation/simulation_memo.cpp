#include "simulation/simulation_memo.h"

#include <algorithm>

namespace devlint {

namespace {

void append_tensor(std::string &out, const TreeTensor &t) {
  out += t.name;
  out += t.numel ? ":" + std::to_string(*t.numel) : std::string(":?");
  out += t.is_buffer ? 'b' : 'p';
  out += t.persistent ? 'P' : 'T';
  out += t.integer_dtype ? 'i' : 'f';
  out += std::to_string(t.element_bytes) + "/" + std::to_string(t.storage) + ";";
}

void append_node(std::string &out, const ModuleNode &node, int depth) {
  out += "{" + node.class_name + "|";
  for (const TreeTensor &t : node.parameters)
    append_tensor(out, t);
  out += "|";
  for (const TreeTensor &t : node.buffers)
    append_tensor(out, t);
  for (const auto &[name, child] : node.children) {
    out += name + "=";
    if (child && depth < 256)
      append_node(out, *child, depth + 1);
  }
  out += "}";
}

} // namespace

std::string simulation_fingerprint(const ModuleTree &tree, const SimulationRequest &request) {
  std::string out = std::to_string(static_cast<int>(request.strategy)) + "," +
                    std::to_string(request.gpus) + "," + std::to_string(tree.dtype_bytes) + ",";
  if (request.max_memory)
    for (const auto &[device, bytes] : *request.max_memory)
      out += device + "=" + std::to_string(bytes) + ",";
  out += "|";
  for (const std::string &c : request.no_split_module_classes)
    out += c + ",";
  out += "|";
  for (const auto &group : tree.tied_parameters) {
    for (const std::string &name : group)
      out += name + ",";
    out += ";";
  }
  if (tree.root)
    append_node(out, *tree.root, 0);
  return out;
}

DeviceMap SimulationMemo::map_for(const ModuleTree &tree, const SimulationRequest &request) {
  std::string key = simulation_fingerprint(tree, request);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto &[k, map] : entries_)
      if (k == key)
        return map;
  }
  DeviceMap map = simulate_device_map(tree, request).map;
  std::lock_guard<std::mutex> lock(mutex_);
  ++simulations_run_;
  entries_.emplace_back(std::move(key), map);
  if (entries_.size() > kMaxEntries)
    entries_.pop_front();
  return map;
}

} // namespace devlint
