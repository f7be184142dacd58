// The checkout a path lies in, and whether a path stays inside it: a repository is untrusted
// input, and what it names may be a symlink to a file of the user's (reading such files:
// file_input.h).
#pragma once

#include <filesystem>
#include <string>

namespace devlint {

// The checkout `path` lies in: the nearest directory at or above it (symlinks resolved) that holds
// `.git`, `.hg` or `.svn`. Empty when there is none.
std::filesystem::path checkout_root_of(const std::filesystem::path &path);

// `path` with symlinks resolved as far as it exists (std::filesystem::weakly_canonical), made
// absolute first; `path` made absolute and normalized when that fails.
std::filesystem::path resolved_path(const std::filesystem::path &path);

// Whether `path` is `root` or lies below it; both resolved (resolved_path) by the caller.
bool path_within(const std::filesystem::path &path, const std::filesystem::path &root);

} // namespace devlint
