// The active Python environment's import paths (sys.path with its site-packages), learned from
// an interpreter without running anything the checked repository supplies: the interpreter is
// found on absolute PATH entries outside the checkout, started isolated (`-I -S`, no PYTHON*
// variables, from `/`), and the site-packages' `.pth` files are read as data by devlint.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace devlint {

// The import paths of the active Python environment, asked from `python3` (or $DEVLINT_PYTHON)
// once, with a timeout. Only existing directories are kept. Empty when no interpreter may be
// run, or it fails or is too slow: the search then goes on without it.
std::vector<std::string> python_environment_paths(int timeout_ms = 5000);
// The same, asked once a process (the first caller waits; the others share the answer).
const std::vector<std::string> &python_environment_paths_once();

// The directories a `.pth` file's `text` adds, as Python's site module reads it, but as data:
// path lines joined to `site_directory`; comments, blank lines and `import` lines (code Python
// would run) are skipped. Existence is not checked here.
std::vector<std::string> pth_file_directories(const std::string &site_directory,
                                              std::string_view text);

// Whether `path` is `root` or below it (both absolute and canonical).
bool path_is_within(const std::string &path, const std::string &root);

} // namespace devlint
