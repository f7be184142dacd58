#include "driver/source_reading.h"

#include <algorithm>
#include <filesystem>

#include "frontend/cpp/cpp_frontend.h"
#include "model/file_input.h"
#include "model/paths.h"
#include "model/utf8.h"

namespace devlint {
namespace fs = std::filesystem;

std::string display_path(const fs::path &p) {
  fs::path here = current_directory();
  if (here.empty())
    return p.string();
  std::error_code ec;
  fs::path rel = fs::relative(p, here, ec);
  std::string s =
      (!ec && !rel.empty() && rel.string().rfind("..", 0) != 0) ? rel.string() : p.string();
  return s;
}

namespace {

SourceRange position_of(const SourceFile &file, uint32_t offset) {
  return file.range_of(offset, offset);
}

} // namespace

std::unique_ptr<SourceFile> source_from_text(const std::string &path, const std::string &text) {
  auto file = std::make_unique<SourceFile>();
  file->language =
      is_cpp_source_path(path) || is_cpp_header_path(path) ? Language::Cpp : Language::Python;
  file->path = path;
  file->display_path = display_path(path);
  file->text = text;
  file->index_lines();
  return file;
}

std::unique_ptr<SourceFile> read_source_file(const std::string &path, uint64_t max_bytes,
                                             Diagnostic &diagnostic) {
  diagnostic.path = display_path(path);
  // Every failure below means the file was not checked; the policy (README, "Files that could
  // not be checked") makes each an error with exit code 2.
  diagnostic.severity = Severity::Error;
  auto not_checked = [&](const std::string &why) {
    diagnostic.message = "not checked: " + why;
    return nullptr;
  };
  std::string why;
  std::optional<std::string> text = read_regular_file(path, max_bytes, why);
  if (!text)
    return not_checked(why);
  return source_from_bytes(path, std::move(*text), diagnostic);
}

std::unique_ptr<SourceFile> source_from_bytes(const std::string &path, std::string bytes,
                                              Diagnostic &diagnostic) {
  diagnostic.path = display_path(path);
  diagnostic.severity = Severity::Error;
  auto not_checked = [&](const std::string &why) {
    diagnostic.message = "not checked: " + why;
    return nullptr;
  };
  auto file = std::make_unique<SourceFile>();
  file->language =
      is_cpp_source_path(path) || is_cpp_header_path(path) ? Language::Cpp : Language::Python;
  file->path = path;
  file->display_path = diagnostic.path;
  std::string &text = file->text;
  text = std::move(bytes);
  if (size_t nul = text.find('\0'); nul != std::string::npos) {
    file->index_lines();
    SourceRange r = position_of(*file, static_cast<uint32_t>(nul));
    diagnostic.line = r.line;
    diagnostic.column = r.column;
    return not_checked("binary file (a NUL byte)");
  }
  // C++ is read as the compiler reads it: bytes outside UTF-8 (GBK or Latin-1 comments and
  // string literals) are accepted and kept, so a fix splices its edits into the file's own bytes.
  // Python source must be UTF-8 (PEP 3120) unless it declares another encoding, which devlint
  // does not decode.
  if (size_t bad = first_invalid_utf8(text);
      bad != text.size() && file->language != Language::Cpp) {
    file->index_lines();
    SourceRange r = position_of(*file, static_cast<uint32_t>(bad));
    diagnostic.line = r.line;
    diagnostic.column = r.column;
    return not_checked("not valid UTF-8 (devlint reads UTF-8 source, as Python does by default)");
  }
  diagnostic.severity = Severity::Warning;
  file->index_lines();
  return file;
}

} // namespace devlint
