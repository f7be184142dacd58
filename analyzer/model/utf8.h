// Strict UTF-8 (RFC 3629): what the JSON and XML outputs may carry, and what a source file must
// be to be analyzed. Overlong forms, surrogates (U+D800..U+DFFF) and code points past U+10FFFF
// are invalid.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace devlint {

// Length of the valid sequence starting at `text[at]`, or 0 when none starts there.
size_t utf8_sequence_length(std::string_view text, size_t at);

bool valid_utf8(std::string_view text);

// Offset of the first byte that is not part of a valid sequence (text.size() when none).
size_t first_invalid_utf8(std::string_view text);

// `text` with each invalid byte replaced by U+FFFD (as Python's errors="replace" does per byte).
std::string to_valid_utf8(std::string_view text);

} // namespace devlint
