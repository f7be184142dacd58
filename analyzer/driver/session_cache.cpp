#include "driver/session_cache.h"

#include "frontend/python/python_frontend.h"

namespace devlint {

SessionCache::SessionCache() = default;
SessionCache::~SessionCache() = default;

std::unique_ptr<SyntaxFile> SessionCache::lower_reported(const SourceFile &source) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto &parser = documents_[source.path];
  if (!parser) {
    if (documents_.size() > kMaxDocuments) { // bounded: start over rather than grow
      documents_.clear();
      return lower_python(source);
    }
    parser = std::make_unique<IncrementalPythonParser>();
  }
  return parser->lower(source); // one check at a time per document: the lock stays held
}

const SessionCache::ContextFile &SessionCache::lower_context(std::unique_ptr<SourceFile> source) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = context_.find(source->path);
  if (found != context_.end() && found->second.source->text == source->text)
    return found->second;
  if (found == context_.end() && context_.size() >= kMaxContextFiles)
    context_.clear();
  ContextFile &entry = context_[source->path];
  entry.source = std::move(source);
  entry.syntax = lower_python(*entry.source);
  ++context_lowered_;
  return entry;
}

SearchPathResolver *SessionCache::resolver(const std::vector<std::string> &search_paths,
                                           bool python_environment) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto &slot = resolvers_[{search_paths, python_environment}];
  if (!slot)
    slot = std::make_unique<SearchPathResolver>(search_paths, python_environment);
  return slot.get();
}

void SessionCache::forget_document(const std::string &path) {
  std::lock_guard<std::mutex> lock(mutex_);
  documents_.erase(path);
}

void SessionCache::forget_outside_files() {
  std::lock_guard<std::mutex> lock(mutex_);
  resolvers_.clear();
}

} // namespace devlint
