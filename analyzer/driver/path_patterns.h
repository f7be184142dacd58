// Glob patterns for exclude/include/per-file-ignores, as in Ruff: a pattern without `/` matches a
// file or directory name anywhere; one with `/` matches the path relative to the directory of the
// configuration that wrote it. `*` and `?` stay within a name component, `**` crosses them.
#pragma once

#include <string>
#include <vector>

namespace devlint {

bool glob_matches(const std::string &pattern, const std::string &path,
                  const std::string &base_directory);
// `pattern` against a path relative to where the pattern was written (`/`-separated): `*` and
// `?` stay within a name, `**/` may match no directory at all.
bool path_glob_matches(const std::string &pattern, const std::string &relative_path);

bool any_glob_matches(const std::vector<std::string> &patterns, const std::string &path,
                      const std::string &base_directory);

} // namespace devlint
