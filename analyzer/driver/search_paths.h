// Search paths, as a type checker resolves absolute imports: `--search-path DIR`, the
// `search-path` setting, and the active Python environment's import paths (asked from python3).
// A base class imported from outside the package (`from transformers.models.llama.modeling_llama
// import LlamaPreTrainedModel`) is found there and its source read, never imported: its
// `_no_split_modules`, `_skip_keys_device_placement` and bases take precedence over the built-in
// summary of transformers. The environment's paths come from python_environment.h. Bounded: only
// the modules an import names, a few hops deep, files of limited size, each read once per run.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "driver/python_environment.h"
#include "model/module_model.h"
#include "model/source_file.h"

namespace devlint {

class SearchPathResolver final : public ExternalClassResolver {
public:
  // `search_paths` in order; with `python_environment`, the environment's paths after them,
  // asked only when a module is not found on the others.
  SearchPathResolver(std::vector<std::string> search_paths, bool python_environment);
  ~SearchPathResolver() override;

  const ExternalModelFacts *resolve(std::string_view module, std::string_view name) override;

  // Resolves the bases the files import absolutely (as build_package will) and returns the files
  // on the search paths that this read, with their text, sorted by path: what the package's
  // cached result depends on besides its own files. `absent` gets the candidate files looked for
  // and not found (before the one found, or all of them): one appearing would shadow or supply
  // a module.
  std::vector<std::pair<std::string, std::string>>
  dependencies_of(const std::vector<const SyntaxFile *> &files,
                  std::vector<std::string> *absent = nullptr);

  const std::vector<std::string> &search_paths() const { return paths_; }

private:
  struct LoadedModule;
  struct Resolution {
    std::unique_ptr<ExternalModelFacts> facts; // null: not found
    std::set<std::string> files; // files read to resolve it, and candidates that did not exist
    bool done = false;           // false while it is being resolved (cycles)
  };

  const ExternalModelFacts *resolve_locked(const std::string &module, const std::string &name,
                                           int depth, std::set<std::string> &files);
  const LoadedModule *load_locked(const std::string &module);
  ExternalModelFacts facts_of_class(const LoadedModule &m, const ModuleClass &cls, int depth,
                                    std::set<std::string> &files);
  const ExternalModelFacts *resolve_base(const LoadedModule &m, const Expr *base, int depth,
                                         std::set<std::string> &files);

  std::mutex mutex_;
  std::vector<std::string> paths_;
  bool python_environment_ = false;
  std::map<std::string, std::unique_ptr<LoadedModule>> modules_; // null: no such module
  std::map<std::pair<std::string, std::string>, Resolution> resolutions_;
  std::map<std::string, const LoadedModule *> module_by_path_;
  std::map<std::string, std::vector<std::string>> absent_candidates_; // by module name
  size_t files_read_ = 0;
};

} // namespace devlint
