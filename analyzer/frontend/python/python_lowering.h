// Inside the Python frontend: lowering a tree tree-sitter has already parsed, shared by the
// one-shot parse (python_frontend.cpp), the editor's incremental one (incremental_python.cpp) and
// the syntax-error finder (python_syntax_errors.cpp).
// Nothing outside frontend/python includes this header.
#pragma once

#include <memory>
#include <string>
#include <tree_sitter/api.h>

#include "model/syntax.h"

extern "C" const TSLanguage *tree_sitter_python(void);

namespace devlint {

// Lowers `tree` (parsed from `source`'s text; null: nothing parsed) into a SyntaxFile pointing
// into `source`, syntax errors included.
std::unique_ptr<SyntaxFile> lower_parsed_python(const SourceFile &source, const TSTree *tree);

// Where `n` lies in the file: byte offsets, 1-based lines and columns.
SourceRange node_range(TSNode n);

// The text tree-sitter is given for `text`: itself, or a copy in `storage` with each lone CR
// turned into LF (same length, so every offset stays that of the file).
const std::string *python_parse_text(const std::string &text, std::string &storage);

} // namespace devlint
