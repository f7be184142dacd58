#include "driver/gitignore.h"

#include <fnmatch.h>

#include "driver/path_patterns.h"
#include "driver/source_reading.h"
#include "model/paths.h"

namespace devlint {
namespace fs = std::filesystem;

Gitignore parse_gitignore(std::string_view text, const fs::path &directory) {
  Gitignore file;
  file.directory = directory;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    std::string line(text.substr(start, end == std::string_view::npos ? end : end - start));
    start = end == std::string_view::npos ? text.size() : end + 1;
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    // Trailing blanks do not count unless escaped.
    while (!line.empty() && line.back() == ' ' &&
           !(line.size() > 1 && line[line.size() - 2] == '\\'))
      line.pop_back();
    if (line.empty() || line[0] == '#')
      continue;
    GitignoreRule rule;
    if (line[0] == '!') {
      rule.negated = true;
      line.erase(0, 1);
    } else if (line.rfind("\\!", 0) == 0 || line.rfind("\\#", 0) == 0) {
      line.erase(0, 1);
    }
    if (!line.empty() && line.back() == '/') {
      rule.directory_only = true;
      line.pop_back();
    }
    rule.anchored = line.find('/') != std::string::npos;
    if (!line.empty() && line[0] == '/')
      line.erase(0, 1);
    if (line.empty())
      continue;
    rule.pattern = std::move(line);
    file.rules.push_back(std::move(rule));
  }
  return file;
}

GitignoreChain with_gitignore_of(const GitignoreChain &chain, const fs::path &directory,
                                 std::vector<Diagnostic> &diagnostics) {
  fs::path candidate = directory / ".gitignore";
  std::error_code ec;
  fs::file_status status = fs::symlink_status(candidate, ec);
  if (ec || !fs::exists(status))
    return chain;
  Diagnostic problem;
  problem.severity = Severity::Warning;
  problem.path = display_path(candidate);
  if (!fs::is_regular_file(status)) {
    problem.message = "not read: not a regular file (a .gitignore is read only as a plain file)";
    diagnostics.push_back(problem);
    return chain;
  }
  Diagnostic read_problem;
  std::unique_ptr<SourceFile> file =
      read_source_file(candidate.string(), kMaxGitignoreBytes, read_problem);
  if (!file) {
    problem.message = "not read, so what it ignores is checked: " + read_problem.message;
    diagnostics.push_back(problem);
    return chain;
  }
  GitignoreChain longer = chain;
  longer.push_back(std::make_shared<const Gitignore>(
      parse_gitignore(file->text, absolute_path(directory).lexically_normal())));
  return longer;
}

GitignoreChain enclosing_gitignores(const fs::path &directory,
                                    std::vector<Diagnostic> &diagnostics) {
  fs::path here = absolute_path(directory).lexically_normal();
  std::vector<fs::path> above;
  bool in_repository = false;
  for (fs::path p = here.parent_path(); !p.empty(); p = p.parent_path()) {
    above.push_back(p);
    std::error_code ec;
    if (fs::exists(p / ".git", ec)) {
      in_repository = true;
      break;
    }
    if (p == p.parent_path())
      break;
  }
  // `directory` itself may be the repository's root: then nothing above applies.
  std::error_code ec;
  if (!in_repository || fs::exists(here / ".git", ec))
    return {};
  GitignoreChain chain;
  for (auto it = above.rbegin(); it != above.rend(); ++it)
    chain = with_gitignore_of(chain, *it, diagnostics);
  return chain;
}

namespace {

bool rule_matches(const GitignoreRule &rule, const std::string &relative, const std::string &name,
                  bool is_directory) {
  if (rule.directory_only && !is_directory)
    return false;
  if (!rule.anchored)
    return fnmatch(rule.pattern.c_str(), name.c_str(), 0) == 0;
  return path_glob_matches(rule.pattern, relative);
}

} // namespace

bool gitignored(const GitignoreChain &chain, const fs::path &path, bool is_directory) {
  bool ignored = false;
  std::string name = path.filename().string();
  for (const auto &file : chain) {
    std::string relative = path.lexically_relative(file->directory).generic_string();
    if (relative.empty() || relative == "." || relative.rfind("..", 0) == 0)
      continue;
    for (const GitignoreRule &rule : file->rules)
      if (rule_matches(rule, relative, name, is_directory))
        ignored = !rule.negated;
  }
  return ignored;
}

} // namespace devlint
