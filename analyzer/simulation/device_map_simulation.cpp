// A line-by-line port of accelerate's placement functions (see the header for the version). The
// names follow accelerate's so the two can be read side by side.
#include "simulation/device_map_simulation.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "model/text.h"

namespace devlint {

namespace {

// An entry of `modules_to_treat`: a module, or a parameter/buffer of the root or of a split module.
struct Item {
  std::string name;
  const ModuleNode *module = nullptr;
  const TreeTensor *tensor = nullptr;
};

bool is_gpu(const DeviceName &d) { return d != "cpu" && d != "disk" && d != "mps"; }

// module.named_children()
std::vector<Item> children_items(const Item &item) {
  std::vector<Item> out;
  if (!item.module)
    return out;
  for (const auto &[name, child] : item.module->children)
    out.push_back({item.name + "." + name, child, nullptr});
  return out;
}

// module.named_parameters(recurse=False)
std::vector<Item> own_parameter_items(const Item &item) {
  std::vector<Item> out;
  if (!item.module)
    return out;
  for (const TreeTensor &t : item.module->parameters)
    out.push_back({item.name + "." + t.name, nullptr, &t});
  return out;
}

bool cannot_split(const Item &item, const std::vector<std::string> &no_split) {
  return !item.module || item.module->children.empty() ||
         std::find(no_split.begin(), no_split.end(), item.module->class_name) != no_split.end();
}

struct Sizes {
  // Hashed: the simulation looks sizes up for every module it treats, again after every split.
  std::unordered_map<std::string, int64_t> by_name;
  std::vector<std::string> insertion_order; // defaultdict's order, for get_balanced_memory
  int64_t at(const std::string &name) const {
    auto it = by_name.find(name);
    return it == by_name.end() ? 0 : it->second;
  }
};

// Where module sizes saturate (1 PiB): a sum of thousands of them still fits in int64.
constexpr int64_t kMaxModuleBytes = int64_t{1} << 50;

// `tensors_shared`: false counts every name of a shared tensor as a tensor of its own (the model
// transformers 4 sizes for its budgets, see simulate_device_map).
// `fp32_parameters`: parameter names sized as float32 whatever the dtype (special_dtypes).
Sizes module_sizes(const ModuleTree &tree, std::vector<std::string> *unknown,
                   bool tensors_shared = true,
                   const std::unordered_set<std::string> &fp32_parameters = {}) {
  Sizes sizes;
  std::unordered_set<int> seen_storage;
  std::string key;
  // named_module_tensors(recurse=True): named_parameters() then named_buffers(), each without
  // duplicates (a tied tensor is counted under its first name only).
  for (const NamedTensor &t : named_tensors(tree, false)) {
    if (tensors_shared && !seen_storage.insert(t.tensor->storage).second)
      continue;
    int64_t numel = 0;
    if (t.tensor->numel)
      numel = *t.tensor->numel;
    else if (unknown)
      unknown->push_back(t.name);
    // numel is at most kMaxTensorElements; the sums saturate, far above any real model, so a
    // hostile model (millions of the largest tensors) cannot overflow them.
    int64_t bytes = !t.tensor->is_buffer && fp32_parameters.count(t.name) ? numel * 4
                    : t.tensor->integer_dtype
                        ? numel * t.tensor->element_bytes
                        : numel * std::min(tree.dtype_bytes, t.tensor->element_bytes);
    auto add = [&](const std::string &name) {
      auto [it, inserted] = sizes.by_name.try_emplace(name, 0);
      if (inserted)
        sizes.insertion_order.push_back(name);
      it->second = std::min(it->second + bytes, kMaxModuleBytes);
    };
    key.clear();
    add(key);
    size_t start = 0;
    while (true) {
      size_t dot = t.name.find('.', start);
      key.assign(t.name, 0, dot);
      add(key);
      if (dot == std::string::npos)
        break;
      start = dot + 1;
    }
  }
  return sizes;
}

std::pair<int64_t, std::vector<std::string>>
get_max_layer_size(std::vector<Item> modules, const Sizes &sizes,
                   const std::vector<std::string> &no_split) {
  int64_t max_size = 0;
  std::vector<std::string> layer_names;
  // accelerate pops the front and puts a split module's children before the rest: a preorder
  // walk. A stack holding the rest in reverse visits the same order without copying the list.
  std::vector<Item> to_treat(std::make_move_iterator(modules.rbegin()),
                             std::make_move_iterator(modules.rend()));
  size_t guard = 0;
  while (!to_treat.empty() && ++guard < 10'000'000) {
    Item item = std::move(to_treat.back());
    to_treat.pop_back();
    std::vector<Item> children = children_items(item);
    if (children.empty() || cannot_split(item, no_split)) {
      int64_t size = sizes.at(item.name);
      if (size > max_size) {
        max_size = size;
        layer_names = {item.name};
      } else if (size == max_size) {
        layer_names.push_back(item.name);
      }
    } else {
      to_treat.insert(to_treat.end(), std::make_move_iterator(children.rbegin()),
                      std::make_move_iterator(children.rend()));
    }
  }
  return {max_size, layer_names};
}

const ModuleNode *module_at(const ModuleTree &tree, const std::string &path) {
  const ModuleNode *node = tree.root;
  size_t start = 0;
  while (node && start <= path.size()) {
    size_t dot = path.find('.', start);
    node = node->child(path.substr(start, dot == std::string::npos ? dot : dot - start));
    if (dot == std::string::npos)
      break;
    start = dot + 1;
  }
  return node;
}

MaxMemory apply_budgets(MaxMemory max_memory, int64_t per_gpu);

// transformers 5's own buffer (integrations/accelerate.py, get_balanced_memory): the largest
// module of any no-split class, not the first of each class (a decoder block with cross-attention
// outweighs an encoder block), and the mean over the modules that hold tensors themselves
// (compute_module_sizes' `leaves_module_sizes`, the parent of every counted tensor).
int64_t transformers5_buffer(const ModuleTree &tree, const std::vector<std::string> &no_split,
                             const Sizes &sizes) {
  int64_t largest_block = 0;
  if (!no_split.empty())
    for (const auto &[path, node] : named_modules(tree))
      if (std::find(no_split.begin(), no_split.end(), node->class_name) != no_split.end())
        largest_block = std::max(largest_block, sizes.at(path));
  std::map<std::string, int64_t> holders;
  std::unordered_set<int> seen_storage;
  for (const NamedTensor &t : named_tensors(tree, false)) {
    if (!seen_storage.insert(t.tensor->storage).second || t.name.find('.') == std::string::npos)
      continue;
    holders[t.name.substr(0, t.name.rfind('.'))] += 0;
  }
  int64_t sum = 0;
  for (auto &[path, size] : holders) {
    // The module's own tensors: its size less its children's.
    int64_t children = 0;
    if (const ModuleNode *node = module_at(tree, path))
      for (const auto &[name, child] : node->children)
        children += sizes.at(path + "." + name);
    size = sizes.at(path) - children;
    sum += size;
  }
  int64_t mean = static_cast<int64_t>(static_cast<double>(sum) /
                                      static_cast<double>(std::max<size_t>(holders.size(), 1)));
  return static_cast<int64_t>(1.25 * static_cast<double>(std::max(largest_block, mean)));
}

// get_balanced_memory (low_zero=False, as device_map="auto" / "balanced").
MaxMemory get_balanced_memory(const ModuleTree &tree, MaxMemory max_memory, bool user_set,
                              const std::vector<std::string> &no_split, const Sizes &sizes,
                              int transformers_major) {
  int num_devices = 0;
  for (const auto &[d, mem] : max_memory)
    if (is_gpu(d) && mem > 0)
      ++num_devices;
  if (num_devices == 0)
    return max_memory;
  if (num_devices == 1 && !user_set)
    for (auto &[d, mem] : max_memory)
      if (is_gpu(d)) {
        mem = static_cast<int64_t>(static_cast<double>(mem) * 0.9);
        break;
      }
  int64_t per_gpu = sizes.at("") / num_devices;
  if (transformers_major >= 5)
    return apply_budgets(max_memory, per_gpu + transformers5_buffer(tree, no_split, sizes));
  int64_t buffer = 0;
  if (!no_split.empty()) {
    std::map<std::string, int64_t> no_split_children;
    for (const std::string &name : sizes.insertion_order) {
      if (name.empty())
        continue;
      const ModuleNode *node = module_at(tree, name);
      if (node && std::find(no_split.begin(), no_split.end(), node->class_name) != no_split.end() &&
          !no_split_children.count(node->class_name))
        no_split_children[node->class_name] = sizes.at(name);
      if (no_split_children.size() ==
          std::set<std::string>(no_split.begin(), no_split.end()).size())
        break;
    }
    for (const auto &[c, size] : no_split_children)
      buffer = std::max(buffer, size);
  }
  // Mean size of the leaf modules: leaves of the sizes once the tensors are removed.
  auto leaves_of = [](const std::vector<std::string> &names) {
    std::unordered_map<std::string, int> children;
    for (const std::string &n : names) {
      if (n.empty() || n.find('.') == std::string::npos)
        continue;
      children[n.substr(0, n.rfind('.'))]++;
    }
    std::vector<std::string> leaves;
    for (const std::string &n : names)
      if (!n.empty() && !children.count(n))
        leaves.push_back(n);
    return leaves;
  };
  std::vector<std::string> leaves = leaves_of(sizes.insertion_order);
  std::unordered_set<std::string> leaf_set(leaves.begin(), leaves.end());
  std::vector<std::string> modules;
  for (const std::string &n : sizes.insertion_order)
    if (!leaf_set.count(n))
      modules.push_back(n);
  leaves = leaves_of(modules);
  int64_t sum = 0;
  for (const std::string &n : leaves)
    sum += sizes.at(n);
  int64_t mean_leaves = static_cast<int64_t>(
      static_cast<double>(sum) / static_cast<double>(std::max<size_t>(leaves.size(), 1)));
  buffer = static_cast<int64_t>(1.25 * static_cast<double>(std::max(buffer, mean_leaves)));
  return apply_budgets(max_memory, per_gpu + buffer);
}

// Every GPU but the last gets min(per_gpu, its memory); the last keeps its whole memory in case
// the buffer is not enough.
MaxMemory apply_budgets(MaxMemory max_memory, int64_t per_gpu) {
  std::vector<size_t> gpu_positions;
  for (size_t i = 0; i < max_memory.size(); ++i)
    if (is_gpu(max_memory[i].first) && max_memory[i].second > 0)
      gpu_positions.push_back(i);
  std::sort(gpu_positions.begin(), gpu_positions.end(), [&](size_t a, size_t b) {
    return std::stoi(max_memory[a].first) < std::stoi(max_memory[b].first);
  });
  for (size_t k = 0; k + 1 < gpu_positions.size(); ++k) {
    int64_t &mem = max_memory[gpu_positions[k]].second;
    mem = std::min(per_gpu, mem);
  }
  return max_memory;
}

// clean_device_map: a module whose entries all share one device becomes one entry (appended, as
// a Python dict re-inserts it). Children are visited in first-appearance order; accelerate
// iterates a set there, so only the regrouped entries' order may differ from a real run.
void clean_device_map(std::vector<std::pair<std::string, DeviceName>> &map,
                      const std::string &module_name) {
  std::string prefix = module_name.empty() ? "" : module_name + ".";
  std::vector<DeviceName> values;
  for (const auto &[k, v] : map)
    if (starts_with(k, prefix))
      values.push_back(v);
  std::set<DeviceName> distinct(values.begin(), values.end());
  if (distinct.size() == 1 && values.size() > 1) {
    DeviceName v = values[0];
    map.erase(std::remove_if(map.begin(), map.end(),
                             [&](const auto &e) { return starts_with(e.first, prefix); }),
              map.end());
    map.emplace_back(module_name, v);
  }
  size_t depth =
      module_name.empty()
          ? 1
          : static_cast<size_t>(std::count(module_name.begin(), module_name.end(), '.')) + 2;
  std::vector<std::string> children;
  for (const auto &[k, v] : map) {
    if (!starts_with(k, prefix) || k.size() <= module_name.size())
      continue;
    std::string child;
    size_t parts = 0, i = 0;
    for (; i < k.size(); ++i)
      if (k[i] == '.' && ++parts == depth)
        break;
    child = k.substr(0, i);
    if (std::find(children.begin(), children.end(), child) == children.end())
      children.push_back(child);
  }
  for (const std::string &child : children)
    clean_device_map(map, child);
}

} // namespace

bool key_covers(const std::string &key, const std::string &path) {
  return key.empty() ||
         (starts_with(path, key) && (path.size() == key.size() || path[key.size()] == '.'));
}

std::optional<DeviceName> DeviceMap::device_of(const std::string &path) const {
  const std::pair<std::string, DeviceName> *best = nullptr;
  for (const auto &e : entries)
    if (key_covers(e.first, path))
      if (!best || e.first.size() > best->first.size())
        best = &e;
  if (!best)
    return std::nullopt;
  return best->second;
}

std::set<DeviceName> DeviceMap::devices_under(const std::string &path) const {
  std::set<DeviceName> out;
  if (auto d = device_of(path))
    out.insert(*d);
  const std::string prefix = path + ".";
  for (const auto &[k, v] : entries)
    if (path.empty() || starts_with(k, prefix))
      out.insert(v);
  return out;
}

std::set<DeviceName> DeviceMap::devices() const {
  std::set<DeviceName> out;
  for (const auto &[k, v] : entries)
    out.insert(v);
  return out;
}

std::map<std::string, int64_t> compute_module_sizes(const ModuleTree &tree,
                                                    std::vector<std::string> *unknown) {
  Sizes sizes = module_sizes(tree, unknown);
  return {sizes.by_name.begin(), sizes.by_name.end()};
}

// accelerate's find_tied_parameters (utils/modeling.py, the one transformers 4 calls) groups the
// names of `named_parameters(remove_duplicate=False)`, which walks every path to a module: T5's
// shared embedding, built into both stacks, is also `encoder.embed_tokens` and
// `decoder.embed_tokens` there, each name a member of the group. Sorted as accelerate returns them.
std::vector<std::vector<std::string>> tied_groups_every_path(const ModuleTree &tree) {
  std::map<int, std::vector<std::string>> by_storage;
  std::vector<const ModuleNode *> stack;
  size_t visits = 0;
  std::function<void(const std::string &, const ModuleNode *)> walk = [&](const std::string &path,
                                                                          const ModuleNode *node) {
    // A module inside itself would never end; the cap bounds a hostile tree's shared modules.
    if (std::find(stack.begin(), stack.end(), node) != stack.end() || ++visits > 1'000'000)
      return;
    stack.push_back(node);
    for (const TreeTensor &t : node->parameters)
      by_storage[t.storage].push_back(path.empty() ? t.name : path + "." + t.name);
    for (const auto &[name, child] : node->children)
      walk(path.empty() ? name : path + "." + name, child);
    stack.pop_back();
  };
  walk("", tree.root);
  std::vector<std::vector<std::string>> groups;
  for (auto &[storage, names] : by_storage)
    if (names.size() > 1) {
      std::sort(names.begin(), names.end());
      names.erase(std::unique(names.begin(), names.end()), names.end());
      if (names.size() > 1)
        groups.push_back(names);
    }
  return groups;
}

// transformers 4's from_pretrained (modeling_utils.py of 4.48) keeps `_keep_in_fp32_modules` in
// float32 only for a float16 load (`use_keep_in_fp32_modules = (cls._keep_in_fp32_modules is not
// None) and (torch_dtype == torch.float16)`), and passes accelerate `special_dtypes = {name:
// torch.float32 for name, _ in model.named_parameters() if any(m in name for m in
// keep_in_fp32_modules)}`: a fragment anywhere in the dotted name, not a whole component.
std::unordered_set<std::string> keep_in_fp32_parameters(const ModuleTree &tree,
                                                        int transformers_major) {
  std::unordered_set<std::string> names;
  if (transformers_major >= 5 || tree.dtype_name != "float16" || tree.keep_in_fp32_modules.empty())
    return names;
  for (const NamedTensor &t : named_tensors(tree, false))
    if (!t.tensor->is_buffer)
      for (const std::string &fragment : tree.keep_in_fp32_modules)
        if (t.name.find(fragment) != std::string::npos) {
          names.insert(t.name);
          break;
        }
  return names;
}

SimulationResult simulate_device_map(const ModuleTree &tree, const SimulationRequest &request) {
  SimulationResult result;
  if (!tree.root)
    return result;
  const std::unordered_set<std::string> fp32_parameters =
      keep_in_fp32_parameters(tree, request.transformers_major);
  Sizes sizes = module_sizes(tree, nullptr, true, fp32_parameters);
  result.total_size = sizes.at("");
  const std::vector<std::string> &no_split = request.no_split_module_classes;

  bool user_set = request.max_memory.has_value();
  MaxMemory max_memory;
  if (user_set) {
    max_memory = *request.max_memory;
  } else {
    // GPUs with room for far more than their share, and the CPU: nothing is offloaded.
    constexpr int64_t kPlenty = int64_t{1} << 50;
    for (int i = 0; i < request.gpus; ++i)
      max_memory.emplace_back(std::to_string(i), kPlenty);
    max_memory.emplace_back("cpu", kPlenty);
  }
  // transformers 4's from_pretrained sizes the budgets on the model built under accelerate's
  // init_empty_weights, whose register_parameter wraps every parameter in a new meta Parameter (a
  // weight assigned from another module's is no longer shared), and before `model.tie_weights()`
  // ties the output embeddings (no_init_weights skipped it in post_init). Only a module reachable
  // under two names still counts once. infer_auto_device_map then runs on the tied model.
  if (request.strategy == PlacementStrategy::Balanced)
    max_memory = get_balanced_memory(tree, max_memory, user_set, no_split,
                                     request.transformers_major >= 5
                                         ? sizes
                                         : module_sizes(tree, nullptr, false, fp32_parameters),
                                     request.transformers_major);
  result.budgets = max_memory;

  // _init_infer_auto_device_map
  std::vector<DeviceName> devices;
  for (const auto &[d, mem] : max_memory)
    devices.push_back(d);
  if (std::find(devices.begin(), devices.end(), "disk") == devices.end())
    devices.push_back("disk");
  std::vector<DeviceName> gpus;
  for (const DeviceName &d : devices)
    if (d != "cpu" && d != "disk")
      gpus.push_back(d);
  std::vector<DeviceName> main_devices =
      gpus.empty() ? std::vector<DeviceName>{"cpu"} : std::vector<DeviceName>{gpus[0], "cpu"};
  auto memory_of = [&](const DeviceName &d) -> std::optional<int64_t> {
    for (const auto &[k, v] : max_memory)
      if (k == d)
        return v;
    return std::nullopt; // disk: unlimited
  };
  // from_pretrained in transformers 5 runs its own copy of the placement functions
  // (integrations/accelerate.py); 4.x calls accelerate's (utils/modeling.py).
  const bool transformers5 = request.transformers_major >= 5;
  const std::vector<std::vector<std::string>> tied_parameters =
      transformers5 ? tree.tied_parameters : tied_groups_every_path(tree);

  std::vector<Item> modules_to_treat;
  Item root{"", tree.root, nullptr};
  for (const TreeTensor &t : tree.root->parameters)
    modules_to_treat.push_back({t.name, nullptr, &t});
  for (const auto &[name, child] : tree.root->children)
    modules_to_treat.push_back({name, child, nullptr});
  for (const TreeTensor &t : tree.root->buffers)
    modules_to_treat.push_back({t.name, nullptr, &t});

  std::vector<std::pair<std::string, DeviceName>> device_map;
  size_t current_device = 0;
  std::map<DeviceName, int64_t> used;
  auto modules_only = [](const std::vector<Item> &items) {
    std::vector<Item> out;
    for (const Item &i : items)
      if (i.module)
        out.push_back(i);
    return out;
  };
  auto [max_layer_size, max_layer_names] = get_max_layer_size(modules_to_treat, sizes, no_split);

  size_t guard = 0;
  while (!modules_to_treat.empty() && ++guard < 10'000'000) {
    Item item = modules_to_treat.front();
    modules_to_treat.erase(modules_to_treat.begin());
    const std::string &name = item.name;
    max_layer_names.erase(std::remove_if(max_layer_names.begin(), max_layer_names.end(),
                                         [&](const std::string &n) {
                                           return n == name || starts_with(n, name + ".");
                                         }),
                          max_layer_names.end());
    if (max_layer_names.empty())
      std::tie(max_layer_size, max_layer_names) =
          get_max_layer_size(modules_only(modules_to_treat), sizes, no_split);
    int64_t module_size = sizes.at(name);

    // Tied groups with one member inside this item and one outside.
    auto inside = [&](const std::string &k) {
      return (k + ".").find(name + ".") != std::string::npos;
    };
    std::vector<std::string> tied_params;
    for (const auto &group : tied_parameters) {
      bool any = std::any_of(group.begin(), group.end(), inside);
      bool all = std::all_of(group.begin(), group.end(), inside);
      if (any && !all)
        for (const std::string &p : group)
          if (!inside(p))
            tied_params.push_back(p);
    }

    if (current_device >= devices.size())
      break;
    DeviceName device = devices[current_device];
    // disk (and a device missing from max_memory) has no limit.
    std::optional<int64_t> device_memory = device == "disk" ? std::nullopt : memory_of(device);
    const bool limited = device_memory.has_value();
    int64_t limit = limited ? *device_memory : INT64_MAX;
    int64_t current_memory_reserved = 0;
    if (limited &&
        std::find(main_devices.begin(), main_devices.end(), device) != main_devices.end()) {
      limit -= max_layer_size;
      current_memory_reserved = max_layer_size;
    }

    // get_module_size_with_ties
    int64_t module_size_with_ties = module_size;
    std::vector<std::string> tied_module_names;
    std::vector<Item> tied_modules;
    for (const std::string &tied_param : tied_params) {
      auto it = std::find_if(modules_to_treat.begin(), modules_to_treat.end(),
                             [&](const Item &i) { return starts_with(tied_param, i.name + "."); });
      if (it == modules_to_treat.end())
        continue;
      if (transformers5) { // integrations/accelerate.py get_module_size_with_ties
        if (std::find(tied_module_names.begin(), tied_module_names.end(), it->name) !=
            tied_module_names.end())
          continue;
        tied_module_names.push_back(it->name);
        tied_modules.push_back(*it);
        module_size_with_ties += sizes.at(it->name);
        continue;
      }
      tied_module_names.push_back(it->name);
      tied_modules.push_back(*it);
      module_size_with_ties += sizes.at(it->name) - sizes.at(tied_param);
    }

    if (!limited || used[device] + module_size_with_ties <= limit) {
      used[device] += module_size_with_ties;
      device_map.emplace_back(name, device);
      for (const std::string &tied_name : tied_module_names) {
        auto it = std::find_if(modules_to_treat.begin(), modules_to_treat.end(),
                               [&](const Item &i) { return i.name == tied_name; });
        if (it != modules_to_treat.end())
          modules_to_treat.erase(it);
        device_map.emplace_back(tied_name, device);
      }
      continue;
    }

    // The module fits but not with its tied modules: split a tied module if one can be split.
    if (!tied_params.empty() && used[device] + module_size <= limit) {
      bool split_happened = false;
      for (size_t k = 0; k < tied_modules.size(); ++k) {
        const Item &tied = tied_modules[k];
        if (cannot_split(tied, no_split))
          continue;
        std::vector<Item> children = own_parameter_items(tied);
        for (const Item &c : children_items(tied))
          children.push_back(c);
        auto index = std::find_if(modules_to_treat.begin(), modules_to_treat.end(),
                                  [&](const Item &i) { return i.name == tied_module_names[k]; });
        std::vector<Item> next{item};
        next.insert(next.end(), modules_to_treat.begin(), index);
        next.insert(next.end(), children.begin(), children.end());
        if (index != modules_to_treat.end())
          next.insert(next.end(), index + 1, modules_to_treat.end());
        modules_to_treat = std::move(next);
        std::tie(max_layer_size, max_layer_names) =
            get_max_layer_size(modules_only(modules_to_treat), sizes, no_split);
        split_happened = true;
        break;
      }
      if (split_happened)
        continue;
    }

    // The module does not fit: split it, or go to the next device. transformers 5 splits it
    // also when it fits alone but not with its tied modules and none of those could be split.
    if (transformers5 || used[device] + module_size >= limit) {
      if (!cannot_split(item, no_split)) {
        std::vector<Item> children = own_parameter_items(item);
        for (const Item &c : children_items(item))
          children.push_back(c);
        children.insert(children.end(), modules_to_treat.begin(), modules_to_treat.end());
        modules_to_treat = std::move(children);
        std::tie(max_layer_size, max_layer_names) =
            get_max_layer_size(modules_only(modules_to_treat), sizes, no_split);
        continue;
      }
    }
    used[device] += current_memory_reserved;
    ++current_device;
    modules_to_treat.insert(modules_to_treat.begin(), item);
  }
  (void)root;
  for (auto &[d, bytes] : used)
    if (bytes > 0)
      result.used[d] = bytes;
  clean_device_map(device_map, "");
  result.map.entries = device_map;
  for (const auto &[k, v] : device_map)
    if (!is_gpu(v))
      result.offloaded.push_back(k.empty() ? "(the whole model)" : k);
  return result;
}

MaxMemory parse_max_memory(const std::string &spec) {
  MaxMemory out;
  std::stringstream in(spec);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty())
      continue;
    size_t eq = item.find('=');
    if (eq == std::string::npos)
      throw std::invalid_argument("`" + item + "`: expected DEVICE=SIZE, e.g. 0=20GiB");
    std::string device = item.substr(0, eq), size = item.substr(eq + 1);
    if (device != "cpu" && device != "disk" &&
        (device.empty() || device.find_first_not_of("0123456789") != std::string::npos))
      throw std::invalid_argument("`" + device + "`: a device is a GPU index, `cpu` or `disk`");
    // convert_file_size_to_int
    std::string upper = size;
    for (char &c : upper)
      c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    struct Unit {
      const char *suffix;
      double factor;
    };
    static const Unit units[] = {{"GIB", 1024.0 * 1024 * 1024},
                                 {"MIB", 1024.0 * 1024},
                                 {"KIB", 1024.0},
                                 {"GB", 1e9},
                                 {"MB", 1e6},
                                 {"KB", 1e3}};
    double bytes = -1;
    try {
      bool matched = false;
      for (const Unit &u : units) {
        size_t n = std::strlen(u.suffix);
        if (upper.size() > n && upper.compare(upper.size() - n, n, u.suffix) == 0) {
          size_t used_chars = 0;
          std::string number = size.substr(0, size.size() - n);
          double v = std::stod(number, &used_chars);
          if (used_chars != number.size())
            throw std::invalid_argument("");
          bytes = v * u.factor;
          // accelerate: a lowercase "b" means bits for the decimal units
          if (size.back() == 'b' && u.suffix[1] == 'B' && std::strlen(u.suffix) == 2)
            bytes /= 8;
          matched = true;
          break;
        }
      }
      if (!matched) {
        size_t used_chars = 0;
        long long v = std::stoll(size, &used_chars);
        if (used_chars != size.size())
          throw std::invalid_argument("");
        bytes = static_cast<double>(v);
      }
    } catch (const std::exception &) {
      throw std::invalid_argument("`" + size +
                                  "`: a size is bytes or a number with a unit "
                                  "(GiB, MiB, KiB, GB, MB, KB)");
    }
    if (bytes < 0)
      throw std::invalid_argument("`" + size + "`: a size cannot be negative");
    for (const auto &[d, b] : out)
      if (d == device)
        throw std::invalid_argument("device `" + device + "` given twice");
    out.emplace_back(device, static_cast<int64_t>(bytes));
  }
  if (out.empty())
    throw std::invalid_argument("no device given");
  // get_max_memory: GPUs sorted by index, then mps/cpu/disk.
  std::stable_sort(out.begin(), out.end(), [](const auto &a, const auto &b) {
    auto rank = [](const DeviceName &d) { return d == "cpu" ? 1 : d == "disk" ? 2 : 0; };
    if (rank(a.first) != rank(b.first))
      return rank(a.first) < rank(b.first);
    if (rank(a.first) == 0)
      return std::stoll(a.first) < std::stoll(b.first);
    return false;
  });
  return out;
}

std::string format_bytes(int64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, "%.2f %s", v, units[u]);
  return buf;
}

} // namespace devlint
