// Python frontend: parses a file with tree-sitter and lowers it into the program model
// (model/syntax.h). Nothing after this stage sees tree-sitter.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "model/syntax.h"

namespace devlint {

// Lowers `source` (which must outlive the result). Syntax errors, with what is wrong (Python 2
// forms that tree-sitter-python accepts, such as a print statement, among them), are recorded in
// SyntaxFile::syntax_errors; the rest of the file is still lowered where the tree allows.
std::unique_ptr<SyntaxFile> lower_python(const SourceFile &source);

// Statements and expressions nested deeper than this are not lowered (the native stack is
// bounded); the first such place is recorded in SyntaxFile::too_deep.
constexpr int kMaxSyntaxDepth = 400;

} // namespace devlint
