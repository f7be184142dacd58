// The syntax errors of a parsed Python file, as Python 3 sees them: tree-sitter's ERROR and
// MISSING nodes, and the Python 2 forms tree-sitter-python still accepts (print and exec
// statements, `<>`, `except X, e:`, backticks). Each becomes a SyntaxErrorNote with a short
// message; the driver turns them into invalid-syntax diagnostics.
#pragma once

#include <string_view>
#include <tree_sitter/api.h>
#include <vector>

#include "frontend/python/python_frontend.h"

namespace devlint {

// At most this many errors are kept per file (a binary-like file has thousands); the last one
// kept says how many more there were.
constexpr size_t kMaxSyntaxErrorsPerFile = 20;

std::vector<SyntaxErrorNote> find_python_syntax_errors(TSNode root, std::string_view text);

// The same by visiting every node: what find_python_syntax_errors does for a tree with ERROR or
// MISSING nodes, and the reference its faster path is tested against.
std::vector<SyntaxErrorNote> find_python_syntax_errors_by_walk(TSNode root, std::string_view text);

} // namespace devlint
