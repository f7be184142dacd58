// Model scopes: the files of a package joined by relative imports form one model, whose
// `_no_split_modules` and skip keys apply to all its classes (module_model.h, ModelScope).
#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "model/package_builder.h"

namespace devlint {

void assign_model_scopes(Package &package, const PackageOverrides &overrides) {
  const std::vector<const SyntaxFile *> &files = package.files;
  // Linear in the number of names, however many there are: each list has a set beside it.
  auto add_unique = [](std::vector<std::string> &into, std::unordered_set<std::string> &seen,
                       const std::string &value) {
    if (seen.insert(value).second)
      into.push_back(value);
  };
  // Files joined by relative imports form one model scope (union-find over file indices).
  std::vector<size_t> parent(files.size());
  for (size_t i = 0; i < files.size(); ++i)
    parent[i] = i;
  auto root = [&](size_t i) { // iterative: a chain of imports may be as long as the package
    size_t r = i;
    while (parent[r] != r)
      r = parent[r];
    while (parent[i] != r) {
      size_t next = parent[i];
      parent[i] = r;
      i = next;
    }
    return r;
  };
  auto stem = [](const SyntaxFile *f) {
    std::string path = f->source->path;
    size_t slash = path.find_last_of('/');
    std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
    return name.size() > 3 ? name.substr(0, name.size() - 3) : name;
  };
  // The files of each module name, in package order (a lookup per import, not a scan).
  std::unordered_map<std::string, std::vector<size_t>> files_by_stem;
  for (size_t i = 0; i < files.size(); ++i)
    files_by_stem[stem(files[i])].push_back(i);
  for (size_t i = 0; i < files.size(); ++i) {
    // A package's __init__.py re-exports every model of the directory (data2vec's audio, text
    // and vision): that joins no two of them into one model.
    if (stem(files[i]) == "__init__")
      continue;
    for (const ImportedName &imp : files[i]->imports) {
      if (imp.module.size() < 2 || imp.module[0] != '.' || imp.module[1] == '.')
        continue;
      std::string target(imp.module.substr(1, imp.module.find('.', 1) - 1));
      auto importing = files_by_stem.find(target);
      if (importing != files_by_stem.end())
        for (size_t j : importing->second)
          if (j != i)
            parent[root(i)] = root(j);
    }
  }
  std::unordered_map<size_t, ModelScope *> scope_of_root;
  std::unordered_map<size_t, bool> has_pretrained, declares;
  for (size_t i = 0; i < files.size(); ++i) {
    size_t r = root(i);
    if (!scope_of_root.count(r)) {
      package.scopes.push_back(std::make_unique<ModelScope>());
      scope_of_root[r] = package.scopes.back().get();
    }
  }
  std::unordered_map<const SyntaxFile *, size_t> index_of;
  for (size_t i = 0; i < files.size(); ++i)
    index_of[files[i]] = i;
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
  for (auto &cls : package.classes) {
    size_t r = root(index_of[cls->file]);
    ModelScope *scope = scope_of_root[r];
    cls->scope = scope;
    has_pretrained[r] = has_pretrained[r] || cls->is_pretrained_model;
    declares[r] = declares[r] || cls->declares_no_split;
    scope->declared_in_package |= cls->declares_no_split;
    scope->has_pretrained_model |= cls->is_pretrained_model;
    for (const std::string &n : cls->no_split_modules)
      add_unique(scope->no_split_modules, scope->no_split_set, n);
    for (const std::string &k : cls->skip_keys) {
      add_unique(scope->skip_keys, scope->skip_key_set, k);
      add_unique(package.skip_keys, package.skip_key_set, k);
    }
    // What a transformers base declares applies unless the package overrides it.
    const ExternalModelFacts *ext = cls->external;
    if (!ext)
      continue;
    bool used = false;
    if (ext->declares_no_split && !declares_in_package(cls.get(), false, 0)) {
      declares[r] = true;
      for (const std::string &n : ext->no_split_modules)
        add_unique(scope->no_split_modules, scope->no_split_set, n);
      used = true;
    }
    if (!ext->skip_keys.empty() && !declares_in_package(cls.get(), true, 0)) {
      for (const std::string &k : ext->skip_keys) {
        add_unique(scope->skip_keys, scope->skip_key_set, k);
        add_unique(package.skip_keys, package.skip_key_set, k);
      }
      used = true;
    }
    if (used && scope->external_source.find(ext->source) == std::string::npos)
      scope->external_source += (scope->external_source.empty() ? "" : "; ") + ext->source;
  }
  std::unordered_map<size_t, bool> explicit_placement;
  for (size_t i = 0; i < files.size(); ++i)
    explicit_placement[root(i)] = explicit_placement[root(i)] || files[i]->explicit_placement;
  for (auto &[r, scope] : scope_of_root) {
    // Code placed only by explicit moves (LibTorch) is never split by a device map.
    scope->refuses_string_maps = !explicit_placement[r] && has_pretrained[r] && !declares[r] &&
                                 overrides.extra_no_split_modules.empty();
    scope->supports_device_map =
        !explicit_placement[r] && (!scope->refuses_string_maps || overrides.hand_made_maps);
    for (const std::string &n : overrides.extra_no_split_modules)
      add_unique(scope->no_split_modules, scope->no_split_set, n);
    scope->extended_by_settings = !overrides.extra_no_split_modules.empty();
    for (const std::string &k : overrides.extra_skip_keys)
      add_unique(scope->skip_keys, scope->skip_key_set, k);
  }
  for (const std::string &k : overrides.extra_skip_keys)
    add_unique(package.skip_keys, package.skip_key_set, k);
}

} // namespace devlint
