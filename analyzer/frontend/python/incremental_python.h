// The Python frontend for a text that changes a little at a time (an editor's buffer): each new
// text is parsed with tree-sitter's incremental parsing, which reuses the unchanged subtrees of
// the previous tree, and then lowered as lower_python lowers it (same result, test-checked).
#pragma once

#include <memory>
#include <string>

#include "model/syntax.h"

struct TSParser;
struct TSTree;

namespace devlint {

class IncrementalPythonParser {
public:
  IncrementalPythonParser();
  ~IncrementalPythonParser();
  IncrementalPythonParser(const IncrementalPythonParser &) = delete;
  IncrementalPythonParser &operator=(const IncrementalPythonParser &) = delete;

  // Lowers `source` (which must outlive the result). The edit from the previous text is found as
  // the span between their common prefix and suffix.
  std::unique_ptr<SyntaxFile> lower(const SourceFile &source);

private:
  TSParser *parser_;
  TSTree *tree_ = nullptr; // of text_; null before the first text, or after one with a BOM
  std::string text_;
};

} // namespace devlint
