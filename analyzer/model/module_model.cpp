// The module model's lookups (own declarations first, then package bases) and the order in
// which a package is built.
#include "model/module_model.h"

#include <algorithm>
#include <filesystem>

#include "model/package_builder.h"

namespace devlint {

const ChildDecl *ModuleClass::find_child(std::string_view child) const {
  for (const ChildDecl &c : children)
    if (c.name == child)
      return &c;
  for (const ModuleClass *b : bases)
    if (const ChildDecl *c = b->find_child(child))
      return c;
  return nullptr;
}

const ParameterDecl *ModuleClass::find_parameter(std::string_view param) const {
  for (const ParameterDecl &p : parameters)
    if (p.name == param)
      return &p;
  for (const ModuleClass *b : bases)
    if (const ParameterDecl *p = b->find_parameter(param))
      return p;
  return nullptr;
}

const PlainTensorAttribute *ModuleClass::find_plain_tensor(std::string_view attr) const {
  for (const PlainTensorAttribute &p : plain_tensors)
    if (p.name == attr)
      return &p;
  for (const ModuleClass *b : bases)
    if (const PlainTensorAttribute *p = b->find_plain_tensor(attr))
      return p;
  return nullptr;
}

const FunctionDef *ModuleClass::find_method(std::string_view method) const {
  for (const FunctionDef *f : def->methods)
    if (f->name == method)
      return f;
  for (const ModuleClass *b : bases)
    if (const FunctionDef *f = b->find_method(method))
      return f;
  return nullptr;
}

bool ModuleClass::is_reassigned(std::string_view attr) const {
  if (std::find(reassigned_attributes.begin(), reassigned_attributes.end(), attr) !=
      reassigned_attributes.end())
    return true;
  for (const ModuleClass *b : bases)
    if (b->is_reassigned(attr))
      return true;
  return false;
}

bool ModuleClass::has_parameters() const {
  if (has_builtin_parameters || calls_passed_module)
    return true;
  for (const ParameterDecl *p : all_parameters()) {
    (void)p;
    return true;
  }
  for (const ChildDecl *c : all_children())
    if (c->has_parameters)
      return true;
  return false;
}

std::vector<const ChildDecl *> ModuleClass::all_children() const {
  std::vector<const ChildDecl *> out;
  for (const ModuleClass *b : bases)
    for (const ChildDecl *c : b->all_children())
      out.push_back(c);
  // A child of the class replaces a base's of that name; one attribute built as different
  // classes in different branches (`if ...: self.attention = A(...) else: ... = B(...)`) keeps
  // each.
  auto inherited = static_cast<std::ptrdiff_t>(out.size());
  for (const ChildDecl &c : children) {
    auto same = [&](const ChildDecl *o) { return o->name == c.name; };
    auto first_own = out.begin() + inherited;
    auto kept = std::remove_if(out.begin(), first_own, same);
    inherited -= std::distance(kept, first_own);
    out.erase(kept, first_own);
    out.push_back(&c);
  }
  return out;
}

std::vector<const ParameterDecl *> ModuleClass::all_parameters() const {
  std::vector<const ParameterDecl *> out;
  for (const ModuleClass *b : bases)
    for (const ParameterDecl *p : b->all_parameters())
      out.push_back(p);
  for (const ParameterDecl &p : parameters)
    out.push_back(&p);
  return out;
}

std::string_view module_stem(std::string_view path) {
  size_t slash = path.find_last_of('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  return name.size() > 3 && name.substr(name.size() - 3) == ".py" ? name.substr(0, name.size() - 3)
                                                                  : name;
}

std::string relative_import_path(std::string_view importer, std::string_view module) {
  size_t dots = module.find_first_not_of('.');
  if (dots == std::string_view::npos)
    dots = module.size();
  std::filesystem::path base = std::filesystem::path(importer).parent_path();
  for (size_t i = 1; i < dots; ++i)
    base = base.parent_path();
  std::string rest(module.substr(dots));
  std::replace(rest.begin(), rest.end(), '.', '/');
  return (rest.empty() ? base : base / rest).lexically_normal().string();
}

namespace {

// What `name` means in `file`, as Python resolves a module-level name: the file's own
// definition, else the one it imports relatively from a sibling module (`from .visual import
// VisionBlock`), else null (the caller falls back to the package's first).
template <typename Definition>
const Definition *defined_in_file(
    std::string_view name, const SyntaxFile *file,
    const std::unordered_map<const SyntaxFile *, std::unordered_map<std::string_view, Definition *>>
        &of_file,
    const std::unordered_map<
        std::string_view, const std::unordered_map<std::string_view, Definition *> *> &of_module) {
  auto own = of_file.find(file);
  if (own != of_file.end())
    if (auto it = own->second.find(name); it != own->second.end())
      return it->second;
  if (!file)
    return nullptr;
  for (const ImportedName &imported : file->imports) {
    std::string_view module = imported.module;
    if (imported.local_name != name || module.size() < 2 || module[0] != '.')
      continue;
    if (module[1] != '.') {
      std::string_view stem = module.substr(1, module.find('.', 1) - 1);
      if (auto other = of_module.find(stem); other != of_module.end())
        if (auto it = other->second->find(imported.name); it != other->second->end())
          return it->second;
      continue;
    }
    // `from ..embeddings import X`: a file of the source tree above the package (read as a
    // library file), found by its path.
    if (!file->source)
      continue;
    std::string target = relative_import_path(file->source->path, module);
    for (const auto &[other, definitions] : of_file)
      if (other && other->source &&
          (other->source->path == target + ".py" || other->source->path == target + "/__init__.py"))
        if (auto it = definitions.find(imported.name); it != definitions.end())
          return it->second;
  }
  return nullptr;
}

} // namespace

const ModuleClass *Package::find_class(std::string_view name, const SyntaxFile *file) const {
  if (const ModuleClass *own = defined_in_file(name, file, classes_of_file, classes_of_module))
    return own;
  return find_class(name);
}

const ModuleClass *Package::class_in_file(std::string_view name, const SyntaxFile *file) const {
  return defined_in_file(name, file, classes_of_file, classes_of_module);
}

const FunctionDef *Package::function_in_file(std::string_view name, const SyntaxFile *file) const {
  return defined_in_file(name, file, functions_of_file, functions_of_module);
}

const FunctionDef *Package::find_function(std::string_view name, const SyntaxFile *file) const {
  if (const FunctionDef *own = defined_in_file(name, file, functions_of_file, functions_of_module))
    return own;
  return find_function(name);
}

std::unique_ptr<Package> build_package(const std::vector<const SyntaxFile *> &files,
                                       const PackageOverrides &overrides) {
  auto pkg = std::make_unique<Package>();
  pkg->files = files;
  PackageBuilder builder(*pkg);
  builder.collect_declarations();
  builder.resolve_external_bases(overrides.external_classes);
  builder.classify();
  for (auto &cls : pkg->classes)
    builder.collect_members(*cls);
  builder.adopt_generated_declarations();
  builder.promote_called_factories();
  builder.resolve_member_children();
  builder.resolve_children();
  assign_model_scopes(*pkg, overrides);
  return pkg;
}

} // namespace devlint
