#include "driver/source_reading.h"

#include <filesystem>
#include <fstream>

namespace devlint {
namespace fs = std::filesystem;

namespace {

bool valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t extra = c < 0x80           ? 0
                   : (c >> 5) == 0x6  ? 1
                   : (c >> 4) == 0xE  ? 2
                   : (c >> 3) == 0x1E ? 3
                                      : 9;
    if (extra == 9 || i + extra >= s.size() + (extra ? 0 : 1))
      return false;
    for (size_t k = 1; k <= extra; ++k)
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2)
        return false;
    i += extra + 1;
  }
  return true;
}

std::string display_path(const fs::path &p) {
  std::error_code ec;
  fs::path rel = fs::relative(p, fs::current_path(ec), ec);
  std::string s =
      (!ec && !rel.empty() && rel.string().rfind("..", 0) != 0) ? rel.string() : p.string();
  return s;
}

} // namespace

std::unique_ptr<SourceFile> source_from_text(const std::string &path, const std::string &text) {
  auto file = std::make_unique<SourceFile>();
  file->path = path;
  file->display_path = display_path(path);
  file->text = text;
  file->index_lines();
  return file;
}

std::unique_ptr<SourceFile> read_source_file(const std::string &path, uint64_t max_bytes,
                                             Diagnostic &diagnostic) {
  diagnostic.path = path;
  std::error_code ec;
  auto size = fs::file_size(path, ec);
  if (ec) {
    diagnostic.severity = Severity::Error;
    diagnostic.message = "cannot read file: " + ec.message();
    return nullptr;
  }
  if (size > max_bytes) {
    diagnostic.severity = Severity::Warning;
    diagnostic.message = "skipped: file is " + std::to_string(size >> 20) +
                         " MiB, over the limit of " + std::to_string(max_bytes >> 20) + " MiB";
    return nullptr;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    diagnostic.severity = Severity::Error;
    diagnostic.message = "cannot open file (permission denied or not a regular file)";
    return nullptr;
  }
  auto file = std::make_unique<SourceFile>();
  file->path = path;
  file->display_path = display_path(path);
  diagnostic.path = file->display_path;
  file->text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (in.bad()) {
    diagnostic.severity = Severity::Error;
    diagnostic.message = "read error";
    return nullptr;
  }
  if (file->text.find('\0') != std::string::npos) {
    diagnostic.severity = Severity::Warning;
    diagnostic.message = "skipped: binary file (contains NUL bytes)";
    return nullptr;
  }
  if (!valid_utf8(file->text)) {
    diagnostic.severity = Severity::Warning;
    diagnostic.message = "skipped: not valid UTF-8";
    return nullptr;
  }
  file->index_lines();
  return file;
}

} // namespace devlint
