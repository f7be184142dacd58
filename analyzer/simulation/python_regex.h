// A small matcher for the Python regular expressions a model's source names tensors with
// (transformers 5's `_tied_weights_keys = {r"bbox_embed.(?![0])\d+": "bbox_embed.0"}`).
#pragma once

#include <optional>
#include <string_view>

namespace devlint::simulation {

// Python's `re.search(pattern, text) is not None` for literals, `.`, escapes (\d \w \s and
// escaped punctuation), classes `[...]`, groups `(...)` / `(?:...)`, lookaheads `(?=...)` /
// `(?!...)`, `|`, quantifiers `* + ? {m,n}` (greedy or lazy) and the anchors `^ $`. The work is
// bounded (a repository's pattern never runs long): nullopt when the pattern uses other syntax or
// the bound is reached.
std::optional<bool> python_regex_search(std::string_view pattern, std::string_view text);

} // namespace devlint::simulation
