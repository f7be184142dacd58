#include "driver/placement_rank.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "diagnostics/member_origin.h"
#include "driver/model_setup.h"
#include "driver/passed_down_arguments.h"
#include "driver/source_reading.h"
#include "frontend/python/python_frontend.h"
#include "model/file_input.h"
#include "model/text.h"
#include "placement/condition_text.h"
#include "placement/origin.h"
#include "simulation/device_map_simulation.h"
#include "simulation/simulation_memo.h"

namespace devlint {

namespace {

// PretrainedConfig's task attributes (configuration_utils.py: `num_labels` through
// `id2label`/`label2id`, `problem_type`), which fine-tuning sets with from_pretrained's
// keywords whatever the checkpoint chose.
bool is_task_setting(std::string_view key) {
  return key == "num_labels" || key == "problem_type" || key == "id2label" || key == "label2id";
}

struct Scenario {
  std::string name; // "3 GPUs", "max_memory 0=20GiB,1=24GiB", "the map in load.py"
  DeviceMap map;
};

// A model's module paths, read once: ranking asks for them per finding, map and path.
struct TreeIndex {
  const ModuleNode *root;
  std::vector<std::pair<std::string, const ModuleNode *>> modules; // pre-order
  std::unordered_map<std::string, size_t> position;                // path -> index in modules
  std::unordered_set<std::string> tensors;
  std::unordered_set<std::string> non_persistent_buffers; // not in state_dict

  explicit TreeIndex(const ModuleTree &tree) : root(tree.root), modules(named_modules(tree)) {
    for (size_t i = 0; i < modules.size(); ++i)
      position.emplace(modules[i].first, i);
    for (const NamedTensor &t : named_tensors(tree, false)) {
      tensors.insert(t.name);
      if (t.tensor && t.tensor->is_buffer && !t.tensor->persistent)
        non_persistent_buffers.insert(t.name);
    }
  }
  const ModuleNode *module(const std::string &path) const {
    auto it = position.find(path);
    return it == position.end() ? nullptr : modules[it->second].second;
  }
  bool has(const std::string &path) const { return position.count(path) || tensors.count(path); }
  // The module at `path` and those below it, in pre-order (a contiguous run of `modules`).
  template <typename Visit> void for_subtree(const std::string &path, Visit visit) const {
    auto it = position.find(path);
    if (it == position.end())
      return;
    for (size_t i = it->second; i < modules.size() && key_covers(path, modules[i].first); ++i)
      visit(modules[i].first);
  }
};

struct PlacedModel {
  std::unique_ptr<ModelSetup> setup;
  std::unique_ptr<TreeIndex> index;
  std::vector<Scenario> scenarios;
  std::map<std::string, std::vector<std::string>> paths_by_class;
};

std::string join(const std::string &a, const std::string &b) {
  if (a.empty())
    return b;
  if (b.empty())
    return a;
  return a + "." + b;
}

std::string label(const DeviceName &d) { return d == "cpu" || d == "disk" ? d : "cuda:" + d; }

std::string labels(const std::set<DeviceName> &devices, const char *conjunction = " and ") {
  std::string out;
  for (const DeviceName &d : devices)
    out += (out.empty() ? "" : conjunction) + label(d);
  return out;
}

// "layers 0-13" for the elements of a ModuleList on one device.
std::string layer_ranges(const TreeIndex &tree, const DeviceMap &map, const std::string &list,
                         const DeviceName &device) {
  const ModuleNode *node = tree.module(list);
  if (!node)
    return "";
  std::vector<std::string> on;
  for (const auto &[name, child] : node->children)
    if (map.device_of(join(list, name)) == device)
      on.push_back(name);
  if (on.empty())
    return "";
  std::string leaf = list.substr(list.rfind('.') == std::string::npos ? 0 : list.rfind('.') + 1);
  return leaf + " " + on.front() + (on.size() > 1 ? "-" + on.back() : "");
}

// Whether the module at `path` is reached through the first item of every module above it
// (accelerate walks a module's own parameters, then its children, in registration order).
bool on_first_chain(const ModuleNode *root, const std::string &path) {
  const ModuleNode *node = root;
  size_t pos = 0;
  while (node && pos <= path.size()) {
    size_t dot = path.find('.', pos);
    std::string segment =
        path.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
    if (!node->parameters.empty() || node->children.empty() ||
        node->children.front().first != segment)
      return false;
    node = node->children.front().second;
    if (dot == std::string::npos)
      return true;
    pos = dot + 1;
  }
  return false;
}

// A map given by the user (a JSON object's keys come back sorted) in the model's registration
// order, as accelerate's own maps list them: the ranking reads the entry before a module as the
// one that ran before it.
void in_registration_order(DeviceMap &map, const TreeIndex &tree) {
  auto position = [&](const std::string &key) {
    for (std::string path = key;;) {
      auto it = tree.position.find(path);
      if (it != tree.position.end())
        return it->second;
      size_t dot = path.rfind('.');
      if (dot == std::string::npos)
        return tree.position.count("") ? tree.position.at("") : size_t{0};
      path.erase(dot); // a tensor's key: its module's place
    }
  };
  std::stable_sort(map.entries.begin(), map.entries.end(), [&](const auto &a, const auto &b) {
    return position(a.first) < position(b.first);
  });
}

// Where the module at `path` leaves its output: on its map entry's device when it (or a module
// above it) has one, its hook keeping the output there. A split module has no hook: what it
// returns is where its last part left it, in practice on the device of its last registered
// submodule (a head's decoder after its transform, wherever a tied weight put the decoder's map
// entry).
// Whether `forward` uses its class's child `name` only for its weights (`self.decoder.weight`,
// `self.dense.bias`): the child's own forward never runs there.
bool only_weights_read(const FunctionDef &forward, std::string_view name) {
  bool other_use = false, weight_read = false;
  std::function<void(const Expr *, int)> walk = [&](const Expr *e, int depth) {
    if (!e || depth > 64 || other_use)
      return;
    if (e->kind == ExprKind::Attribute && is_self_attribute(e->operands[0], name)) {
      bool weight = e->text == "weight" || e->text == "bias";
      weight_read |= weight;
      other_use |= !weight;
      return;
    }
    if (is_self_attribute(e, name)) {
      other_use = true;
      return;
    }
    for (const Expr *o : e->operands)
      walk(o, depth + 1);
    for (const Keyword &k : e->keywords)
      walk(k.value, depth + 1);
  };
  find_statement(forward.body, [&](const Stmt *st) {
    for_each_expression(st, [&](const Expr *root) { walk(root, 0); });
    return other_use;
  });
  return weight_read && !other_use;
}

// `skipped_weights_only`: set when the answer left out a child whose weights were only read, here
// or in a split child below (a head whose split predictions module reads its tied decoder's
// weight returns from the transform, not from the decoder registered after it).
std::optional<DeviceName> output_device(const TreeIndex &tree, const DeviceMap &map,
                                        const std::string &path,
                                        bool *skipped_weights_only = nullptr) {
  if (auto d = map.device_of(path))
    return d;
  // Of its children, the last one its forward runs: one whose weights it only reads (a tied
  // decoder's matrix in a matmul) makes nothing it returns.
  const ModuleNode *node = tree.module(path);
  const FunctionDef *forward = node && node->cls ? node->cls->find_method("forward") : nullptr;
  if (forward && !node->children.empty()) {
    std::optional<DeviceName> last;
    bool skipped = false;
    for (const auto &[name, child] : node->children) {
      if (only_weights_read(*forward, name)) {
        skipped = true;
        continue;
      }
      bool skipped_below = false;
      if (auto d = output_device(tree, map, join(path, name), &skipped_below)) {
        last = d;
        skipped = skipped || skipped_below;
      }
    }
    if (skipped && last) {
      if (skipped_weights_only)
        *skipped_weights_only = true;
      return last;
    }
  }
  std::optional<DeviceName> last;
  tree.for_subtree(path, [&](const std::string &p) {
    if (auto d = map.device_of(p))
      last = d;
  });
  return last;
}

// Where the root's hook moves the model's inputs: the main device, in practice the lowest GPU
// id the map uses (docs/DEVICE_MODEL.md section 2).
std::set<DeviceName> main_device(const DeviceMap &map) {
  std::optional<DeviceName> lowest;
  auto index = [](const DeviceName &d) {
    return d.find_first_not_of("0123456789") == std::string::npos && !d.empty() && d.size() < 10
               ? std::stol(d)
               : -1L;
  };
  for (const auto &[key, d] : map.entries)
    if (index(d) >= 0 && (!lowest || index(d) < index(*lowest)))
      lowest = d;
  if (lowest)
    return {*lowest};
  return map.devices();
}

// What the package's forwards hand their submodules, by (caller class, child, parameter).
using PassedIndex = std::map<std::tuple<std::string_view, std::string_view, std::string_view>,
                             const PassedArgument *>;

std::set<DeviceName> resolve(const OperandOrigin &o, const std::string &unit_path,
                             const TreeIndex &tree, const DeviceMap &map, bool *known,
                             const PassedIndex &passed);

// Where the module at `unit_path`, which has no hook, receives its forward's `parameter`: where
// the value its caller passes sits (docs/DEVICE_MODEL.md section 2), resolved in the caller.
// Empty when the caller's value is not known.
// The module whose forward calls the module at `unit_path`, the name it calls it by, and the
// element's place when it is one of a container's (ModuleList, Sequential: no class of the
// package), which its owner calls by the container's name.
struct CallerOf {
  const ModuleNode *caller = nullptr;
  std::string owner, child;
  std::optional<size_t> element;
};

CallerOf caller_of(const std::string &unit_path, const TreeIndex &tree) {
  CallerOf c;
  size_t dot = unit_path.rfind('.');
  c.owner = dot == std::string::npos ? "" : unit_path.substr(0, dot);
  c.child = unit_path.substr(dot == std::string::npos ? 0 : dot + 1);
  c.caller = tree.module(c.owner);
  if (c.caller && !c.caller->cls && !c.owner.empty()) {
    for (size_t i = 0; i < c.caller->children.size(); ++i)
      if (c.caller->children[i].first == c.child)
        c.element = i;
    size_t up = c.owner.rfind('.');
    c.child = c.owner.substr(up == std::string::npos ? 0 : up + 1);
    c.owner = up == std::string::npos ? "" : c.owner.substr(0, up);
    c.caller = tree.module(c.owner);
  }
  return c;
}

// Whether the module at `unit_path` may receive one of `arguments` as a tensor: false only when
// its caller's forward was seen handing it tensors and none of these.
bool may_receive(const std::vector<std::string> &arguments, const std::string &unit_path,
                 const TreeIndex &tree, const PassedIndex &passed) {
  CallerOf c = caller_of(unit_path, tree);
  if (!c.caller || !c.caller->cls)
    return true;
  std::string_view caller_class = c.caller->cls->name;
  auto first = passed.lower_bound({caller_class, c.child, std::string_view()});
  if (first == passed.end() || std::get<0>(first->first) != caller_class ||
      std::get<1>(first->first) != c.child)
    return true; // no call of it seen
  return std::any_of(arguments.begin(), arguments.end(), [&](const std::string &argument) {
    return passed.count({caller_class, c.child, argument}) > 0;
  });
}

std::set<DeviceName> as_passed(const std::string &parameter, const std::string &unit_path,
                               const TreeIndex &tree, const DeviceMap &map,
                               const PassedIndex &passed) {
  CallerOf c = caller_of(unit_path, tree);
  const ModuleNode *caller = c.caller;
  const std::string &owner = c.owner;
  const std::string &child = c.child;
  const std::optional<size_t> &element = c.element;
  if (!caller || !caller->cls)
    return {};
  auto it = passed.find({caller->cls->name, child, parameter});
  if (it == passed.end() || it->second->origins.empty())
    return {};
  // Handed to element k by a loop over layer lists: this pass's output of a list is its element
  // k's, the previous pass's its element k - 1's. The first element gets what the loop started
  // with; the others what the pass before left, not that.
  auto carried = [](const OperandOrigin &o) {
    return o.kind == OriginKind::LayerIteration && o.earlier_iteration;
  };
  const bool after_first_pass =
      element && *element > 0 &&
      std::any_of(it->second->origins.begin(), it->second->origins.end(), carried);
  std::set<DeviceName> out;
  for (const OperandOrigin &origin : it->second->origins) {
    if (after_first_pass && origin.kind != OriginKind::LayerIteration)
      continue;
    if (origin.kind == OriginKind::LayerIteration && element) {
      const ModuleNode *list = tree.module(join(owner, origin.label));
      if (origin.earlier_iteration && *element == 0)
        continue;
      size_t k = origin.earlier_iteration ? *element - 1 : *element;
      if (list && k < list->children.size())
        if (auto d = output_device(tree, map,
                                   join(join(owner, origin.label), list->children[k].first))) {
          out.insert(*d);
          continue;
        }
    }
    bool origin_known = true;
    std::set<DeviceName> devices = resolve(origin, owner, tree, map, &origin_known, passed);
    if (!origin_known || devices.empty())
      return {};
    out.insert(devices.begin(), devices.end());
  }
  return out;
}

// A non-persistent buffer no map entry covers (its module split, transformers 5 lists only the
// pieces): `_move_missing_keys_from_meta_to_device` asks `expand_device_map` for its device,
// which falls back to the CPU, and `dispatch_model` checks only the state dict, so it stays there.
bool left_on_cpu(const OperandOrigin &o, const std::string &path, const TreeIndex &tree,
                 const DeviceMap &map) {
  return o.kind == OriginKind::Parameter && tree.non_persistent_buffers.count(path) &&
         !map.device_of(path) && !map.entries.empty();
}

std::set<DeviceName> resolve(const OperandOrigin &o, const std::string &unit_path,
                             const TreeIndex &tree, const DeviceMap &map, bool *known,
                             const PassedIndex &passed) {
  // Through a child holding nothing that the map lists on its own (its unit is split): that
  // entry's hook moved the value to its device.
  if (!o.through_empty_child.empty()) {
    std::string path = join(unit_path, o.through_empty_child);
    for (const auto &[key, device] : map.entries)
      if (key == path)
        return {device};
  }
  switch (o.kind) {
  case OriginKind::Fresh:
  case OriginKind::PlainTensor:
    return {"cpu"};
  case OriginKind::LiteralDevice: {
    std::string d = normalize_device(o.label);
    if (d.empty())
      d = o.label == "cuda" ? "0" : o.label;
    return {d};
  }
  case OriginKind::Child:
  case OriginKind::LayerIteration:
  case OriginKind::Parameter: {
    std::string path = join(unit_path, o.label);
    if (!tree.has(path)) {
      *known = false;
      return map.devices_under(unit_path);
    }
    if (o.kind == OriginKind::Parameter || o.kind == OriginKind::Child)
      if (auto d = map.device_of(path))
        return {*d}; // a parameter, or a hooked child: its output stays on its device
    if (left_on_cpu(o, path, tree, map))
      return {o.cast_to_cuda ? "0" : "cpu"}; // `.type_as(x)`: the current device, cuda:0
    if (o.kind == OriginKind::Child)
      if (auto d = output_device(tree, map, path))
        return {*d};
    // The elements of a layer list: each returns on its own device, or where its last part
    // left it when the map splits it.
    if (o.kind == OriginKind::LayerIteration) {
      std::set<DeviceName> outputs;
      if (const ModuleNode *node = tree.module(path))
        for (const auto &[name, element] : node->children)
          if (auto d = output_device(tree, map, join(path, name)))
            outputs.insert(*d);
      if (!outputs.empty())
        return outputs;
    }
    return map.devices_under(path);
  }
  case OriginKind::HeldState: // allocated by the model where its inputs are: the first GPU
    for (const auto &[k, d] : map.entries)
      if (d != "cpu" && d != "disk")
        return {d};
    return map.devices();
  case OriginKind::Input: {
    if (auto d = unit_path.empty() ? std::nullopt : map.device_of(unit_path))
      return {*d}; // a hooked module: inputs moved to its device
    // An argument its callers hand down unchanged from their own arguments arrives where the
    // highest of them received it: resolved there (the root's inputs on the main device).
    if (!unit_path.empty())
      if (auto up = passed_down_argument(tree.root, unit_path, o.label))
        if (up->module_path != unit_path) {
          OperandOrigin received = o;
          received.label = up->parameter;
          return resolve(received, up->module_path, tree, map, known, passed);
        }
    // One its caller computes is where the caller's value is: what made it there, not the
    // callee's place in the map.
    if (!unit_path.empty())
      if (auto devices = as_passed(o.label, unit_path, tree, map, passed); !devices.empty())
        return devices;
    // A submodule's method other than `forward`, called by its parent's code, gets what that
    // code computed: no hook moved it, and the callers of `forward` say nothing of it.
    if (!unit_path.empty() && o.method_argument) {
      *known = false;
      return map.devices_under(unit_path);
    }
    // The root's hook moves inputs to the main device. What a split module reached through the
    // first item of every module above it receives was passed down from the root's inputs, as
    // the analysis assumes when it puts such inputs with the first item (unit_placement.cpp,
    // input_group); a helper method's argument is what its caller passed.
    if (unit_path.empty() || on_first_chain(tree.root, unit_path))
      return main_device(map);
    // A split module has no hook: its inputs arrive where its caller left them. Without the
    // caller's value, that is taken as where the module run just before it put its output
    // (layer i-1's last part for layer i): in registration order, the entry before its own first.
    for (size_t i = 1; i < map.entries.size(); ++i)
      if (key_covers(unit_path, map.entries[i].first))
        return {map.entries[i - 1].second};
    return map.devices_under(unit_path);
  }
  case OriginKind::Skip:
  default:
    return map.devices();
  }
}

std::string describe(const OperandOrigin &o, const std::set<DeviceName> &devices,
                     const std::string &unit_path, const TreeIndex &tree, const DeviceMap &map) {
  std::string text = "`" + o.text + "` on " + labels(devices);
  // Moved by the hook of a map entry holding nothing (resolve): there, not with its maker.
  if (!o.through_empty_child.empty()) {
    const std::string path = join(unit_path, o.through_empty_child);
    for (const auto &[key, device] : map.entries)
      if (key == path)
        return text + " (where `self." + o.through_empty_child + "`'s hook moved it)";
  }
  if (left_on_cpu(o, join(unit_path, o.label), tree, map))
    return text + (o.cast_to_cuda ? " (a non-persistent buffer of a split module, which "
                                    "transformers 5 loads on the CPU, cast to the current GPU "
                                    "by `.type_as`)"
                                  : " (a non-persistent buffer of a split module: transformers 5 "
                                    "gives it no map entry and loads it on the CPU)");
  if (o.kind == OriginKind::LayerIteration && devices.size() == 1) {
    std::string r = layer_ranges(tree, map, join(unit_path, o.label), *devices.begin());
    if (!r.empty())
      text += " (" + r + ")";
  }
  return text;
}

// Where an operand sits when the whole model is on one GPU: everything the model holds or
// receives on "0", fresh tensors and plain attributes on the CPU, literal devices where they say.
std::string single_device_location(const OperandOrigin &o) {
  switch (o.kind) {
  case OriginKind::Fresh:
  case OriginKind::PlainTensor:
    return "cpu";
  case OriginKind::LiteralDevice: {
    std::string d = normalize_device(o.label);
    return d.empty() ? (o.label == "cuda" ? "0" : o.label) : d;
  }
  default:
    return "0";
  }
}

// Operands apart when the whole model is on one GPU (a CPU tensor against the model's): an error
// whatever the map, said so. Returns whether the finding was ranked.
bool rank_as_failing_on_one_gpu(Finding &f) {
  if (f.operand_origins.size() < 2)
    return false;
  std::string a = single_device_location(f.operand_origins[0]);
  std::string b = single_device_location(f.operand_origins[1]);
  if (a == b)
    return false;
  f.level = FindingLevel::Error;
  f.placement = "fails on one GPU: `" + f.operand_origins[0].text + "` on " + label(a) + ", `" +
                f.operand_origins[1].text + "` on " + label(b);
  return true;
}

// Findings in models that refuse string maps, checked with --hand-made-maps (no balanced map
// exists to simulate): those whose operands only a split separates are warnings, since only a
// hand-written map splits such a model; the others fail on one GPU already. Returns which
// findings were ranked here.
// With transformers 4, a class built only by models without a list of their own is refused too
// (ModelScope::own_list_missing): the analysis split it, so a finding only a split makes is
// dropped there unless --hand-made-maps asks for it. Dropped findings are marked in `dropped`.
std::vector<bool> rank_hand_made_only(std::vector<Finding> &findings, const Package &package,
                                      const PlacementSettings &settings,
                                      std::vector<bool> &dropped) {
  std::vector<bool> ranked(findings.size(), false);
  dropped.assign(findings.size(), false);
  if (!settings.device_map.empty())
    return ranked; // the map given is the placement: ranked like any other
  std::optional<int> major;
  for (size_t i = 0; i < findings.size(); ++i) {
    Finding &f = findings[i];
    if (f.unit_class.empty() || f.operand_origins.empty() || !f.placement.empty())
      continue;
    const ModuleClass *cls = package.find_class(f.unit_class);
    if (!cls || !cls->scope)
      continue;
    const ModelScope &scope = *cls->scope;
    bool refused_in_4 = false;
    if ((scope.own_list_missing || scope.nested_list_missing) && !scope.refuses_string_maps &&
        !scope.without_loader) {
      if (!major)
        major = settings.transformers_major ? settings.transformers_major() : 5;
      // A nested model without a list is refused from 4.35 on (`_get_no_split_modules` walks
      // the modules since then); the model's own missing list in every 4.x.
      refused_in_4 =
          *major < 5 && (scope.own_list_missing ||
                         (settings.transformers_minor && settings.transformers_minor() >= 35));
    }
    // Without --hand-made-maps such models are never split: findings stay as the analysis made
    // them. One origin met across iterations of a layer list is separated only by a split.
    if (!refused_in_4 &&
        (f.operand_origins.size() < 2 || !(scope.refuses_string_maps || scope.without_loader) ||
         !scope.supports_device_map))
      continue;
    ranked[i] = true;
    if (rank_as_failing_on_one_gpu(f))
      continue; // fails on one GPU already, split or not
    if (refused_in_4 && !scope.hand_made_maps) {
      dropped[i] = true; // only a split separates them, and none is made
      continue;
    }
    f.level = FindingLevel::Warning;
    if (scope.refuses_string_maps && !scope.unknown_list_base.empty()) {
      f.placement = "devlint cannot tell whether from_pretrained accepts device_map=\"auto\" "
                    "for this model (its list comes from " +
                    scope.unknown_list_base + "); a hand-written device map that splits `" +
                    f.unit_class + "` separates these operands";
      continue;
    }
    f.placement = scope.refuses_string_maps || refused_in_4
                      ? "from_pretrained refuses device_map=\"auto\" for this model (a "
                        "PreTrainedModel without _no_split_modules); a hand-written device map "
                        "that splits `" +
                            f.unit_class + "` separates these operands"
                      : "no class of this package is loaded by from_pretrained; a device map built "
                        "by hand that splits `" +
                            f.unit_class + "` separates these operands";
  }
  return ranked;
}

bool load_map(const std::string &spec, const Package &package, const ModelSetup &setup, int gpus,
              DeviceMap &map, std::string &error) {
  std::string path = spec, function;
  size_t colon = spec.rfind(':');
  if (colon != std::string::npos && spec.find(".py:") != std::string::npos) {
    path = spec.substr(0, colon);
    function = spec.substr(colon + 1);
  }
  if (path.size() > 3 && path.compare(path.size() - 3, 3, ".py") == 0) {
    Diagnostic d;
    auto source = read_source_file(path, kMaxInputBytes, d);
    if (!source) {
      error = path + ": " + d.message;
      return false;
    }
    auto syntax = lower_python(*source);
    auto evaluated = evaluate_python_device_map(package, *syntax, setup.config, gpus, function);
    if (!evaluated.error.empty()) {
      error = evaluated.error;
      return false;
    }
    map.entries = evaluated.entries;
    return true;
  }
  try {
    nlohmann::json json;
    std::string origin;
    if (!read_device_map_json(spec, json, origin, error))
      return false;
    for (const auto &[k, v] : json.items())
      map.entries.emplace_back(k, normalize_device(v));
  } catch (const std::exception &e) {
    error = std::string("--device-map: ") + e.what();
    return false;
  }
  return true;
}

// Findings no simulation placed, in a model that keeps nothing whole (ModelScope::
// splits_anywhere): a balanced map of 2-8 GPUs cuts at 1-7 of its many leaf boundaries, which
// is no evidence that one cuts at this site, so they are warnings.
void rank_unsized_split_anywhere(std::vector<Finding> &findings, const Package &package,
                                 const PlacementSettings &settings) {
  if (!settings.device_map.empty() || settings.narrowed())
    return;
  for (Finding &f : findings) {
    if (f.unit_class.empty() || f.operand_origins.size() < 2 || !f.placement.empty())
      continue;
    const ModuleClass *cls = package.find_class(f.unit_class);
    if (!cls || !cls->scope || !cls->scope->splits_anywhere)
      continue;
    if (single_device_location(f.operand_origins[0]) !=
        single_device_location(f.operand_origins[1]))
      continue; // fails on one GPU, split or not
    f.level = FindingLevel::Warning;
    f.placement = "transformers 5 loads this model with an empty _no_split_modules, so a balanced "
                  "map may cut between any two of its layers; devlint could not tell whether one "
                  "cuts here (the model is not sized completely, or an operand has no place in "
                  "the map)";
  }
}

// A finding no simulated map placed although the models were read with their configuration.
// Operands that sit apart on one GPU (a fresh CPU tensor against the model's) fail whatever the
// map: an error that says so. The others need a split devlint has no evidence for: a warning
// that names what is missing (in a model that keeps nothing whole, after saying so).
void rank_unplaced(Finding &f, const Package &package, bool placed,
                   const std::string &unsized_model, const std::string &unplaced_operand,
                   bool unplaced_method_argument) {
  if (rank_as_failing_on_one_gpu(f))
    return;
  const ModuleClass *cls = package.find_class(f.unit_class);
  const bool splits_anywhere = cls && cls->scope && cls->scope->splits_anywhere;
  f.level = FindingLevel::Warning;
  const std::string separates = splits_anywhere ? "one cuts between these operands"
                                                : "a device_map=\"auto\" placement separates "
                                                  "these operands";
  if (placed && unplaced_method_argument)
    f.placement = "`" + unplaced_operand +
                  "` comes from an argument of a method other than `forward`, which no hook "
                  "moves: it is where the code calling that method computed it, which devlint "
                  "does not follow, so whether " +
                  separates + " is unknown";
  else if (placed)
    f.placement = "devlint cannot tell which map entry holds `" + unplaced_operand +
                  "`, so whether " + separates + " is unknown";
  else if (!unsized_model.empty())
    f.placement = "devlint could not size `" + unsized_model +
                  "` completely from its configuration (`devlint devmap` lists what it did not "
                  "evaluate), so whether " +
                  separates + " is unknown";
  else
    f.placement = "no model devlint builds from this package's configuration holds `" +
                  f.unit_class +
                  "` (another setting may build it), so no device_map=\"auto\" placement of it "
                  "is known";
  if (splits_anywhere)
    f.placement = "transformers 5 loads this model with an empty _no_split_modules, so a "
                  "balanced map may cut between any two of its layers; " +
                  f.placement;
}

// What `self.a` or `self.config.b` is in the module at `node`, as its __init__ left it: a child
// module stands as "module"; nullopt when it was not kept.
std::optional<nlohmann::json> self_value(const ModuleNode &node, const RunCondition &test) {
  if (!test.subscript.empty()) {
    RunCondition whole = test;
    whole.subscript.clear();
    std::optional<nlohmann::json> list = self_value(node, whole);
    if (!list || !list->is_array() || !node.plain_values.is_object() ||
        !node.plain_values.contains(test.subscript) ||
        !node.plain_values.at(test.subscript).is_number_integer())
      return std::nullopt;
    int64_t i = node.plain_values.at(test.subscript).get<int64_t>();
    if (i < 0)
      i += static_cast<int64_t>(list->size());
    if (i < 0 || i >= static_cast<int64_t>(list->size()))
      return std::nullopt;
    return list->at(static_cast<size_t>(i));
  }
  if (test.attribute.size() == 2 && test.attribute[0] == "config") {
    if (node.configuration && node.configuration->contains(test.attribute[1]))
      return node.configuration->at(test.attribute[1]);
    return std::nullopt;
  }
  if (test.attribute.size() != 1)
    return std::nullopt;
  if (node.child(test.attribute[0]))
    return nlohmann::json("module");
  // `self.pos_embed = None`, then `self.pos_embed = nn.Parameter(...)` under a setting: the
  // parameter (or buffer) registered last is what the attribute holds.
  for (const auto *tensors : {&node.parameters, &node.buffers})
    for (const TreeTensor &t : *tensors)
      if (t.name == test.attribute[0])
        return nlohmann::json("tensor");
  if (node.plain_values.is_object() && node.plain_values.contains(test.attribute[0]))
    return node.plain_values.at(test.attribute[0]);
  // A child its class declares that this module's __init__ did not build (`if config.Y:`):
  // the attribute is unset, which a test of it reads as None.
  if (node.cls) {
    const auto children = node.cls->all_children();
    if (std::any_of(children.begin(), children.end(),
                    [&](const ChildDecl *c) { return c->name == test.attribute[0]; }))
      return nlohmann::json();
  }
  return std::nullopt;
}

std::optional<bool> python_truth(const nlohmann::json &v) {
  if (v.is_null())
    return false;
  if (v.is_boolean())
    return v.get<bool>();
  if (v.is_number())
    return v.get<double>() != 0;
  if (v.is_string())
    return !v.get<std::string>().empty();
  if (v.is_array())
    return !v.empty();
  return std::nullopt;
}

// Whether `test` goes the way the line needs in the module at `node`; nullopt when unknown.
std::optional<bool> goes_the_lines_way(const ModuleNode &node, const RunCondition &test) {
  std::optional<nlohmann::json> value = self_value(node, test);
  if (!value)
    return std::nullopt;
  std::optional<bool> result;
  if (test.comparison.empty()) {
    result = python_truth(*value);
  } else {
    nlohmann::json literal = nlohmann::json::parse(test.literal, nullptr, false);
    if (literal.is_discarded())
      return std::nullopt;
    const std::string &op = test.comparison;
    if (op == "is" || op == "is not") {
      // Identity of None, True and False; a child module or another value is none of them.
      if (!literal.is_null() && !literal.is_boolean())
        return std::nullopt;
      bool same = *value == literal && (value->is_null() || value->is_boolean());
      result = op == "is" ? same : !same;
    } else if (value->is_number() && literal.is_number()) {
      double a = value->get<double>(), b = literal.get<double>();
      result = op == "=="   ? a == b
               : op == "!=" ? a != b
               : op == "<"  ? a < b
               : op == "<=" ? a <= b
               : op == ">"  ? a > b
                            : a >= b;
    } else if (op == "==" || op == "!=") {
      if (value->is_string() != literal.is_string() && !value->is_null() && !literal.is_null())
        return std::nullopt;
      result = (*value == literal) == (op == "==");
    }
  }
  if (!result)
    return std::nullopt;
  return *result == test.holds;
}

// An argument test whose argument falls back to a setting (`output_segmentation = ... else
// self.config.output_segmentation`): whether the setting at `node` lets the line run without the
// argument; nullopt when there is no such setting or its value is unknown.
std::optional<bool> fallback_runs(const ModuleNode &node, const RunCondition &t) {
  if (t.argument_fallback.empty())
    return std::nullopt;
  RunCondition setting;
  setting.attribute = {"config", t.argument_fallback};
  if (t.fallback_tests_none) {
    setting.comparison = "is not";
    setting.literal = "null";
  }
  return goes_the_lines_way(node, setting);
}

// The tests that keep the line from running in the module at `node` (each known to go the
// other way there).
std::vector<const RunCondition *> tests_failing(const ModuleNode &node,
                                                const std::vector<RunCondition> &tests) {
  std::vector<const RunCondition *> failing;
  for (const RunCondition &t : tests)
    if (goes_the_lines_way(node, t) == false)
      failing.push_back(&t);
  return failing;
}

std::string python_literal(const nlohmann::json &v) {
  if (v.is_null())
    return "None";
  if (v.is_boolean())
    return v.get<bool>() ? "True" : "False";
  if (v.is_string())
    return "\"" + printable(v.get<std::string>()) + "\"";
  return printable(v.dump());
}

// A model's configuration as a placement names it: "the defaults of BertConfig", "config.json".
std::string configuration_named(const std::string &source) {
  return (source.rfind("defaults of ", 0) == 0 ? "the " : "") + printable(source);
}

// "`self.rotary_value` is true", "`self.config.num_labels > 0`".
std::string needed_text(const RunCondition &t) {
  std::string code = "`" + printable(t.text) + "`";
  if (t.comparison.empty())
    return code + (t.holds ? " is true" : " is false");
  return t.holds ? code : code + " is false";
}

// A value of the configuration attribute `test.config_key` under which the test goes the line's
// way, given its value now; nullopt when none follows from the test alone.
std::optional<nlohmann::json> value_for_the_line(const RunCondition &test,
                                                 const nlohmann::json &now) {
  auto of_truth = [&](bool truth) -> std::optional<nlohmann::json> {
    if (now.is_boolean() || now.is_null())
      return nlohmann::json(truth);
    if (now.is_number_integer())
      return nlohmann::json(truth ? 1 : 0);
    return std::nullopt;
  };
  if (test.config_truth)
    return of_truth(*test.config_truth);
  if (test.comparison.empty())
    return of_truth(test.holds);
  nlohmann::json literal = nlohmann::json::parse(test.literal, nullptr, false);
  if (literal.is_discarded())
    return std::nullopt;
  std::string op = test.comparison;
  if (!test.holds) {
    static const std::map<std::string, std::string> kNegated = {
        {"is", "is not"}, {"is not", "is"}, {"==", "!="}, {"!=", "=="},
        {"<", ">="},      {">=", "<"},      {">", "<="},  {"<=", ">"}};
    op = kNegated.at(op);
  }
  if (op == "is" || op == "==")
    return literal;
  if (op == "is not" || op == "!=") {
    if (literal.is_boolean())
      return nlohmann::json(!literal.get<bool>());
    if (literal.is_number_integer())
      return nlohmann::json(literal.get<int64_t>() + 1);
    if (literal.is_number_float())
      return nlohmann::json(literal.get<double>() + 1.0);
    return std::nullopt;
  }
  // `self.config.eps > 0.0` (label smoothing): a nearby value on the line's side.
  if (literal.is_number_float()) {
    double x = literal.get<double>();
    return nlohmann::json(op == ">" ? x + 0.1 : op == "<" ? x - 0.1 : x);
  }
  if (!literal.is_number_integer())
    return std::nullopt;
  int64_t n = literal.get<int64_t>();
  return nlohmann::json(op == ">" ? n + 1 : op == "<" ? n - 1 : n);
}

// The classes `cls` builds in its __init__: held as submodules, or built there and handed on
// (`encoder = SpeechEncoder(config)` passed to `Model(config, encoder)`).
void classes_built_by(const ModuleClass &cls, const Package &package,
                      std::unordered_set<std::string> &built) {
  for (const ChildDecl *c : cls.all_children())
    built.insert(c->class_name);
  const FunctionDef *init = cls.find_method("__init__");
  if (!init)
    return;
  auto note_constructor = [&](const Expr *e) {
    if (e->kind == ExprKind::Call && e->operands[0]->kind == ExprKind::Name &&
        e->operands[0]->text != cls.name && package.find_class(e->operands[0]->text))
      built.insert(std::string(e->operands[0]->text));
    return false;
  };
  find_statement(init->body, [&](const Stmt *st) {
    any_subexpression(st->value, note_constructor, 32, false);
    for (const Expr *e : st->items)
      any_subexpression(e, note_constructor, 32, false);
    return false;
  });
}

// Classes another class of the package builds. Such a class is a part of those models, not one
// from_pretrained loads on its own here.
std::unordered_set<std::string> classes_built_by_other_classes(const Package &package) {
  std::unordered_set<std::string> built;
  for (const auto &cls : package.classes)
    classes_built_by(*cls, package, built);
  return built;
}

// The package's classes a model of class `root` builds, at any depth, as its __init__ says:
// those of a model that stopped before building them (a configuration that raises) too.
std::unordered_set<std::string> classes_declared_under(const std::string &root,
                                                       const Package &package) {
  std::unordered_set<std::string> seen{root};
  std::vector<std::string> pending{root};
  while (!pending.empty()) {
    const ModuleClass *cls = package.find_class(pending.back());
    pending.pop_back();
    if (!cls)
      continue;
    std::unordered_set<std::string> built;
    classes_built_by(*cls, package, built);
    for (const std::string &name : built)
      if (seen.insert(name).second)
        pending.push_back(name);
  }
  return seen;
}

// What registration order alone says about an operand of a finding in the root class of a model
// not sized completely (accelerate fills GPU 0 first, with the root's own parameters first, and
// the last top-level item on the last GPU it uses): "first", "last", or "" when order says
// nothing.
std::string order_place(const OperandOrigin &o, const TreeIndex &tree, const ModuleTree &model) {
  const ModuleNode *root = tree.root;
  switch (o.kind) {
  case OriginKind::Input: {
    // An argument of the model's forward: the root's hook moves it to the main device. One
    // that a helper method of the class also takes may be what forward computed.
    if (!root->cls || !root->cls->def)
      return "";
    bool of_forward = false;
    for (const FunctionDef *m : root->cls->def->methods)
      for (const Parameter &p : m->parameters)
        if (p.name == o.label) {
          if (m->name != "forward")
            return "";
          of_forward = true;
        }
    return of_forward ? "first" : "";
  }
  case OriginKind::Parameter:
    for (const TreeTensor &t : root->parameters)
      if (t.name == o.label)
        return "first";
    return "";
  case OriginKind::Child: {
    // The last child holding tensors: a child after it that holds none (a dropout) is an
    // entry of size 0, which opens no device.
    std::function<bool(const ModuleNode *)> holds = [&](const ModuleNode *node) {
      if (!node->parameters.empty() || !node->buffers.empty())
        return true;
      return std::any_of(node->children.begin(), node->children.end(),
                         [&](const auto &child) { return holds(child.second); });
    };
    auto last = std::find_if(root->children.rbegin(), root->children.rend(),
                             [&](const auto &child) { return holds(child.second); });
    if (last == root->children.rend() || last->first != o.label || !o.through_empty_child.empty())
      return "";
    // A statement of the root's __init__ not evaluated may have registered a child after it.
    const FunctionDef *init = root->cls ? root->cls->find_method("__init__") : nullptr;
    if (!init || !root->cls->file || !root->cls->file->source)
      return "";
    for (const TreeUnknown &u : model.unknowns) {
      size_t colon = u.location.rfind(':');
      if (colon == std::string::npos || u.location.compare(0, colon, root->cls->file->source->path))
        continue;
      uint32_t line = 0;
      for (size_t i = colon + 1; i < u.location.size() && i < colon + 10; ++i)
        if (std::isdigit(static_cast<unsigned char>(u.location[i])))
          line = line * 10 + static_cast<uint32_t>(u.location[i] - '0');
      if (line >= init->range.line && line <= init->range.end_line)
        return "";
    }
    // A tied head sits with the module it is tied to, wherever that is.
    for (const auto &group : model.tied_parameters)
      for (const std::string &name : group)
        if (key_covers(o.label, name))
          return "";
    return "last";
  }
  default:
    return "";
  }
}

// For a finding in the root class of a model devlint could not size, the operands' places by
// registration order when one is on the first GPU and the other on the last one used; "" else.
std::string placed_by_order(const Finding &f, const std::vector<PlacedModel> &unsized) {
  for (const PlacedModel &model : unsized) {
    const TreeIndex &tree = *model.index;
    if (!tree.root || tree.root->class_name != f.unit_class)
      continue;
    std::string a = order_place(f.operand_origins[0], tree, model.setup->tree);
    std::string b = order_place(f.operand_origins[1], tree, model.setup->tree);
    if (a.empty() || b.empty() || a == b)
      return "";
    auto text = [](const OperandOrigin &o, const std::string &where) {
      std::string operand = "`" + o.text + "`";
      if (where == "last")
        return operand + " from `self." + o.label +
               "`, the last module the model registers with weights, on the last GPU used";
      if (o.kind == OriginKind::Input)
        return operand + ", an input of the model, on the main device (the first GPU)";
      return operand + ", a parameter of the model itself (placed before any module), on the "
                       "first GPU";
    };
    return text(f.operand_origins[0], a) + " and " + text(f.operand_origins[1], b);
  }
  return "";
}

// A finding against the maps of the models that hold its class.
struct Ranking {
  bool placed = false, separated = false, all_known = true;
  std::string text, unplaced_operand;
  bool unplaced_method_argument = false; // the unplaced operand is a method's argument
  // The modules of the finding's class, and those whose settings skip the line (each with a
  // test of the line's path known to go the other way): their maps say nothing about it.
  size_t paths = 0, paths_skipped = 0;
  std::vector<const RunCondition *> failing; // at the first module skipped
  const PlacedModel *skipped_in = nullptr;
  // Modules of the class whose caller never hands them what an argument test needs, and that
  // test (the first such).
  size_t paths_not_handed = 0;
  const RunCondition *not_handed = nullptr;
  // Per operand, the alternative (Finding::alternatives) that told it: at the separating map, or
  // the first one taken where no running instance builds the finding's own member.
  std::optional<size_t> told[2], first_told[2];
  bool own_built[2] = {false, false}; // some running instance builds the operand's own member
  // Where no map separates the operands: the configurations of the models that run the line,
  // and a weight of an operand's module tied to one outside it (what keeps them together).
  std::set<std::string> sources;
  std::string tie;
  // At the separating map: an argument test the line needs a call to pass (the setting it falls
  // back to, with its value there, goes the other way).
  const RunCondition *passed_only = nullptr;
  std::string fallback_value;
};

// A weight under the operand's module (`cls.predictions.decoder.weight`) tied to one outside it
// (`visual_bert.embeddings.word_embeddings.weight`): accelerate puts tied parameters on one
// device, so the module sits with the one it is tied to. Empty when there is none.
std::string tie_outside(const OperandOrigin &o, const std::string &path, const ModuleTree &tree) {
  if (o.kind != OriginKind::Child)
    return "";
  const std::string prefix = join(path, o.label) + ".";
  for (const std::vector<std::string> &group : tree.tied_parameters) {
    auto inside = std::find_if(group.begin(), group.end(),
                               [&](const std::string &n) { return n.rfind(prefix, 0) == 0; });
    auto outside = std::find_if(group.begin(), group.end(),
                                [&](const std::string &n) { return n.rfind(prefix, 0) != 0; });
    if (inside != group.end() && outside != group.end())
      return "`" + *inside + "` is tied to `" + *outside + "`, so the maps put them on one device";
  }
  return "";
}

// The origin operand `slot` has in the module at `path`: the finding's own, unless it is a member
// this instance does not build (its configuration takes another branch there, so the value
// comes from elsewhere), then the first alternative whose member it builds, or an argument.
struct OriginHere {
  const OperandOrigin *origin = nullptr;
  std::optional<size_t> told; // the alternative that tells it
  bool own_built = false;     // the member the finding's own origin names is built here
};

OriginHere origin_at(const Finding &f, size_t slot, const std::string &path,
                     const TreeIndex &tree) {
  auto built = [&](const OperandOrigin &o) {
    return !names_member(o.kind) || tree.has(join(path, o.label));
  };
  // (`self.codec_model.encode(...)`: the member is `codec_model`, whatever it is called with; a
  // module registered first elsewhere, `self.model.decoder.bbox_embed = self.bbox_embed`, is
  // still the instance's child)
  const ModuleNode *node = tree.module(path);
  auto absent = [&](const OperandOrigin &o) {
    const std::string_view first = member_attribute(o.label);
    auto named = [first](const TreeTensor &t) { return t.name == first; };
    return names_member(o.kind) && node && !node->child(std::string(first)) &&
           std::none_of(node->parameters.begin(), node->parameters.end(), named) &&
           std::none_of(node->buffers.begin(), node->buffers.end(), named);
  };
  const OperandOrigin &own = f.operand_origins[slot];
  if (!absent(own))
    return {&own, std::nullopt, true};
  for (size_t i = 0; i < f.alternatives.size(); ++i)
    if (f.alternatives[i].operand == slot && built(f.alternatives[i].told.operand_origins[slot]))
      return {&f.alternatives[i].told.operand_origins[slot], i, false};
  return {&own, std::nullopt, false};
}

// The member (`cond`, `head_weights_proj`) an operand of the finding comes from that the unit's
// `__init__` declares but no running instance built (its configuration leaves it out), told by
// no alternative; empty when there is none.
std::string member_never_built(const Finding &f, const Ranking &r, const Package &package) {
  const ModuleClass *unit = package.find_class(f.unit_class);
  if (!unit)
    return "";
  for (size_t slot = 0; slot < 2; ++slot) {
    const OperandOrigin &o = f.operand_origins[slot];
    if (declares_member(*unit, o.kind, o.label) && !r.own_built[slot] && !r.first_told[slot])
      return o.label;
  }
  return "";
}

// The placement of a finding whose operand comes from `member`, which no module of `unit_class`
// the configuration builds has.
std::string never_built_placement(const Package &package, const std::string &unit_class,
                                  const std::string &member) {
  const ModuleClass *unit = package.find_class(unit_class);
  std::string test = unit ? member_build_test(*unit, member_attribute(member)) : "";
  return "no module of `" + unit_class +
         "` in the models devlint builds from this configuration has `self." + member + "` (" +
         (test.empty() ? std::string("a setting leaves it out")
                       : "its `__init__` builds it only where `" + test +
                             "`, which this configuration does not meet") +
         "), so no placement devlint simulates runs this line with it";
}

// Where the ranking told an operand by another of its origins (the member the finding named is
// not built where the line runs), the finding says that origin: message, origins and why.
// One operand at a time: each alternative differs from the finding in one.
bool tell_by_alternative(Finding &f, const Ranking &r) {
  std::optional<size_t> chosen[2];
  for (size_t slot = 0; slot < 2; ++slot)
    chosen[slot] = r.separated         ? r.told[slot]
                   : r.own_built[slot] ? std::nullopt
                                       : r.first_told[slot];
  if ((chosen[0] && chosen[1]) || (!chosen[0] && !chosen[1]))
    return false;
  Finding told = std::move(f.alternatives[chosen[0] ? *chosen[0] : *chosen[1]].told);
  f.code = std::move(told.code);
  f.rule_name = std::move(told.rule_name);
  f.message = std::move(told.message);
  f.summary = std::move(told.summary);
  f.why = std::move(told.why);
  f.origins = std::move(told.origins);
  f.fix = std::move(told.fix);
  f.no_fix_reason = std::move(told.no_fix_reason);
  f.operand_origins = std::move(told.operand_origins);
  f.alternatives.clear();
  return true;
}

// transformers gathers `_no_split_modules` from every PreTrainedModel the loaded model holds
// (`_get_no_split_modules` walks its modules: a Swin backbone's SwinStage, a BERT text model's
// BertLayer), not from the package alone. Where the list the simulated model gathered differs
// from the package's, a `why` that quotes the package's list ("X is not in _no_split_modules =
// [...] ..., so accelerate may split it") quotes the gathered one.
void quote_gathered_no_split_list(Finding &f, const std::vector<const PlacedModel *> &models,
                                  const Package &package) {
  const std::string prefix = f.unit_class + " is not in _no_split_modules = [";
  const std::string tail = ", so accelerate may split it";
  size_t end = f.why.find(tail);
  if (f.unit_class.empty() || f.why.rfind(prefix, 0) != 0 || end == std::string::npos)
    return;
  const ModuleClass *unit = package.find_class(f.unit_class);
  if (!unit || !unit->scope)
    return;
  auto holds_class = [&](const PlacedModel &model) {
    if (model.paths_by_class.count(f.unit_class))
      return true;
    return model.index &&
           std::any_of(model.index->modules.begin(), model.index->modules.end(),
                       [&](const auto &entry) { return entry.second->class_name == f.unit_class; });
  };
  const std::set<std::string> own(unit->scope->no_split_modules.begin(),
                                  unit->scope->no_split_modules.end());
  for (const PlacedModel *model : models) {
    if (!holds_class(*model))
      continue;
    const std::vector<std::string> &gathered = model->setup->no_split_modules;
    std::set<std::string> all(gathered.begin(), gathered.end());
    if (own == all || all.count(f.unit_class) || !model->setup->root)
      return;
    constexpr size_t kShown = 8; // as the rules quote a list
    std::string listed;
    size_t shown = 0;
    for (const std::string &name : gathered)
      if (shown++ < kShown)
        listed += (listed.empty() ? "'" : ", '") + name + "'";
    if (gathered.size() > kShown)
      listed += ", ... (" + std::to_string(gathered.size()) + " names)";
    // diffusers reads the loaded model's own list; transformers gathers the lists of the models
    // it holds too.
    const std::string root(model->setup->root->name);
    f.why = prefix + listed + "] (" +
            (model->setup->root->diffusers_model
                 ? "the list of " + root + ", the model diffusers loads"
                 : "gathered by transformers from " + root + " and the models it holds") +
            ")" + f.why.substr(end);
    return;
  }
}

Ranking rank_finding(const Finding &f, const std::vector<const PlacedModel *> &models,
                     const PassedIndex &passed_index) {
  Ranking r;
  // A map that separates the operands, said so.
  struct Witness {
    std::optional<size_t> told[2];
    const RunCondition *passed_only = nullptr;
    std::string fallback_value, text;
  };
  std::optional<Witness> overlapping; // the first map where the operands' devices overlap
  auto take = [&r](const Witness &w) {
    r.separated = true;
    r.told[0] = w.told[0];
    r.told[1] = w.told[1];
    r.passed_only = w.passed_only;
    r.fallback_value = w.fallback_value;
    r.text = w.text;
  };
  for (const PlacedModel *model : models) {
    auto it = model->paths_by_class.find(f.unit_class);
    if (it == model->paths_by_class.end())
      continue;
    const TreeIndex &tree = *model->index;
    std::vector<std::string> running;
    for (const std::string &path : it->second) {
      // An instance whose caller never hands it what the line's tests need runs no such line.
      auto not_handed = std::find_if(
          f.run_conditions.begin(), f.run_conditions.end(), [&](const RunCondition &t) {
            if (t.arguments.empty() || may_receive(t.arguments, path, tree, passed_index))
              return false;
            // (unless the setting the argument falls back to runs it)
            const ModuleNode *node = tree.module(path);
            return t.argument_fallback.empty() || (node && fallback_runs(*node, t) == false);
          });
      if (not_handed != f.run_conditions.end()) {
        if (++r.paths_not_handed == 1)
          r.not_handed = &*not_handed;
        continue;
      }
      ++r.paths;
      const ModuleNode *node = tree.module(path);
      std::vector<const RunCondition *> failing =
          node ? tests_failing(*node, f.run_conditions) : std::vector<const RunCondition *>{};
      if (failing.empty()) {
        running.push_back(path);
        continue;
      }
      if (++r.paths_skipped == 1) {
        r.failing = std::move(failing);
        r.skipped_in = model;
      }
    }
    if (!running.empty())
      r.sources.insert(model->setup->config.source);
    // Each running instance's operand origins, the same under every map (what it builds is
    // known without maps: an unsized model tells it too).
    std::vector<std::array<OriginHere, 2>> origins_here;
    for (const std::string &path : running) {
      for (size_t slot = 0; slot < 2 && r.tie.empty(); ++slot)
        r.tie = tie_outside(f.operand_origins[slot], path, model->setup->tree);
      origins_here.push_back({origin_at(f, 0, path, tree), origin_at(f, 1, path, tree)});
      for (size_t slot = 0; slot < 2; ++slot) {
        const OriginHere &here = origins_here.back()[slot];
        r.own_built[slot] = r.own_built[slot] || here.own_built;
        if (!r.first_told[slot])
          r.first_told[slot] = here.told;
      }
    }
    for (const Scenario &s : model->scenarios) {
      for (size_t p = 0; p < running.size(); ++p) {
        const std::string &path = running[p];
        const std::array<OriginHere, 2> &here = origins_here[p];
        const OperandOrigin &origin_a = *here[0].origin, &origin_b = *here[1].origin;
        bool known_a = true, known_b = true;
        auto a = resolve(origin_a, path, tree, s.map, &known_a, passed_index);
        auto b = resolve(origin_b, path, tree, s.map, &known_b, passed_index);
        // No entry holds it: a split module's own buffer, which transformers 5's
        // infer_auto_device_map leaves out of the map (dispatch_model then refuses a persistent
        // one): this map says nothing about the site.
        known_a = known_a && !a.empty();
        known_b = known_b && !b.empty();
        bool known = known_a && known_b;
        if (!known && r.unplaced_operand.empty()) {
          r.unplaced_operand = (known_a ? origin_b : origin_a).text;
          r.unplaced_method_argument = (known_a ? origin_b : origin_a).method_argument;
        }
        r.all_known = r.all_known && known;
        r.placed = true;
        // An operand from a module this configuration does not build (a branch not taken)
        // has no device here: the site neither fails nor is cleared by this map.
        // A CPU index (a non-persistent index buffer the loader left there) is accepted.
        auto cpu_index = [](const OperandOrigin &o, const std::set<DeviceName> &d) {
          return o.index && d.size() == 1 && *d.begin() == "cpu";
        };
        if (!known || (a.size() == 1 && a == b) || cpu_index(origin_a, a) || cpu_index(origin_b, b))
          continue;
        // The elements of a layer list are all there (`torch.cat(outputs)`) or each met on its
        // own pass (`h + self.ffns[i](h)`); an operand on several devices otherwise holds values
        // joined from paths (an argument handed the loop's start value or another branch's), of
        // which one runs: where such devices overlap the other operand's, the map fails only on
        // some paths, so a map where they do not is the witness, if there is one.
        const bool one_list = origin_a.text == origin_b.text && a == b;
        auto alternatives = [](const OperandOrigin &o, const std::set<DeviceName> &d) {
          return d.size() > 1 && o.kind != OriginKind::LayerIteration;
        };
        const bool certain =
            one_list || (!alternatives(origin_a, a) && !alternatives(origin_b, b)) ||
            std::none_of(a.begin(), a.end(), [&](const DeviceName &d) { return b.count(d) != 0; });
        if (!certain && overlapping)
          continue;
        Witness w;
        w.told[0] = here[0].told;
        w.told[1] = here[1].told;
        // A line a call runs by passing an argument the setting would not give.
        if (const ModuleNode *node = tree.module(path))
          for (const RunCondition &t : f.run_conditions)
            if (fallback_runs(*node, t) == false) {
              w.passed_only = &t;
              w.fallback_value = python_literal(node->configuration->at(t.argument_fallback));
              break;
            }
        // An operand joined from paths is on one of its devices: the map fails where it is on
        // one the other operand is not.
        auto operand = [&](const OperandOrigin &o, const std::set<DeviceName> &d,
                           const std::set<DeviceName> &other) {
          if (one_list || !alternatives(o, d))
            return describe(o, d, path, tree, s.map);
          std::string text =
              "`" + o.text + "` on " + labels(d, " or ") + " by the path that made it";
          if (certain)
            return text;
          std::set<DeviceName> apart;
          for (const DeviceName &x : d)
            if (!other.count(x))
              apart.insert(x);
          return text + ", so only where it is on " + labels(apart, " or ");
        };
        // Two iterations of one layer list: name the boundary.
        std::string devices = one_list ? "elements of " + describe(origin_a, a, path, tree, s.map)
                                       : operand(origin_a, a, b) + ", " + operand(origin_b, b, a);
        w.text =
            "fails with " + s.name + ": " + devices + (path.empty() ? "" : " (in `" + path + "`)");
        if (!certain) {
          overlapping = std::move(w);
          continue;
        }
        take(w);
        return r;
      }
    }
  }
  if (overlapping)
    take(*overlapping);
  return r;
}

void place_with_simulations(std::vector<Finding> &findings, const Package &package,
                            const std::string &directory, const PlacementSettings &settings,
                            std::vector<Diagnostic> *diagnostics, SimulationMemo *memo,
                            const std::vector<PassedArgument> &passed) {
  PassedIndex passed_index;
  for (const PassedArgument &p : passed)
    passed_index.emplace(std::make_tuple(std::string_view(p.caller_class),
                                         std::string_view(p.child), std::string_view(p.parameter)),
                         &p);
  auto simulated = [memo](const ModuleTree &tree, const SimulationRequest &request) {
    return memo ? memo->map_for(tree, request) : simulate_device_map(tree, request).map;
  };
  std::vector<bool> dropped;
  std::vector<bool> hand_made_only = rank_hand_made_only(findings, package, settings, dropped);
  if (std::find(dropped.begin(), dropped.end(), true) != dropped.end()) {
    std::vector<Finding> kept;
    std::vector<bool> kept_ranked;
    for (size_t i = 0; i < findings.size(); ++i)
      if (!dropped[i]) {
        kept.push_back(std::move(findings[i]));
        kept_ranked.push_back(hand_made_only[i]);
      }
    findings = std::move(kept);
    hand_made_only = std::move(kept_ranked);
  }
  std::set<std::string> wanted;
  for (size_t i = 0; i < findings.size(); ++i)
    if (!findings[i].unit_class.empty() && !hand_made_only[i])
      wanted.insert(findings[i].unit_class);
  if (wanted.empty())
    return;
  // Every model class from_pretrained may build: PreTrainedModels that no other class holds.
  std::unordered_set<std::string> children = classes_built_by_other_classes(package);
  std::vector<std::string> roots;
  for (const auto &cls : package.classes)
    if (cls->is_module && cls->is_pretrained_model && cls->find_method("__init__") &&
        !children.count(std::string(cls->name)))
      roots.push_back(std::string(cls->name));
  // The package with the files of its source tree, read once for every model that needs them
  // (the models built from it refer to it).
  std::unique_ptr<ModelSetup> tree_read;
  std::vector<PlacedModel> models;
  // The classes of models devlint could not size completely, with the model's name: a finding
  // there has no simulated placement.
  std::map<std::string, std::string> unsized_model_of_class;
  std::vector<PlacedModel> unsized_models; // their trees, without maps
  std::optional<bool> tree_built;          // asked once, for the first incomplete model
  bool configured = false;                 // a model was read with its configuration
  size_t unconfigured_roots = 0;
  constexpr size_t kMaxUnconfiguredRoots = 8;
  // Classes of models read without a configuration (a ModelMixin that registers none): unsized,
  // their findings stay as they are while the package's other models rank theirs.
  std::set<std::string> unconfigured_classes;
  for (const std::string &root : roots) {
    ModelSetupOptions options;
    options.model_config = settings.model_config;
    options.model_class = root;
    options.dtype = settings.dtype;
    PlacedModel model;
    model.setup = model_setup_for_package(package, directory, options);
    // A model may build from other files of its source tree (transformers' tree: a composite
    // model's towers and the tree's helpers; elsewhere, classes imported relatively from above
    // the package): read them as devmap does, and rank with that model when it is complete.
    if (!model.setup->tree.complete() && !directory.empty() &&
        (tree_built ? *tree_built : *(tree_built = builds_from_source_tree(package, directory)))) {
      if (!tree_read)
        tree_read = load_model_setup(directory, options);
      auto read = model_setup_like(*tree_read, directory, options);
      // Incomplete too, it still has the other packages' modules in their places.
      if (read->error.empty() && read->root && read->config.present &&
          (read->tree.complete() || read->tree.unknowns.size() < model.setup->tree.unknowns.size()))
        model.setup = std::move(read);
    }
    // The package's own files were reported when they were read; config.json was not.
    if (diagnostics && model.setup->unusable_config)
      diagnostics->push_back(*model.setup->unusable_config);
    if (!model.setup->error.empty())
      return; // nothing built: findings stay as they are
    if (!model.setup->config.present) {
      for (const auto &[path, node] : named_modules(model.setup->tree))
        unconfigured_classes.insert(node->class_name);
      // Each root reads the whole package again: a package whose first roots find no
      // configuration at all (thousands of generated classes) is not read once per class.
      if (!configured && ++unconfigured_roots >= kMaxUnconfiguredRoots)
        return;
      continue;
    }
    configured = true;
    if (!model.setup->tree.complete()) {
      for (const auto &[path, node] : named_modules(model.setup->tree))
        unsized_model_of_class.emplace(node->class_name, root);
      // What it would have built past the point it stopped is in it too, unsized.
      for (const std::string &cls : classes_declared_under(root, package))
        unsized_model_of_class.emplace(cls, root);
      // Its modules are known, in registration order, even where their sizes are not.
      if (model.setup->tree.root) {
        model.index = std::make_unique<TreeIndex>(model.setup->tree);
        for (const auto &[path, node] : model.index->modules)
          model.paths_by_class[node->class_name].push_back(path);
        unsized_models.push_back(std::move(model));
      }
      continue;
    }
    model.index = std::make_unique<TreeIndex>(model.setup->tree);
    for (const auto &[path, node] : model.index->modules)
      model.paths_by_class[node->class_name].push_back(path);
    SimulationRequest request;
    request.no_split_module_classes = model.setup->no_split_modules;
    request.transformers_major = settings.transformers_major ? settings.transformers_major() : 5;
    if (!settings.device_map.empty()) {
      Scenario s;
      std::string error;
      if (!load_map(settings.device_map, package, *model.setup, std::max(settings.gpus, 2), s.map,
                    error)) {
        if (diagnostics)
          diagnostics->push_back({Severity::Error, settings.device_map, 0, 0, error});
        return;
      }
      in_registration_order(s.map, *model.index);
      s.name = "the map " + settings.device_map;
      model.scenarios.push_back(std::move(s));
    } else if (settings.narrowed()) {
      if (!settings.max_memory.empty()) {
        try {
          request.max_memory = parse_max_memory(settings.max_memory);
        } catch (const std::invalid_argument &e) {
          if (diagnostics)
            diagnostics->push_back({Severity::Error, "--max-memory", 0, 0, e.what()});
          return;
        }
      }
      request.gpus = std::max(settings.gpus, 1);
      Scenario s;
      s.name = settings.max_memory.empty() ? std::to_string(request.gpus) + " GPUs"
                                           : "max_memory " + settings.max_memory;
      s.map = simulated(model.setup->tree, request);
      model.scenarios.push_back(std::move(s));
    } else {
      for (int gpus = 2; gpus <= 8; ++gpus) {
        request.gpus = gpus;
        model.scenarios.push_back(
            {std::to_string(gpus) + " GPUs", simulated(model.setup->tree, request)});
      }
    }
    models.push_back(std::move(model));
  }

  std::vector<const PlacedModel *> all_models;
  for (const PlacedModel &model : models)
    all_models.push_back(&model);
  // A root built with the configuration keywords a line needs (`from_pretrained(...,
  // rotary_value=True)`), ranked on balanced maps as the others; null when it cannot be sized.
  std::map<std::string, std::unique_ptr<PlacedModel>> with_keywords;
  auto model_with_keywords = [&](const std::string &root,
                                 const nlohmann::json &keywords) -> const PlacedModel * {
    auto [it, fresh] = with_keywords.try_emplace(root + " " + keywords.dump());
    if (!fresh)
      return it->second.get();
    ModelSetupOptions options;
    options.model_config = settings.model_config;
    options.model_class = root;
    options.dtype = settings.dtype;
    options.config_keywords = keywords;
    auto model = std::make_unique<PlacedModel>();
    model->setup = model_setup_for_package(package, directory, options);
    if (!model->setup->tree.complete() && tree_read) {
      auto read = model_setup_like(*tree_read, directory, options);
      if (read->error.empty() && read->root && read->config.present && read->tree.complete())
        model->setup = std::move(read);
    }
    if (!model->setup->error.empty() || !model->setup->tree.complete())
      return nullptr;
    model->index = std::make_unique<TreeIndex>(model->setup->tree);
    for (const auto &[path, node] : model->index->modules)
      model->paths_by_class[node->class_name].push_back(path);
    SimulationRequest request;
    request.no_split_module_classes = model->setup->no_split_modules;
    request.transformers_major = settings.transformers_major ? settings.transformers_major() : 5;
    for (int gpus = 2; gpus <= 8; ++gpus) {
      request.gpus = gpus;
      model->scenarios.push_back(
          {std::to_string(gpus) + " GPUs", simulated(model->setup->tree, request)});
    }
    it->second = std::move(model);
    return it->second.get();
  };

  // The models whose gathered `_no_split_modules` a why may quote: an unsized one (a timm
  // backbone) still knows its tree and its list.
  std::vector<const PlacedModel *> unsized_pointers;
  for (const PlacedModel &model : unsized_models)
    unsized_pointers.push_back(&model);
  std::vector<const PlacedModel *> listed_models = all_models;
  listed_models.insert(listed_models.end(), unsized_pointers.begin(), unsized_pointers.end());
  std::vector<Finding> kept;
  for (size_t index = 0; index < findings.size(); ++index) {
    Finding &f = findings[index];
    quote_gathered_no_split_list(f, listed_models, package);
    // Ranked already: hand-made only, or placed by the analysis itself (`parallelize()`).
    if (f.unit_class.empty() || f.operand_origins.size() < 2 || hand_made_only[index] ||
        !f.placement.empty()) {
      kept.push_back(std::move(f));
      continue;
    }
    Ranking ranking = rank_finding(f, all_models, passed_index);
    if (ranking.paths == 0 && ranking.paths_not_handed > 0) {
      // Every module of the class is called without what the line needs.
      const RunCondition &t = *ranking.not_handed;
      std::string names;
      for (const std::string &a : t.arguments)
        names += (names.empty() ? "`" : "` or `") + a;
      f.level = FindingLevel::Warning;
      f.placement = "runs only when `" + t.text + "`" + (t.holds ? "" : " is false") +
                    "; no caller in the models devlint builds hands `" + f.unit_class + "` " +
                    names + "`" +
                    (t.argument_fallback.empty()
                         ? ""
                         : " and the setting it falls back to, `config." +
                               printable(t.argument_fallback) + "`, does not run it") +
                    ", so no placement that runs it is known";
      kept.push_back(std::move(f));
      continue;
    }
    std::string prefix;              // the setting the line needs, when the model was built with it
    bool task_settings_only = false; // that setting only chooses the task (labels, loss)
    if (ranking.paths > 0 && ranking.paths_skipped == ranking.paths) {
      // No module of the unit runs the line in the model this configuration builds: its maps
      // say nothing about it (the module may not even be built there).
      const PlacedModel &model = *ranking.skipped_in;
      const ModelConfig &config = model.setup->config;
      std::string needed, values;
      nlohmann::json keywords = nlohmann::json::object();
      // Class defaults stand for no checkpoint: one that sets what the line needs runs it.
      // A config.json is the checkpoint's own choice.
      const bool from_defaults = config.source.rfind("defaults of ", 0) == 0;
      bool settable = from_defaults;
      bool named_settings = true; // every test reads a setting of the configuration
      std::set<std::string> keys_named;
      for (const RunCondition *t : ranking.failing) {
        needed += (needed.empty() ? "" : " and ") + needed_text(*t);
        if (t->config_key.empty()) {
          settable = named_settings = false;
          continue;
        }
        // A setting the configuration does not hold (`num_labels` of a 5.x configuration,
        // made from id2label) is still a keyword `from_pretrained` passes on.
        std::optional<nlohmann::json> now;
        if (config.values.contains(t->config_key))
          now = config.values.at(t->config_key);
        if (now && keys_named.insert(t->config_key).second)
          values += std::string(values.empty() ? "" : ", ") + "`" + printable(t->config_key) +
                    "` " + python_literal(*now);
        if (!now)
          now = nlohmann::json();
        // One value per setting: a test that names none (`!= "cls"`) leaves it to another test
        // of the same setting (`== "mean"`); the model rebuilt with it tells whether both hold.
        if (auto needed_value = value_for_the_line(*t, *now))
          keywords[t->config_key] = *needed_value;
      }
      for (const RunCondition *t : ranking.failing)
        if (!keywords.contains(t->config_key))
          settable = false;
      std::string skipped =
          named_settings ? "runs only when " + needed + "; " +
                               (from_defaults ? "the " + printable(config.source)
                                              : std::string("the checkpoint's config.json")) +
                               (values.empty() ? "" : " (" + values + ")") + " skip" +
                               (from_defaults ? "" : "s") + " it"
                         : "runs only when " + needed + ", which the model built from " +
                               configuration_named(config.source) + " does not meet";
      const PlacedModel *with_setting =
          settable && settings.device_map.empty() && !settings.narrowed()
              ? model_with_keywords(std::string(model.setup->root->name), keywords)
              : nullptr;
      Ranking again = with_setting ? rank_finding(f, {with_setting}, passed_index) : Ranking{};
      if (!with_setting || again.paths == 0 || again.paths_skipped > 0) {
        // A checkpoint's own config.json disables it, or devlint cannot build the model with
        // the setting: only a configuration it has not simulated runs the line.
        f.level = FindingLevel::Warning;
        f.placement = skipped + (!named_settings ? ": no placement devlint simulates runs it"
                                 : from_defaults ? ", and devlint could not build the model with "
                                                   "a setting that runs it, so no placement that "
                                                   "runs it is known"
                                                 : ": no placement of the model it configures "
                                                   "runs it");
        kept.push_back(std::move(f));
        continue;
      }
      std::string setting;
      task_settings_only = true;
      for (const auto &[key, value] : keywords.items()) {
        setting += (setting.empty() ? "" : ", ") + printable(key) + "=" + python_literal(value);
        task_settings_only = task_settings_only && is_task_setting(key);
      }
      prefix = skipped + ". With `" + setting + "`: ";
      ranking = std::move(again);
    }
    if (tell_by_alternative(f, ranking))
      quote_gathered_no_split_list(f, listed_models, package);
    bool placed = ranking.placed, separated = ranking.separated, all_known = ranking.all_known;
    const std::string &text = ranking.text, &unplaced_operand = ranking.unplaced_operand;
    // A model devlint could not size still shows which of its modules run the line and what
    // they build: a line its configuration skips, or an operand from a member it leaves out,
    // is said so, not blamed on the sizes; else registration order may place the operands.
    if (!placed && settings.device_map.empty() && !settings.narrowed() &&
        unsized_model_of_class.count(f.unit_class) && !rank_as_failing_on_one_gpu(f)) {
      Ranking built = rank_finding(f, unsized_pointers, passed_index);
      // Only a member its `__init__` builds under a setting's test is left out by a setting:
      // another is missing because devlint could not build it (an unknown sub-model, a test of
      // one).
      const ModuleClass *unit = package.find_class(f.unit_class);
      std::string unbuilt =
          built.paths > built.paths_skipped ? member_never_built(f, built, package) : "";
      // (a diffusers model's constructor arguments are its configuration: register_to_config)
      const bool arguments_configure = unit && unit->diffusers_model;
      auto left_out_by_setting = [&](std::string_view member) {
        return unit && (arguments_configure ? member_built_conditionally(*unit, member)
                                            : member_built_by_setting(*unit, member).has_value());
      };
      if (!unbuilt.empty() && !left_out_by_setting(member_attribute(unbuilt)))
        unbuilt.clear();
      // Likewise a test of a child: it skips the line by a setting only where one decides it.
      auto by_setting = [&](const RunCondition *t) {
        return !t->config_key.empty() || t->attribute.size() != 1 || !unit ||
               !unit->find_child(t->attribute[0]) || left_out_by_setting(t->attribute[0]);
      };
      if (built.paths > 0 && built.paths_skipped == built.paths &&
          std::all_of(built.failing.begin(), built.failing.end(), by_setting)) {
        std::string needed;
        for (const RunCondition *t : built.failing)
          needed += (needed.empty() ? "" : " and ") + needed_text(*t);
        f.level = FindingLevel::Warning;
        f.placement = "runs only when " + needed + ", which the model built from " +
                      configuration_named(built.skipped_in->setup->config.source) +
                      " does not meet, and devlint could not size `" +
                      unsized_model_of_class.at(f.unit_class) +
                      "` completely to simulate one that does: no placement that runs it is "
                      "known";
        kept.push_back(std::move(f));
        continue;
      }
      if (!unbuilt.empty()) {
        f.level = FindingLevel::Warning;
        f.placement = never_built_placement(package, f.unit_class, unbuilt);
        kept.push_back(std::move(f));
        continue;
      }
      std::string order = placed_by_order(f, unsized_models);
      if (!order.empty()) {
        f.level = FindingLevel::Warning;
        f.placement = prefix + "devlint could not size `" +
                      unsized_model_of_class.at(f.unit_class) +
                      "` completely from its configuration, but registration order alone places "
                      "these operands: " +
                      order +
                      ", so every device_map=\"auto\" placement that splits the model separates "
                      "them (whether the balanced budgets split it depends on the sizes devlint "
                      "could not evaluate)";
        kept.push_back(std::move(f));
        continue;
      }
    }
    if (!placed || (!separated && !all_known)) {
      // With a configuration to size from, an error needs a placement that separates the
      // operands: without one (a model not sized completely, an operand no map entry holds) the
      // finding is a warning that says why, unless it fails on one GPU already.
      if (settings.device_map.empty() && !settings.narrowed() && configured &&
          !(!placed && unconfigured_classes.count(f.unit_class))) {
        auto unsized = unsized_model_of_class.find(f.unit_class);
        std::string unbuilt = placed ? member_never_built(f, ranking, package) : "";
        if (!unbuilt.empty() && !rank_as_failing_on_one_gpu(f)) {
          f.level = FindingLevel::Warning;
          f.placement = prefix + never_built_placement(package, f.unit_class, unbuilt);
          kept.push_back(std::move(f));
          continue;
        }
        rank_unplaced(f, package, placed,
                      unsized == unsized_model_of_class.end() ? "" : unsized->second,
                      unplaced_operand, ranking.unplaced_method_argument);
        if (!prefix.empty() && !f.placement.empty())
          f.placement = prefix + f.placement;
      }
      kept.push_back(std::move(f));
      continue;
    }
    if (separated) {
      // A line only an architecture setting other than the configuration's runs fails for the
      // checkpoints that choose it, not for the model as configured: a warning that says which
      // setting. The task settings every PretrainedConfig holds (`num_labels`, `problem_type`)
      // are what fine-tuning passes to from_pretrained: the lines they pick run as written.
      f.level = prefix.empty() || task_settings_only ? FindingLevel::Error : FindingLevel::Warning;
      // Only a caller that builds the embeddings itself runs the line: it fails for such calls,
      // not for the model called with its ids.
      auto instead =
          std::find_if(f.run_conditions.begin(), f.run_conditions.end(),
                       [](const RunCondition &t) { return !t.embeddings_instead.empty(); });
      if (instead != f.run_conditions.end()) {
        f.level = FindingLevel::Warning;
        prefix += "runs only when `" + printable(instead->text) + "`, for a caller that hands `" +
                  instead->embeddings_instead + "` instead of `input_ids`; with such a call it ";
      }
      if (const RunCondition *t = ranking.passed_only)
        prefix += "runs only when `" + printable(t->text) + "`" +
                  (!t->holds                ? " is false"
                   : t->fallback_tests_none ? ""
                                            : " is true") +
                  ", for a call that passes `" + printable(t->arguments.front()) + "` (`config." +
                  printable(t->argument_fallback) + "` is " + ranking.fallback_value +
                  " where the model is built); with such a call it ";
      f.placement = prefix + text;
      kept.push_back(std::move(f));
      continue;
    }
    if (settings.narrowed())
      continue; // the operands share a device under the placement asked for
    f.level = FindingLevel::Warning;
    // Said of the configuration it was simulated with: a checkpoint with other sizes may split
    // where the defaults do not.
    std::string built_from;
    if (prefix.empty() && ranking.sources.size() == 1) {
      const std::string &source = *ranking.sources.begin();
      built_from = " of the model built from " + configuration_named(source);
    }
    f.placement = prefix + "no device_map=\"auto\" placement on 2 to 8 GPUs" + built_from +
                  " separates these operands" +
                  (ranking.tie.empty() ? "" : " (" + ranking.tie + ")") +
                  "; another configuration, a hand-made map or a custom max_memory could";
    kept.push_back(std::move(f));
  }
  for (Finding &f : kept)
    f.alternatives.clear(); // told or not, they are done with
  findings = std::move(kept);
}

} // namespace

void place_findings(std::vector<Finding> &findings, const Package &package,
                    const std::string &directory, const PlacementSettings &settings,
                    std::vector<Diagnostic> *diagnostics, SimulationMemo *memo,
                    const std::vector<PassedArgument> &passed) {
  if (!settings.enabled || findings.empty())
    return;
  place_with_simulations(findings, package, directory, settings, diagnostics, memo, passed);
  rank_unsized_split_anywhere(findings, package, settings);
}

} // namespace devlint
