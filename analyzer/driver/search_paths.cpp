#include "driver/search_paths.h"

#include <filesystem>
#include <functional>

#include "driver/source_reading.h"
#include "frontend/python/python_frontend.h"
#include "model/text.h"
#include "model/transformers_summary.h"

namespace devlint {
namespace fs = std::filesystem;

namespace {

constexpr int kMaxImportHops = 12;            // re-exports and bases followed from one import
constexpr size_t kMaxModulesPerRun = 512;     // files read from the search paths in one run
constexpr uint64_t kMaxModuleBytes = 8 << 20; // larger files are not read

bool is_torch_module(std::string_view module) {
  return module == "torch" || starts_with(module, "torch.");
}

// `a.b.c` with identifier-like parts only: nothing that could leave the search path.
bool is_module_name(std::string_view module) {
  if (module.empty() || module.front() == '.' || module.back() == '.')
    return false;
  char previous = '.';
  for (char c : module) {
    bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '_' || static_cast<unsigned char>(c) >= 0x80;
    if (!word && !(c == '.' && previous != '.'))
      return false;
    previous = c;
  }
  return true;
}

std::string parent_module(const std::string &module) {
  size_t dot = module.rfind('.');
  return dot == std::string::npos ? std::string() : module.substr(0, dot);
}

const Expr *strip_subscript(const Expr *e) {
  while (e && e->kind == ExprKind::Subscript) // Generic[...]
    e = e->operands.empty() ? nullptr : e->operands[0];
  return e;
}

std::string leaf_name(const Expr *e) {
  std::string dotted = dotted_name(strip_subscript(e));
  size_t dot = dotted.rfind('.');
  return dot == std::string::npos ? dotted : dotted.substr(dot + 1);
}

ExternalModelFacts summary_facts(const std::string &leaf) {
  ExternalModelFacts facts;
  const TransformersModelFacts *t = find_transformers_model(leaf);
  if (!t) {
    facts.is_module = facts.is_pretrained_model = false;
    return facts;
  }
  facts.source =
      leaf + " in transformers " + kTransformersSummaryVersion + ", devlint's built-in summary";
  facts.declares_no_split = t->declares_no_split;
  facts.no_split_modules = split_summary_names(t->no_split_modules);
  facts.skip_keys = split_summary_names(t->skip_keys);
  return facts;
}

} // namespace

struct SearchPathResolver::LoadedModule {
  std::string name;
  bool is_package = false; // an __init__.py: relative imports start at the module itself
  std::unique_ptr<SourceFile> source;
  std::unique_ptr<SyntaxFile> syntax;
  std::unique_ptr<Package> package;

  // `..modeling_utils` seen from this module, as an absolute name ("" when it leaves the top).
  std::string absolute(std::string_view imported) const {
    if (imported.empty() || imported.front() != '.')
      return std::string(imported);
    size_t dots = imported.find_first_not_of('.');
    if (dots == std::string_view::npos)
      dots = imported.size();
    std::string base = is_package ? name : parent_module(name);
    for (size_t i = 1; i < dots; ++i) {
      if (base.empty())
        return {};
      base = parent_module(base);
    }
    std::string rest(imported.substr(dots));
    if (base.empty())
      return {};
    return rest.empty() ? base : base + "." + rest;
  }
};

SearchPathResolver::SearchPathResolver(std::vector<std::string> search_paths,
                                       bool python_environment)
    : paths_(std::move(search_paths)), python_environment_(python_environment) {}

SearchPathResolver::~SearchPathResolver() = default;

const ExternalModelFacts *SearchPathResolver::resolve(std::string_view module,
                                                      std::string_view name) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::set<std::string> files;
  return resolve_locked(std::string(module), std::string(name), 0, files);
}

std::vector<std::pair<std::string, std::string>>
SearchPathResolver::dependencies_of(const std::vector<const SyntaxFile *> &files,
                                    std::vector<std::string> *absent) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::set<std::string> used;
  for (const SyntaxFile *file : files)
    for (const ClassDef *cls : file->classes)
      for (const Expr *base : cls->bases)
        if (auto imported = imported_class(*file, base);
            imported && !is_torch_module(imported->module))
          resolve_locked(imported->module, imported->name, 0, used);
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string &path : used)
    if (auto it = module_by_path_.find(path); it != module_by_path_.end())
      out.emplace_back(path, it->second->source->text);
    else if (absent)
      absent->push_back(path);
  return out;
}

const SearchPathResolver::LoadedModule *SearchPathResolver::load_locked(const std::string &module) {
  if (auto it = modules_.find(module); it != modules_.end())
    return it->second.get();
  std::unique_ptr<LoadedModule> &slot = modules_[module];
  if (!is_module_name(module) || files_read_ >= kMaxModulesPerRun)
    return nullptr;
  fs::path relative;
  size_t start = 0;
  while (start <= module.size()) {
    size_t dot = module.find('.', start);
    if (dot == std::string::npos)
      dot = module.size();
    relative /= module.substr(start, dot - start);
    start = dot + 1;
  }
  auto search = [&](const std::string &directory) -> bool {
    fs::path base = fs::path(directory) / relative;
    // A regular package (a directory with __init__.py) wins over a module file of the same name,
    // as in Python's path finder; a directory without one (a namespace portion) does not.
    for (bool package : {true, false}) {
      fs::path candidate = package ? base / "__init__.py" : fs::path(base.string() + ".py");
      std::error_code ec;
      if (!fs::is_regular_file(candidate, ec)) {
        absent_candidates_[module].push_back(candidate.lexically_normal().string());
        continue;
      }
      Diagnostic ignored;
      auto source =
          read_source_file(candidate.lexically_normal().string(), kMaxModuleBytes, ignored);
      if (!source)
        return true; // too large, binary, not UTF-8: not read (Python would not skip it either)
      ++files_read_;
      auto loaded = std::make_unique<LoadedModule>();
      loaded->name = module;
      loaded->is_package = package;
      loaded->source = std::move(source);
      loaded->syntax = lower_python(*loaded->source);
      loaded->package = build_package({loaded->syntax.get()}, {});
      module_by_path_[loaded->source->path] = loaded.get();
      slot = std::move(loaded);
      return true;
    }
    return false;
  };
  for (const std::string &directory : paths_)
    if (search(directory))
      return slot.get();
  // The Python environment is asked only now: most runs never need it.
  if (python_environment_)
    for (const std::string &directory : python_environment_paths_once())
      if (search(directory))
        return slot.get();
  return nullptr;
}

const ExternalModelFacts *SearchPathResolver::resolve_base(const LoadedModule &m, const Expr *base,
                                                           int depth,
                                                           std::set<std::string> &files) {
  std::string dotted = dotted_name(strip_subscript(base));
  if (dotted.empty())
    return nullptr;
  if (dotted.find('.') == std::string::npos) {
    // `from ...modeling_utils import PreTrainedModel`: relative imports are common here.
    for (const ImportedName &imported : m.syntax->imports) {
      if (imported.local_name != dotted || imported.name.empty())
        continue;
      std::string module = m.absolute(imported.module);
      if (module.empty() || is_torch_module(module))
        return nullptr;
      return resolve_locked(module, std::string(imported.name), depth + 1, files);
    }
    return nullptr;
  }
  auto imported = imported_class(*m.syntax, base);
  if (!imported || is_torch_module(imported->module))
    return nullptr;
  return resolve_locked(imported->module, imported->name, depth + 1, files);
}

ExternalModelFacts SearchPathResolver::facts_of_class(const LoadedModule &m, const ModuleClass &cls,
                                                      int depth, std::set<std::string> &files) {
  ExternalModelFacts out;
  out.base = std::string(cls.name);
  out.is_module = cls.is_module;
  out.is_pretrained_model = cls.is_pretrained_model || ends_with(cls.name, "PreTrainedModel");
  bool have_no_split = false, have_skip_keys = false;
  std::set<const ModuleClass *> visited;
  // Python's attribute lookup, approximated depth-first and left to right: the first class on
  // the way that assigns an attribute (even to None) decides it.
  std::function<void(const ModuleClass *)> visit = [&](const ModuleClass *c) {
    if (!visited.insert(c).second || visited.size() > 64)
      return;
    if (!have_no_split && (c->declares_no_split || c->assigns_no_split)) {
      have_no_split = true;
      out.declares_no_split = c->declares_no_split;
      out.no_split_modules = c->no_split_modules;
      out.source = std::string(c->name) + " in " + m.source->path;
    }
    if (!have_skip_keys && c->declares_skip_keys) {
      have_skip_keys = true;
      out.skip_keys = c->skip_keys;
      if (out.source.empty())
        out.source = std::string(c->name) + " in " + m.source->path;
    }
    for (const Expr *b : c->def->bases) {
      std::string leaf = leaf_name(b);
      const ModuleClass *own = m.package->find_class(leaf);
      if (own && own != c) {
        visit(own);
        continue;
      }
      ExternalModelFacts summary;
      const ExternalModelFacts *facts = resolve_base(m, b, depth, files);
      if (!facts) {
        summary = summary_facts(leaf);
        facts = &summary;
      }
      out.is_module |= facts->is_module;
      out.is_pretrained_model |= facts->is_pretrained_model;
      if (!have_no_split && facts->declares_no_split) {
        have_no_split = true;
        out.declares_no_split = true;
        out.no_split_modules = facts->no_split_modules;
        out.source = facts->source;
      }
      if (!have_skip_keys && !facts->skip_keys.empty()) {
        have_skip_keys = true;
        out.skip_keys = facts->skip_keys;
        if (out.source.empty())
          out.source = facts->source;
      }
    }
  };
  visit(&cls);
  if (out.source.empty())
    out.source = std::string(cls.name) + " in " + m.source->path;
  return out;
}

const ExternalModelFacts *SearchPathResolver::resolve_locked(const std::string &module,
                                                             const std::string &name, int depth,
                                                             std::set<std::string> &files) {
  auto key = std::make_pair(module, name);
  if (auto it = resolutions_.find(key); it != resolutions_.end()) {
    if (!it->second.done)
      return nullptr; // a cycle of re-exports or bases
    files.insert(it->second.files.begin(), it->second.files.end());
    return it->second.facts.get();
  }
  if (depth > kMaxImportHops)
    return nullptr;
  Resolution &r = resolutions_[key];
  const LoadedModule *m = load_locked(module);
  if (auto absent = absent_candidates_.find(module); absent != absent_candidates_.end())
    r.files.insert(absent->second.begin(), absent->second.end());
  if (m) {
    r.files.insert(m->source->path);
    if (const ModuleClass *cls = m->package->find_class(name)) {
      r.facts = std::make_unique<ExternalModelFacts>(facts_of_class(*m, *cls, depth, r.files));
    } else {
      // Re-exported: `from .modeling_llama import LlamaModel`, then `from .x import *`.
      for (bool star : {false, true}) {
        for (const ImportedName &imported : m->syntax->imports) {
          bool matches =
              star ? imported.name == "*" : imported.local_name == name && !imported.name.empty();
          if (!matches)
            continue;
          std::string target = m->absolute(imported.module);
          if (target.empty() || is_torch_module(target))
            continue;
          std::string inner = star ? name : std::string(imported.name);
          if (const ExternalModelFacts *f = resolve_locked(target, inner, depth + 1, r.files)) {
            r.facts = std::make_unique<ExternalModelFacts>(*f);
            break;
          }
        }
        if (r.facts)
          break;
      }
    }
  }
  r.done = true;
  files.insert(r.files.begin(), r.files.end());
  return r.facts.get();
}

} // namespace devlint
