#include "fixes/line_length.h"

#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <toml++/toml.h>

#include "model/file_input.h"

namespace devlint {
namespace {

namespace fs = std::filesystem;

constexpr size_t kDefaultLineLength = 88; // Ruff's and Black's default

// The document, or nothing when it cannot be read (not a regular file, over the size cap), is
// nested too deep for toml++ or does not parse.
std::optional<toml::table> parse(const fs::path &path) {
  std::string why;
  std::optional<std::string> text = read_regular_file(path.string(), kMaxInputBytes, why);
  uint32_t deep_line = 0;
  if (!text || deepest_dotted_key(*text, deep_line) > kMaxTomlDottedKeyParts)
    return std::nullopt;
  try {
    return toml::parse(*text, path.string());
  } catch (const toml::parse_error &) {
    return std::nullopt;
  }
}

std::optional<size_t> positive(std::optional<int64_t> value) {
  if (value && *value > 0)
    return static_cast<size_t>(*value);
  return std::nullopt;
}

// `line-length` in one directory, in Ruff's order of precedence; a file that does not parse
// says nothing (devlint's own configuration loader reports broken files).
std::optional<size_t> configured_in(const fs::path &directory) {
  std::error_code ec;
  for (const char *name : {".ruff.toml", "ruff.toml"}) {
    fs::path path = directory / name;
    if (!fs::is_regular_file(path, ec))
      continue;
    std::optional<toml::table> parsed = parse(path);
    if (!parsed)
      return std::nullopt;
    return positive((*parsed)["line-length"].value<int64_t>());
  }
  fs::path pyproject = directory / "pyproject.toml";
  if (!fs::is_regular_file(pyproject, ec))
    return std::nullopt;
  std::optional<toml::table> parsed = parse(pyproject);
  if (!parsed)
    return std::nullopt;
  const toml::table &table = *parsed;
  if (auto ruff = positive(table["tool"]["ruff"]["line-length"].value<int64_t>()))
    return ruff;
  return positive(table["tool"]["black"]["line-length"].value<int64_t>());
}

std::optional<size_t> configured_limit(const std::string &file_path) {
  static std::mutex mutex;
  static std::map<std::string, std::optional<size_t>> by_directory;
  std::error_code ec;
  fs::path directory = fs::absolute(fs::path(file_path), ec).parent_path();
  if (ec)
    return std::nullopt;
  std::lock_guard<std::mutex> lock(mutex);
  std::vector<std::string> visited;
  std::optional<size_t> found;
  for (fs::path dir = directory;; dir = dir.parent_path()) {
    auto cached = by_directory.find(dir.string());
    if (cached != by_directory.end()) {
      found = cached->second;
      break;
    }
    visited.push_back(dir.string());
    if ((found = configured_in(dir)))
      break;
    if (dir == dir.parent_path())
      break;
  }
  for (const std::string &dir : visited)
    by_directory[dir] = found;
  return found;
}

} // namespace

size_t display_width(std::string_view line) {
  size_t width = 0;
  for (char c : line)
    width += (static_cast<unsigned char>(c) & 0xC0) != 0x80; // count UTF-8 lead bytes only
  return width;
}

size_t fix_line_limit(const SourceFile &file) {
  if (!file.path.empty() && file.path != "-")
    if (auto limit = configured_limit(file.path))
      return *limit;
  // Never below Ruff's default line length: a short file's longest line is no style rule.
  size_t longest = kDefaultLineLength;
  const std::vector<uint32_t> &starts = file.line_starts;
  for (size_t i = 0; i < starts.size(); ++i) {
    size_t end = i + 1 < starts.size() ? starts[i + 1] : file.text.size();
    // A line has at most as many characters as bytes: only longer ones can raise the limit.
    if (end - starts[i] <= longest)
      continue;
    std::string_view text = file.line_text(static_cast<uint32_t>(i + 1));
    if (!text.empty() && text.back() == '\r')
      text.remove_suffix(1);
    longest = std::max(longest, display_width(text));
  }
  return longest;
}

} // namespace devlint
