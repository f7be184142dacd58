// What kind of token each byte of a Python file belongs to: code, comment or string. The fix loop
// compares this before and after a fix (driver/fix_safety.h): a fix that turns comment or string
// text into code, or code into a comment, changes meaning even when the result still parses.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "model/python_fragment.h"

namespace devlint {

struct PythonTokens {
  // One entry per byte. Interpolations in f-strings are code; whitespace takes the class of what
  // it sits in (code between tokens, comment inside a comment).
  std::vector<ByteClass> classes;
  size_t syntax_errors = 0; // error and missing nodes in the parse tree
};

PythonTokens classify_python_bytes(std::string_view text);

} // namespace devlint
