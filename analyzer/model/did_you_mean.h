// "Did you mean": the known name closest to a mistyped one, for error messages (subcommands,
// options, output formats, rule codes, configuration keys).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace devlint {

// Levenshtein distance between `a` and `b`; with `ignore_case`, letters differing only in case
// count as the same.
size_t edit_distance(std::string_view a, std::string_view b, bool ignore_case);

// The candidate closest to `word` by edit distance (ignoring case), when it is close enough to be
// a typo of it (at most one edit per three characters, at least one); "" when none is.
std::string closest_match(std::string_view word, const std::vector<std::string> &candidates);

// "; did you mean `X`?" for closest_match's answer, or "" without one.
std::string did_you_mean(std::string_view word, const std::vector<std::string> &candidates);

} // namespace devlint
