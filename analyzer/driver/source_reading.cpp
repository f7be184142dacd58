#include "driver/source_reading.h"

#include "frontend/cpp/cpp_frontend.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

#include "frontend/cpp/cpp_frontend.h"
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
  auto it = std::upper_bound(file.line_starts.begin(), file.line_starts.end(), offset);
  SourceRange r;
  r.begin = r.end = offset;
  r.line = r.end_line = static_cast<uint32_t>(it - file.line_starts.begin());
  r.column = r.end_column = offset - file.line_starts[r.line - 1] + 1;
  return r;
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
  // O_NONBLOCK: opening a FIFO named by mistake must not wait for a writer. The checks below
  // look at what was opened, not at the name, so a file swapped meanwhile cannot slip through.
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return not_checked(std::string("cannot open: ") + std::strerror(errno));
  struct FdCloser {
    int fd;
    ~FdCloser() { close(fd); }
  } closer{fd};
  struct stat info {};
  if (fstat(fd, &info) != 0)
    return not_checked(std::string("cannot examine: ") + std::strerror(errno));
  if (S_ISDIR(info.st_mode))
    return not_checked("a directory");
  if (!S_ISREG(info.st_mode))
    return not_checked(S_ISFIFO(info.st_mode)   ? "a FIFO, not a regular file"
                       : S_ISCHR(info.st_mode)  ? "a character device, not a regular file"
                       : S_ISBLK(info.st_mode)  ? "a block device, not a regular file"
                       : S_ISSOCK(info.st_mode) ? "a socket, not a regular file"
                                                : "not a regular file");
  auto too_large = [&](uint64_t size) {
    return not_checked("file is " + std::to_string(size) + " bytes, over the limit of " +
                       std::to_string(max_bytes) + " bytes (" + std::to_string(max_bytes >> 20) +
                       " MiB)");
  };
  if (static_cast<uint64_t>(info.st_size) > max_bytes)
    return too_large(static_cast<uint64_t>(info.st_size));
  int flags = fcntl(fd, F_GETFL);
  if (flags >= 0)
    fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);

  // Read at most one byte past the limit: a file that grows while it is read stays bounded.
  std::string text;
  text.reserve(static_cast<size_t>(info.st_size));
  char buffer[1 << 16];
  while (text.size() <= max_bytes) {
    size_t want = std::min<uint64_t>(sizeof buffer, max_bytes + 1 - text.size());
    ssize_t got = read(fd, buffer, want);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return not_checked(std::string("read error: ") + std::strerror(errno));
    if (got == 0)
      break;
    text.append(buffer, static_cast<size_t>(got));
  }
  if (text.size() > max_bytes)
    return too_large(text.size());
  return source_from_bytes(path, std::move(text), diagnostic);
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
  if (size_t bad = first_invalid_utf8(text); bad != text.size()) {
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
