// Model scopes: which model's `_no_split_modules` and skip keys apply to each class
// (module_model.h, ModelScope). A file that defines a model, with the model files whose models it
// imports (nested models), is one model; files without a model (shared blocks) are libraries. A
// class is judged by the lists of the models that build it, so a folder holding many models one
// per file (diffusers' autoencoders, all importing `.vae`) is not judged by the union of them all.
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "model/package_builder.h"
#include "model/text.h"

namespace devlint {
namespace {

void add_unique(std::vector<std::string> &into, std::unordered_set<std::string> &seen,
                const std::string &value) {
  if (seen.insert(value).second) // linear however many names: each list has a set beside it
    into.push_back(value);
}

// What the classes of one group of files declare, before overrides.
struct GroupFacts {
  std::vector<std::string> no_split_modules, skip_keys;
  std::unordered_set<std::string> no_split_set, skip_key_set;
  std::string external_source;
  bool declared_in_package = false; // a class of the group declares _no_split_modules itself
  bool declares = false;            // ... or a transformers base it builds on does
  bool has_pretrained_model = false;
  bool has_diffusers_model = false; // a ModelMixin, which refuses string maps without a list
  // A model class built on a PreTrainedModel from outside the package whose source was not found:
  // whether it declares a list is unknown, so it is not taken to declare none.
  bool unknown_base = false;
  std::string unknown_list_base;   // ... named, where the base is known by its import
  bool explicit_placement = false; // LibTorch code placed by explicit moves
};

// Union-find over file indices; iterative, since a chain of imports may be as long as the package.
struct FileGroups {
  std::vector<size_t> parent;
  explicit FileGroups(size_t n) : parent(n) {
    for (size_t i = 0; i < n; ++i)
      parent[i] = i;
  }
  size_t root(size_t i) {
    size_t r = i;
    while (parent[r] != r)
      r = parent[r];
    while (parent[i] != r) {
      size_t next = parent[i];
      parent[i] = r;
      i = next;
    }
    return r;
  }
  void join(size_t a, size_t b) { parent[root(a)] = root(b); }
};

// Whether a class of `file` holds `model` as a child (`self.text_model = TextModel(config)`, a
// factory's `TextModel._from_config(...)`): then the two files are one model. A model imported
// only to be subclassed, converted from (`from_unet2d(cls, unet: UNet2DConditionModel)`) or
// checked with isinstance is another model, whose own `_no_split_modules` decides for it (a
// subclass inherits its base's list through the class, not through the file).
bool builds_as_child(const Package &package, const SyntaxFile *file, const ModuleClass &model) {
  auto classes = package.classes_of_file.find(file);
  if (classes == package.classes_of_file.end())
    return false;
  for (const auto &[name, cls] : classes->second)
    for (const ChildDecl &child : cls->children)
      if (child.resolved == &model || child.class_name == model.name)
        return true;
  return false;
}

} // namespace

void assign_model_scopes(Package &package, const PackageOverrides &overrides) {
  const std::vector<const SyntaxFile *> &files = package.files;
  std::unordered_map<const SyntaxFile *, size_t> index_of;
  for (size_t i = 0; i < files.size(); ++i)
    index_of[files[i]] = i;
  std::vector<bool> defines_model(files.size(), false);
  for (const auto &cls : package.classes)
    if (cls->is_pretrained_model && index_of.count(cls->file))
      defines_model[index_of[cls->file]] = true;
  // The files of each module name, in package order (a lookup per import, not a scan).
  std::unordered_map<std::string_view, std::vector<size_t>> files_by_stem;
  for (size_t i = 0; i < files.size(); ++i)
    files_by_stem[module_stem(files[i]->source->path)].push_back(i);
  // Joined: a model file with the model files whose models it imports (BLIP's text model, built
  // inside BLIP), and library files with each other. A model that imports a shared block or an
  // output class is not joined to the file that defines it: that file may serve many models.
  FileGroups groups(files.size());
  FileGroups connected(files.size()); // by any import: what a class no model builds falls back to
  for (size_t i = 0; i < files.size(); ++i) {
    // A package's __init__.py re-exports every model of the directory (data2vec's audio, text
    // and vision): that joins no two of them into one model.
    if (module_stem(files[i]->source->path) == "__init__")
      continue;
    for (const ImportedName &imp : files[i]->imports) {
      if (imp.module.size() < 2 || imp.module[0] != '.' || imp.module[1] == '.')
        continue;
      auto importing = files_by_stem.find(imp.module.substr(1, imp.module.find('.', 1) - 1));
      if (importing == files_by_stem.end())
        continue;
      for (size_t j : importing->second) {
        if (j == i)
          continue;
        connected.join(i, j);
        bool nested_model = false;
        if (defines_model[i] && defines_model[j]) {
          const ModuleClass *imported = package.find_class(imp.local_name, files[i]);
          nested_model = imported && imported->file == files[j] && imported->is_pretrained_model &&
                         builds_as_child(package, files[i], *imported);
        }
        if (nested_model || (!defines_model[i] && !defines_model[j]))
          groups.join(i, j);
      }
    }
  }

  // Does the class, or a package base of it, declare `_no_split_modules` / skip keys itself?
  std::function<bool(const ModuleClass *, bool, int)> declares_in_package =
      [&](const ModuleClass *cls, bool skip, int depth) {
        if (skip ? cls->declares_skip_keys : cls->declares_no_split)
          return true;
        for (const ModuleClass *b : cls->bases)
          if (depth < 16 && declares_in_package(b, skip, depth + 1))
            return true;
        return false;
      };
  std::unordered_map<size_t, GroupFacts> facts;
  for (size_t i = 0; i < files.size(); ++i)
    facts[groups.root(i)].explicit_placement |= files[i]->explicit_placement;
  for (auto &cls : package.classes) {
    GroupFacts &g = facts[groups.root(index_of[cls->file])];
    g.declares |= cls->declares_no_split;
    g.declared_in_package |= cls->declares_no_split;
    g.has_pretrained_model |= cls->is_pretrained_model;
    g.has_diffusers_model |= cls->diffusers_model;
    if (!cls->external)
      for (const Expr *b : cls->def->bases) {
        std::string_view leaf = leaf_of(b);
        g.unknown_base |= leaf != "PreTrainedModel" && ends_with(leaf, "PreTrainedModel") &&
                          !package.find_class(leaf);
      }
    for (const std::string &n : cls->no_split_modules)
      add_unique(g.no_split_modules, g.no_split_set, n);
    for (const std::string &k : cls->skip_keys) {
      add_unique(g.skip_keys, g.skip_key_set, k);
      add_unique(package.skip_keys, package.skip_key_set, k);
    }
    // What a transformers base declares applies unless the package overrides it.
    const ExternalModelFacts *ext = cls->external;
    if (!ext)
      continue;
    if (ext->list_unknown && !declares_in_package(cls.get(), false, 0)) {
      g.unknown_base = true;
      if (g.unknown_list_base.empty())
        g.unknown_list_base = ext->source;
    }
    bool used = false;
    if (ext->declares_no_split && !declares_in_package(cls.get(), false, 0)) {
      g.declares = true;
      for (const std::string &n : ext->no_split_modules)
        add_unique(g.no_split_modules, g.no_split_set, n);
      used = true;
    }
    if (!ext->skip_keys.empty() && !declares_in_package(cls.get(), true, 0)) {
      for (const std::string &k : ext->skip_keys) {
        add_unique(g.skip_keys, g.skip_key_set, k);
        add_unique(package.skip_keys, package.skip_key_set, k);
      }
      used = true;
    }
    if (used && g.external_source.find(ext->source) == std::string::npos)
      g.external_source += (g.external_source.empty() ? "" : "; ") + ext->source;
  }
  for (const std::string &k : overrides.extra_skip_keys)
    add_unique(package.skip_keys, package.skip_key_set, k);

  // One scope per set of groups (sorted roots) and whether every model building the class lacks
  // a list of its own (in a nested model too, from transformers 4.35), made once.
  struct Refusals {
    bool own = false;
    bool nested = false;
    bool operator<(const Refusals &o) const {
      return std::tie(own, nested) < std::tie(o.own, o.nested);
    }
  };
  std::map<std::pair<std::vector<size_t>, Refusals>, ModelScope *> scope_of_groups;
  // transformers 5 refuses no string map: post_init makes `_no_split_modules` the set of the
  // model's and its PreTrainedModel children's lists, however empty, and _get_device_map
  // (integrations/accelerate.py) passes it on as is. 4.x raises for a model whose list is None
  // (from_pretrained), as diffusers' ModelMixin does in every version.
  std::optional<int> major;
  auto transformers_major = [&] {
    if (!major)
      major = overrides.transformers_major ? overrides.transformers_major() : 5;
    return *major;
  };
  auto scope_for = [&](std::vector<size_t> roots, Refusals refusals = {}) {
    std::sort(roots.begin(), roots.end());
    roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
    auto [it, fresh] = scope_of_groups.emplace(std::make_pair(roots, refusals), nullptr);
    if (!fresh)
      return it->second;
    package.scopes.push_back(std::make_unique<ModelScope>());
    ModelScope *scope = it->second = package.scopes.back().get();
    bool declares = false, explicit_placement = false, diffusers = false, unknown_base = false;
    for (size_t r : roots) {
      const GroupFacts &g = facts[r];
      for (const std::string &n : g.no_split_modules)
        add_unique(scope->no_split_modules, scope->no_split_set, n);
      for (const std::string &k : g.skip_keys)
        add_unique(scope->skip_keys, scope->skip_key_set, k);
      if (!g.external_source.empty() &&
          scope->external_source.find(g.external_source) == std::string::npos)
        scope->external_source += (scope->external_source.empty() ? "" : "; ") + g.external_source;
      scope->declared_in_package |= g.declared_in_package;
      scope->has_pretrained_model |= g.has_pretrained_model;
      declares |= g.declares;
      explicit_placement |= g.explicit_placement;
      diffusers |= g.has_diffusers_model;
      unknown_base |= g.unknown_base;
      if (scope->unknown_list_base.empty())
        scope->unknown_list_base = g.unknown_list_base;
    }
    // Code placed only by explicit moves (LibTorch) is never split by a device map.
    scope->refuses_string_maps = !explicit_placement && scope->has_pretrained_model && !declares &&
                                 overrides.extra_no_split_modules.empty() &&
                                 (diffusers || unknown_base || transformers_major() < 5);
    scope->splits_anywhere = !explicit_placement && scope->has_pretrained_model && !declares &&
                             overrides.extra_no_split_modules.empty() &&
                             !scope->refuses_string_maps;
    // No PreTrainedModel (or ModelMixin) at all: nothing loads these modules with
    // device_map="auto"; only the user's own accelerate calls (infer_auto_device_map and
    // dispatch_model, with a no-split list of their choosing) could split them, a hand-made map.
    scope->without_loader = !explicit_placement && !scope->has_pretrained_model &&
                            overrides.extra_no_split_modules.empty();
    scope->supports_device_map =
        !explicit_placement &&
        ((!scope->refuses_string_maps && !scope->without_loader) || overrides.hand_made_maps);
    const bool refusable = !explicit_placement && scope->has_pretrained_model &&
                           overrides.extra_no_split_modules.empty();
    scope->own_list_missing = refusals.own && refusable;
    scope->nested_list_missing = refusals.nested && refusable;
    scope->hand_made_maps = overrides.hand_made_maps;
    for (const std::string &n : overrides.extra_no_split_modules)
      add_unique(scope->no_split_modules, scope->no_split_set, n);
    scope->extended_by_settings = !overrides.extra_no_split_modules.empty();
    for (const std::string &k : overrides.extra_skip_keys)
      add_unique(scope->skip_keys, scope->skip_key_set, k);
    return scope;
  };

  // Whether `owner`'s child is the class it resolved to: one of its own file, or one it imports
  // from that class's module (a name imported from a module outside the package resolves to any
  // class of that name, which is no evidence of who builds it).
  auto builds = [&](const ModuleClass &owner, const ChildDecl &child) {
    if (child.resolved->file == owner.file)
      return true;
    std::string_view stem = module_stem(child.resolved->file->source->path);
    for (const ImportedName &imp : owner.file->imports) {
      if (imp.local_name != child.class_name)
        continue;
      std::string_view module = imp.module;
      size_t dot = module.find_last_of('.');
      return (dot == std::string_view::npos ? module : module.substr(dot + 1)) == stem;
    }
    return true; // reached by a name the file does not import (a base's module, a dict)
  };
  // The models that build each class: every class reachable from a model class through its
  // children (and the package bases whose code those run), with the model's group.
  // Whether a model declares `_no_split_modules` through its own class and bases, as Python's
  // attribute lookup finds it (the first class that assigns it, `None` included).
  std::function<std::optional<bool>(const ModuleClass *, int)> chain_declares =
      [&](const ModuleClass *cls, int depth) -> std::optional<bool> {
    if (cls->assigns_no_split || cls->declares_no_split)
      return cls->declares_no_split;
    if (cls->external && cls->external->declares_no_split)
      return true;
    for (const ModuleClass *b : cls->bases)
      if (depth < 16)
        if (std::optional<bool> found = chain_declares(b, depth + 1))
          return found;
    return std::nullopt;
  };
  std::unordered_map<const ModuleClass *, std::vector<size_t>> builders;
  // The names a class's lists keep whole, through its bases.
  std::function<void(const ModuleClass *, int, std::unordered_set<std::string> &)> listed_names =
      [&](const ModuleClass *cls, int depth, std::unordered_set<std::string> &names) {
        names.insert(cls->no_split_modules.begin(), cls->no_split_modules.end());
        if (cls->external)
          names.insert(cls->external->no_split_modules.begin(),
                       cls->external->no_split_modules.end());
        for (const ModuleClass *b : cls->bases)
          if (depth < 16)
            listed_names(b, depth + 1, names);
      };
  // transformers 4 (from 4.35, `_get_no_split_modules`) walks the loaded model's modules and
  // raises for a string map at any PreTrainedModel whose `_no_split_modules` is None, the model
  // itself or one nested in it (InternVL's vision model inside its root), unless a class the
  // lists gathered so far keep whole holds it.
  auto nests_model_without_list = [&](const ModuleClass *model) {
    std::unordered_set<std::string> kept;
    listed_names(model, 0, kept);
    std::unordered_set<const ModuleClass *> seen{model};
    std::vector<const ModuleClass *> pending{model};
    while (!pending.empty()) {
      const ModuleClass *cls = pending.back();
      pending.pop_back();
      if (cls != model && cls->is_pretrained_model) {
        if (!chain_declares(cls, 0).value_or(false))
          return true;
        listed_names(cls, 0, kept);
      }
      for (const ChildDecl *child : cls->all_children())
        if (child->resolved && !kept.count(std::string(child->resolved->name)) &&
            seen.insert(child->resolved).second)
          pending.push_back(child->resolved);
    }
    return false;
  };
  // A model subclassed in another model's file (diffusers' DreamLite UNet on UNet2DConditionModel)
  // is a model of its own, loaded by its own from_pretrained and judged by its own list: the
  // subclass imports it only to inherit, so its list joins nothing of the base's.
  auto is_model_of_another_group = [&](const ModuleClass &base, size_t group) {
    auto file = index_of.find(base.file);
    return base.is_pretrained_model && file != index_of.end() && groups.root(file->second) != group;
  };
  std::unordered_map<const ModuleClass *, Refusals> refused; // for every model building it
  for (const auto &model : package.classes) {
    if (!model->is_pretrained_model)
      continue;
    Refusals missing;
    missing.own = !chain_declares(model.get(), 0).value_or(false);
    missing.nested = missing.own || nests_model_without_list(model.get());
    size_t group = groups.root(index_of[model->file]);
    std::unordered_set<const ModuleClass *> reached{model.get()};
    std::vector<const ModuleClass *> pending{model.get()};
    while (!pending.empty()) {
      const ModuleClass *cls = pending.back();
      pending.pop_back();
      builders[cls].push_back(group);
      auto [entry, first] = refused.emplace(cls, missing);
      if (!first) {
        entry->second.own = entry->second.own && missing.own;
        entry->second.nested = entry->second.nested && missing.nested;
      }
      for (const ModuleClass *base : cls->bases)
        if (!is_model_of_another_group(*base, group) && reached.insert(base).second)
          pending.push_back(base);
      for (const ChildDecl &child : cls->children)
        if (child.resolved && builds(*cls, child) && reached.insert(child.resolved).second)
          pending.push_back(child.resolved);
    }
  }
  // A class no model visibly builds (a block picked from a dict or built by a factory) belongs
  // to its file's model, or, in a library, to every model its file is connected to by imports.
  std::unordered_map<size_t, std::vector<size_t>> connected_groups;
  for (size_t i = 0; i < files.size(); ++i)
    connected_groups[connected.root(i)].push_back(groups.root(i));
  for (auto &cls : package.classes) {
    size_t file = index_of[cls->file];
    if (auto built = builders.find(cls.get()); built != builders.end())
      cls->scope = scope_for(built->second, refused[cls.get()]);
    else if (defines_model[file])
      cls->scope = scope_for({groups.root(file)});
    else
      cls->scope = scope_for(connected_groups[connected.root(file)]);
  }
}

} // namespace devlint
