#include "model/file_access.h"

#include <algorithm>

#include "model/paths.h"

namespace devlint {
namespace fs = std::filesystem;

fs::path resolved_path(const fs::path &path) {
  std::error_code ec;
  fs::path absolute = absolute_path(path);
  fs::path resolved = fs::weakly_canonical(absolute, ec);
  return ec ? absolute.lexically_normal() : resolved;
}

fs::path checkout_root_of(const fs::path &path) {
  fs::path at = resolved_path(path);
  std::error_code ec;
  if (!fs::is_directory(at, ec))
    at = at.parent_path();
  for (;; at = at.parent_path()) {
    for (const char *marker : {".git", ".hg", ".svn"})
      if (fs::exists(at / marker, ec))
        return at;
    if (at.empty() || at == at.parent_path())
      return {};
  }
}

bool path_within(const fs::path &path, const fs::path &root) {
  if (root.empty())
    return false;
  auto p = path.begin(), r = root.begin();
  for (; r != root.end(); ++r, ++p) {
    if (r->empty() && std::next(r) == root.end())
      break; // a root written with a trailing separator
    if (p == path.end() || *p != *r)
      return false;
  }
  return true;
}

} // namespace devlint
