// Package grouping: a package is the model files of one directory plus the sibling modules they
// import relatively (GLM-4V's modeling_chatglm.py imports visual.py), which give definitions
// without being reported. The imports are the ones the frontend recorded.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/syntax.h"

namespace devlint {

// The files `file` imports relatively, in import order: `from .visual import X` and `from . import
// visual` both name `<dir>/visual.py`; `from ..layers.blocks import X` names
// `<dir>/../layers/blocks.py` when both directories are packages (Python refuses to leave the
// top-level package); a package named by the module part gives its `__init__.py`. Whether the
// file exists is not checked.
// Parent-package imports are followed only to files inside `root` (the directory the user asked
// to check): a checked repository never makes devlint read beyond it. An absolute import whose
// package part names the file's own directory (`from model.modelclass import Model` in
// `model/harness.py`) names the module beside it (`model/modelclass.py`), as Python finds it from
// the directory above.
std::vector<std::string> relative_import_paths(const SyntaxFile &file, const std::string &root);

} // namespace devlint
