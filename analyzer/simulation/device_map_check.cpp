#include "simulation/device_map_check.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "model/did_you_mean.h"

namespace devlint {

namespace {

std::string last_part(const std::string &path) {
  size_t dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

// Layer indices stay what they are: `transformer.layers.3` suggests `...encoder.layers.3`.
std::vector<std::string> numbers_of(const std::string &path) {
  std::vector<std::string> out;
  std::string part;
  for (char c : path + ".") {
    if (c == '.') {
      if (!part.empty() && part.find_first_not_of("0123456789") == std::string::npos)
        out.push_back(part);
      part.clear();
    } else {
      part += c;
    }
  }
  return out;
}

// Names the same role takes in different models: a renamed head or embedding is still the head.
int role_of(const std::string &leaf) {
  static const std::vector<std::vector<std::string>> roles = {
      {"lm_head", "output_layer", "embed_out", "output", "head"},
      {"word_embeddings", "embed_tokens", "wte", "tok_embeddings", "embedding", "embeddings"},
      {"final_layernorm", "norm", "ln_f", "final_layer_norm", "final_norm"},
      {"layers", "h", "layer", "blocks", "block"}};
  for (size_t i = 0; i < roles.size(); ++i)
    if (std::find(roles[i].begin(), roles[i].end(), leaf) != roles[i].end())
      return static_cast<int>(i);
  return -1;
}

// The map's keys indexed, so that each question is a few lookups instead of a pass over every
// entry (a map of 10^6 keys, most of them matching nothing, must not take minutes).
class MapIndex {
public:
  explicit MapIndex(const DeviceMap &map) {
    for (const auto &entry : map.entries) {
      by_key_.emplace(entry.first, entry.second); // a repeated key: the first one, as device_of
      all_devices_.insert(entry.second);
    }
    for (const auto &entry : by_key_)
      sorted_.push_back(&entry);
    std::sort(sorted_.begin(), sorted_.end(),
              [](const auto *a, const auto *b) { return a->first < b->first; });
  }

  // DeviceMap::device_of: the entry for `path` or for its closest ancestor ("" covers all).
  std::optional<DeviceName> device_of(const std::string &path) const {
    std::string prefix = path;
    while (true) {
      if (auto it = by_key_.find(prefix); it != by_key_.end())
        return it->second;
      if (prefix.empty())
        return std::nullopt;
      size_t dot = prefix.rfind('.');
      prefix.resize(dot == std::string::npos ? 0 : dot);
    }
  }

  // DeviceMap::devices_under.
  std::set<DeviceName> devices_under(const std::string &path) const {
    if (path.empty())
      return all_devices_;
    std::set<DeviceName> out;
    if (auto d = device_of(path))
      out.insert(*d);
    std::string prefix = path + ".";
    auto it = std::lower_bound(sorted_.begin(), sorted_.end(), prefix,
                               [](const auto *e, const std::string &p) { return e->first < p; });
    for (; it != sorted_.end() && (*it)->first.compare(0, prefix.size(), prefix) == 0; ++it)
      out.insert((*it)->second);
    return out;
  }

private:
  std::unordered_map<std::string, DeviceName> by_key_;
  std::vector<const std::pair<const std::string, DeviceName> *> sorted_;
  std::set<DeviceName> all_devices_;
};

// Every module (but the root) and tensor path of the tree: what a key may name.
std::vector<std::string> tree_paths(const ModuleTree &tree) {
  std::vector<std::string> paths;
  for (const auto &[path, node] : named_modules(tree))
    if (!path.empty())
      paths.push_back(path);
  for (const NamedTensor &t : named_tensors(tree, false))
    paths.push_back(t.name);
  return paths;
}

std::string closest_of(const std::vector<std::string> &paths, const std::string &key) {
  std::string best;
  std::tuple<int, size_t, size_t> best_score{99, SIZE_MAX, SIZE_MAX};
  std::string leaf = last_part(key);
  std::vector<std::string> key_numbers = numbers_of(key);
  for (const std::string &p : paths) {
    // Prefer paths that end like the key and keep its indices, then the smallest edit.
    int role = role_of(leaf);
    int leaf_rank = last_part(p) == leaf ? 0 : role >= 0 && role_of(last_part(p)) == role ? 1 : 2;
    int rank = leaf_rank + (numbers_of(p) == key_numbers ? 0 : 3);
    std::tuple<int, size_t, size_t> score{rank, edit_distance(key, p, /*ignore_case=*/false),
                                          p.size()};
    if (score < best_score) {
      best_score = score;
      best = p;
    }
  }
  return best;
}

// A suggestion costs an edit distance against every path: given for the first few unknown keys
// of a map, and for keys of a plausible length, so a hostile map stays linear.
constexpr size_t kMaxSuggestedKeys = 50;
constexpr size_t kMaxSuggestedKeyLength = 256;

} // namespace

std::string closest_path(const ModuleTree &tree, const std::string &key) {
  return closest_of(tree_paths(tree), key);
}

std::vector<DeviceMapProblem> check_device_map(const ModuleTree &tree, const DeviceMap &map,
                                               const std::vector<std::string> &no_split) {
  std::vector<DeviceMapProblem> problems;
  auto modules = named_modules(tree);
  std::vector<std::string> paths = tree_paths(tree);
  std::unordered_set<std::string> known(paths.begin(), paths.end());
  known.insert(""); // the root
  MapIndex index(map);

  size_t suggested = 0;
  for (const auto &[key, device] : map.entries) {
    if (known.count(key))
      continue;
    std::string suggestion;
    if (suggested < kMaxSuggestedKeys && key.size() <= kMaxSuggestedKeyLength) {
      ++suggested;
      suggestion = closest_of(paths, key);
    }
    DeviceMapProblem p{DeviceMapProblemKind::UnknownKey, key, suggestion, {}, {}};
    p.message = "key `" + key + "` matches no module of the model" +
                (p.suggestion.empty() ? "" : "; did you mean `" + p.suggestion + "`?");
    problems.push_back(std::move(p));
  }

  // state_dict(): parameters (tied ones under every name) and persistent buffers.
  DeviceMapProblem missing{DeviceMapProblemKind::MissingParameters, "", "", {}, {}};
  for (const NamedTensor &t : named_tensors(tree, true)) {
    if (!index.device_of(t.name))
      missing.names.push_back(t.name);
  }
  if (!missing.names.empty()) {
    missing.message = "the map gives no device for " + std::to_string(missing.names.size()) +
                      " parameter(s) and buffer(s); from_pretrained fails with \"The device_map "
                      "provided does not give any device for the following parameters\"";
    problems.push_back(std::move(missing));
  }

  for (const auto &[path, node] : modules) {
    if (std::find(no_split.begin(), no_split.end(), node->class_name) == no_split.end())
      continue;
    std::set<DeviceName> devices = index.devices_under(path);
    // Only entries that hold this module's tensors count (the root key "" covers everything).
    if (devices.size() <= 1)
      continue;
    DeviceMapProblem p{DeviceMapProblemKind::CutsNoSplitModule, path, "", {}, {}};
    p.names.assign(devices.begin(), devices.end());
    std::string list;
    for (const DeviceName &d : devices)
      list += (list.empty() ? "" : ", ") + d;
    p.message = "`" + (path.empty() ? std::string("(root)") : path) + "` (" + node->class_name +
                ", in _no_split_modules) is spread over devices " + list +
                "; its forward then mixes devices";
    problems.push_back(std::move(p));
  }

  for (const auto &group : tree.tied_parameters) {
    std::map<std::string, std::string> where;
    std::set<DeviceName> devices;
    for (const std::string &name : group)
      if (auto d = index.device_of(name)) {
        where[name] = *d;
        devices.insert(*d);
      }
    if (devices.size() <= 1)
      continue;
    DeviceMapProblem p{DeviceMapProblemKind::TiedWeightsSplit, group.front(), "", group, {}};
    std::string list;
    for (const auto &[name, d] : where)
      list += (list.empty() ? "" : ", ") + name + " on " + d;
    p.message = "tied weights on different devices: " + list +
                " (accelerate warns; the tie is broken on load)";
    problems.push_back(std::move(p));
  }
  return problems;
}

} // namespace devlint
