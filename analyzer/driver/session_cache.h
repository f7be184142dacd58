// What a long-lived process (the editor server) keeps between checks, so that an edit re-lowers
// and re-simulates only what it changed: the edited documents' parse trees (reparsed
// incrementally), the context files their imports add (lowered once per content), the search-path
// resolvers (the Python environment's modules read once), and the simulated placements. A check
// uses it when CheckOptions::session points at one; results are the same as without it.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "driver/search_paths.h"
#include "frontend/python/incremental_python.h"
#include "model/source_file.h"
#include "model/syntax.h"
#include "simulation/simulation_memo.h"

namespace devlint {

class SessionCache {
public:
  SessionCache();
  ~SessionCache();

  // A reported Python file, lowered incrementally from the previous text of the same path.
  std::unique_ptr<SyntaxFile> lower_reported(const SourceFile &source);

  // A context file (a sibling module a reported file imports), lowered once per content: a file
  // whose text is that of the entry kept for its path is not lowered again. The result stays valid
  // until the next call for the same path with another text, or clear().
  struct ContextFile {
    std::unique_ptr<SourceFile> source;
    std::unique_ptr<SyntaxFile> syntax;
  };
  const ContextFile &lower_context(std::unique_ptr<SourceFile> source);

  // One resolver per list of search paths, kept between checks.
  SearchPathResolver *resolver(const std::vector<std::string> &search_paths,
                               bool python_environment);

  SimulationMemo &simulations() { return simulations_; }

  // A document closed: its parse tree goes.
  void forget_document(const std::string &path);
  // Files outside the edited documents may have changed (a save, new settings): the resolvers
  // read them again on the next check. Context files are compared by content on each check.
  void forget_outside_files();

  size_t context_files_lowered() const { return context_lowered_; }

private:
  static constexpr size_t kMaxDocuments = 64;
  static constexpr size_t kMaxContextFiles = 256;
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<IncrementalPythonParser>> documents_;
  std::map<std::string, ContextFile> context_;
  std::map<std::pair<std::vector<std::string>, bool>, std::unique_ptr<SearchPathResolver>>
      resolvers_;
  SimulationMemo simulations_;
  size_t context_lowered_ = 0;
};

} // namespace devlint
