// Small string helpers shared by every stage (C++17 has no string_view::starts_with).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace devlint {

inline bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

inline bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// The codes of a list as written in a suppression or on the command line: "DL001, DL002",
// "DL001 DL002" (commas and blanks separate; empty items are dropped).
std::vector<std::string> split_codes(std::string_view list);

// The dotted names a type annotation is written with, in order: `Optional[typing.List[int]]`
// gives Optional, typing.List, int; `LTX2DurationHead | None` gives LTX2DurationHead, None.
std::vector<std::string_view> annotation_names(std::string_view annotation);

// A source snippet on one line, at most 48 characters, for messages and fix titles.
std::string shorten_snippet(std::string_view text, size_t width = 48);

// `text` safe to print on a terminal or in a CI log: C0 control characters except tab, and DEL,
// become their Unicode control pictures (ESC prints as U+241B, one column wide, as Ruff shows
// them), C1 controls `\u{9b}`, and bytes that are not UTF-8 `\xff`. Text from a file, a file
// name or a cache entry can then not move the cursor, recolour or retitle anything.
std::string printable(std::string_view text);

} // namespace devlint
