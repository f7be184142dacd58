#include "placement/device_map_check.h"

#include <algorithm>
#include <map>
#include <set>

namespace devlint {

namespace {

bool covers(const std::string &key, const std::string &name) {
  return key.empty() || key == name || name.compare(0, key.size() + 1, key + ".") == 0;
}

size_t edit_distance(const std::string &a, const std::string &b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = up;
    }
  }
  return row[b.size()];
}

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

} // namespace

std::string closest_path(const ModuleTree &tree, const std::string &key) {
  std::vector<std::string> paths;
  for (const auto &[path, node] : named_modules(tree))
    if (!path.empty())
      paths.push_back(path);
  for (const NamedTensor &t : named_tensors(tree, false))
    paths.push_back(t.name);
  std::string best;
  std::tuple<int, size_t, size_t> best_score{99, SIZE_MAX, SIZE_MAX};
  std::string leaf = last_part(key);
  std::vector<std::string> key_numbers = numbers_of(key);
  for (const std::string &p : paths) {
    // Prefer paths that end like the key and keep its indices, then the smallest edit.
    int role = role_of(leaf);
    int leaf_rank = last_part(p) == leaf ? 0 : role >= 0 && role_of(last_part(p)) == role ? 1 : 2;
    int rank = leaf_rank + (numbers_of(p) == key_numbers ? 0 : 3);
    std::tuple<int, size_t, size_t> score{rank, edit_distance(key, p), p.size()};
    if (score < best_score) {
      best_score = score;
      best = p;
    }
  }
  return best;
}

std::vector<DeviceMapProblem> check_device_map(const ModuleTree &tree, const DeviceMap &map,
                                               const std::vector<std::string> &no_split) {
  std::vector<DeviceMapProblem> problems;
  auto modules = named_modules(tree);
  std::set<std::string> known;
  for (const auto &[path, node] : modules)
    known.insert(path);
  for (const NamedTensor &t : named_tensors(tree, false))
    known.insert(t.name);

  for (const auto &[key, device] : map.entries) {
    if (known.count(key))
      continue;
    DeviceMapProblem p{DeviceMapProblemKind::UnknownKey, key, closest_path(tree, key), {}, {}};
    p.message = "key `" + key + "` matches no module of the model" +
                (p.suggestion.empty() ? "" : "; did you mean `" + p.suggestion + "`?");
    problems.push_back(std::move(p));
  }

  // state_dict(): parameters (tied ones under every name) and persistent buffers.
  DeviceMapProblem missing{DeviceMapProblemKind::MissingParameters, "", "", {}, {}};
  for (const NamedTensor &t : named_tensors(tree, true)) {
    bool covered = std::any_of(map.entries.begin(), map.entries.end(),
                               [&](const auto &e) { return covers(e.first, t.name); });
    if (!covered)
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
    std::set<DeviceName> devices = map.devices_under(path);
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
      if (auto d = map.device_of(name)) {
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
