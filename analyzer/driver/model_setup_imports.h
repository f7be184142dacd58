// The files of a package's own source tree that its modules are built from: a model file that
// imports relatively from outside its directory (`from ..embeddings import TimestepEmbedding` in
// diffusers' models/transformers/) builds classes defined there. Read as text, never imported.
#pragma once

#include <string>
#include <vector>

namespace devlint {

// The files that the Python files of `directory` import relatively from outside it, when a name
// so imported is used in an `__init__` (what building the model runs), then the same for those
// files (their `__init__`s and their classes' bases), breadth-first. Only files inside the
// top-level Python package that holds `directory` (the highest ancestor with __init__.py, beyond
// which Python refuses a relative import), no symlink out of it, at most a bounded number.
// Sorted by the order found; empty when there are none.
std::vector<std::string> relatively_imported_files(const std::string &directory);

} // namespace devlint
