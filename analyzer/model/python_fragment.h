// What kind of token each byte of a piece of Python text belongs to, lexed without a parse tree.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace devlint {

enum class ByteClass : uint8_t { Code, Comment, String };

// The classes of a fragment or a line of Python, without a parse tree: quoted parts (with their
// prefix) are strings, a `#` outside quotes starts a comment to the end of its line, everything
// else is code. Enough for what is lexed without a tree: a fix's replacement (the classes it is
// meant to have), a line's `# noqa` comment, the brackets of an ERROR node's text.
std::vector<ByteClass> lex_python_fragment(std::string_view text);

} // namespace devlint
