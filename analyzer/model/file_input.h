// Reading a file devlint finds beside the code (config.json, configuration_*.py, a device map,
// pyproject.toml, ...) or is given on stdin: the repository is untrusted input, so only regular
// files are read, never more than a size cap, and nothing ever blocks (a FIFO) or reads without
// end (a symlink to /dev/zero). JSON is parsed with a depth limit.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace devlint {

// The largest file devlint reads (a source file, a configuration, a device map, stdin).
constexpr uint64_t kMaxInputBytes = 32ull << 20;

// JSON nested deeper is refused: configurations and device maps are a few levels deep, and the
// readers of a parsed document recurse.
constexpr int kMaxJsonDepth = 100;

// toml++ recurses once per key of a dotted name (`[a.b.c...]`) and overflows the stack on a few
// ten thousand; no configuration needs more than a handful.
constexpr size_t kMaxTomlDottedKeyParts = 128;

// Reads `path` when it is a regular file of at most `max_bytes` bytes (a symlink is followed,
// but what it names must be a regular file). Otherwise returns nullopt and sets `why` to the
// reason ("a FIFO, not a regular file"; "file is N bytes, over the limit of M bytes (32 MiB)").
std::optional<std::string> read_regular_file(const std::string &path, uint64_t max_bytes,
                                             std::string &why);

// Reads `fd` (stdin) to its end, or up to `max_bytes` + 1 bytes: a text longer than
// `max_bytes` is over the cap, and the caller says so. nullopt (with `why`) on a read error.
std::optional<std::string> read_at_most(int fd, uint64_t max_bytes, std::string &why);

// Why `bytes` exceeds the cap, as read_regular_file says it.
std::string over_the_limit(uint64_t bytes, uint64_t max_bytes);

// Parses `text` as JSON nested at most `max_depth` levels. On failure returns false and sets
// `error` ("nested more than 100 levels deep", "syntax error at line 1, column 3: ..."); the
// message quotes none of the text, which may come from any file a symlink names.
bool parse_json_text(const std::string &text, nlohmann::json &out, std::string &error,
                     int max_depth = kMaxJsonDepth);

// read_regular_file, then parse_json_text; `error` names no path (the caller adds it).
bool read_json_file(const std::string &path, nlohmann::json &out, std::string &error,
                    uint64_t max_bytes = kMaxInputBytes);

// The most parts of a dotted TOML key on one line (the dots outside strings and comments that
// are not a number's decimal point), and that line in `line_out`: checked against
// kMaxTomlDottedKeyParts before toml++ parses a text.
size_t deepest_dotted_key(const std::string &text, uint32_t &line_out);

} // namespace devlint
