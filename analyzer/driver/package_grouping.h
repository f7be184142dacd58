// Package grouping: a package is the model files of one directory plus the sibling modules they
// import relatively (GLM-4V's modeling_chatglm.py imports visual.py), which give definitions
// without being reported. The imports are the ones the frontend recorded.
#pragma once

#include <string>
#include <vector>

#include "model/syntax.h"

namespace devlint {

// The files beside `file` that it imports relatively, in import order: `from .visual import X`
// and `from . import visual` both name `<dir>/visual.py`. Whether they exist is not checked.
std::vector<std::string> relative_import_paths(const SyntaxFile &file);

} // namespace devlint
