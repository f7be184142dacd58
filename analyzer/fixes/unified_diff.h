// Unified diffs of fixed files for `--diff`, in the form `git apply` and `patch -p1` accept.
#pragma once

#include <string>
#include <string_view>

namespace devlint {

// The diff from `before` to `after` with `context` lines around each change, under the headers
// `--- a/<path>` and `+++ b/<path>` (an absolute path without the prefixes). Lines keep their own
// endings (CRLF stays CRLF), and a last line without a newline gets the usual `\ No newline at end
// of file` marker. Empty when the texts are equal.
std::string unified_diff(std::string_view before, std::string_view after, const std::string &path,
                         int context = 3);

} // namespace devlint
