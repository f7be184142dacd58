#include "driver/path_patterns.h"

#include <filesystem>
#include <fnmatch.h>

#include "model/paths.h"

namespace devlint {
namespace fs = std::filesystem;

namespace {

// `**/` may match no directory at all (`**/modeling_*.py` matches `modeling_x.py`).
bool path_glob(const std::string &pattern, const std::string &path) {
  size_t globstar = pattern.find("**");
  if (globstar == std::string::npos)
    return fnmatch(pattern.c_str(), path.c_str(), FNM_PATHNAME) == 0;
  // Without FNM_PATHNAME every `*` crosses `/`: close enough for `**`, and rare otherwise.
  if (fnmatch(pattern.c_str(), path.c_str(), 0) == 0)
    return true;
  size_t slash = pattern.find("**/");
  return slash != std::string::npos &&
         path_glob(pattern.substr(0, slash) + pattern.substr(slash + 3), path);
}

} // namespace

bool path_glob_matches(const std::string &pattern, const std::string &relative_path) {
  return path_glob(pattern, relative_path);
}

bool glob_matches(const std::string &pattern, const std::string &path,
                  const std::string &base_directory) {
  if (pattern.empty())
    return false;
  fs::path absolute = absolute_path(path).lexically_normal();
  fs::path base = absolute_path(base_directory.empty() ? "." : base_directory).lexically_normal();
  if (pattern.find('/') == std::string::npos) {
    // A name matches below the configuration's directory (or the current one), never above it:
    // `build` must not exclude a whole project cloned into ~/build/.
    fs::path below = absolute.lexically_relative(base);
    if (below.empty() || below.begin()->string() == "..")
      below = absolute.filename();
    for (const fs::path &component : below)
      if (fnmatch(pattern.c_str(), component.c_str(), 0) == 0)
        return true;
    return false;
  }
  std::string relative = absolute.lexically_relative(base).generic_string();
  std::string p = pattern.rfind("./", 0) == 0 ? pattern.substr(2) : pattern;
  if (!p.empty() && p.back() == '/')
    p.pop_back();
  if (relative.empty() || relative.rfind("..", 0) == 0)
    return false;
  // A pattern naming a directory covers everything below it.
  std::string prefix;
  for (const auto &component : fs::path(relative)) {
    prefix += (prefix.empty() ? "" : "/") + component.string();
    if (path_glob(p, prefix))
      return true;
  }
  return false;
}

bool any_glob_matches(const std::vector<std::string> &patterns, const std::string &path,
                      const std::string &base_directory) {
  for (const std::string &p : patterns)
    if (glob_matches(p, path, base_directory))
      return true;
  return false;
}

} // namespace devlint
