// Where devlint keeps what it caches between runs, and `devlint clean`.
//
// The cache belongs to the user, as pip's, pre-commit's or ccache's do: `$XDG_CACHE_HOME/devlint`
// (`~/.cache/devlint` when unset), holding `results/<project>/<version>/` (the result cache, one
// folder per project, named after the project's absolute path) and `pch/` (the precompiled
// LibTorch header, shared by every project). Only the person running devlint chooses another
// place (`--cache-dir`, `$DEVLINT_CACHE_DIR`): no configuration file can, since a repository's
// own configuration pointing the cache into the repository would let a committed cache decide
// what devlint reports. A project is the git work tree holding the current directory, else the
// current directory itself.
#pragma once

#include <cstddef>
#include <string>

namespace devlint {

// The cache directory in force: `from_command_line` (--cache-dir), else $DEVLINT_CACHE_DIR, else
// $XDG_CACHE_HOME/devlint (when absolute, as the XDG specification asks), else
// $HOME/.cache/devlint; made absolute. Empty when there is none (no home): nothing is cached.
std::string user_cache_directory(const std::string &from_command_line);

// Where the precompiled LibTorch header is kept: $DEVLINT_PCH_DIR, else `<cache>/pch`.
std::string precompiled_header_directory(const std::string &cache_directory);

// The project the current directory belongs to: the nearest directory above it (itself
// included) holding `.git`, else the current directory; absolute.
std::string current_project_root();

// The folder of `project_root`'s entries under `cache_directory`: `results/<name>-<hash>`, the
// name being the project directory's own (for people looking) and the hash its absolute path's.
std::string project_cache_directory(const std::string &cache_directory,
                                    const std::string &project_root);

// `devlint clean`: removes the entries of `project_root` (and only those) from
// `cache_directory`: `removed` counts the entry files removed, `removed_from` names the folder.
// `error` says why nothing was removed: it could not be, or `cache_directory` exists and is no
// devlint cache (no CACHEDIR.TAG: never remove what a typo points at).
struct CleanOutcome {
  size_t removed = 0;
  std::string removed_from; // empty when the project had no entries
  std::string error;
};
CleanOutcome remove_project_entries(const std::string &cache_directory,
                                    const std::string &project_root);

} // namespace devlint
