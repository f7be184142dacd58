#include "model/private_files.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

#include "model/text.h"

namespace devlint {
namespace fs = std::filesystem;

namespace {

std::string quoted(const std::string &path) { return "`" + printable(path) + "`"; }

std::string system_error(const std::string &what, const std::string &path) {
  return what + " " + quoted(path) + ": " + std::strerror(errno);
}

// Why `info` (of `path`) may not hold private files, or "".
std::string unfit_directory(const std::string &path, const struct stat &info) {
  if (!S_ISDIR(info.st_mode))
    return quoted(path) + " is not a directory";
  if (info.st_uid != geteuid())
    return quoted(path) + " belongs to another user (uid " + std::to_string(info.st_uid) + ")";
  if (info.st_mode & (S_IWGRP | S_IWOTH))
    return quoted(path) + " may be written by other users (`chmod go-w` it)";
  return "";
}

// A name no one can guess in advance: the process, a counter and 64 random bits.
std::string temporary_name(const std::string &path) {
  static std::atomic<unsigned> counter{0};
  thread_local std::mt19937_64 random(std::random_device{}() ^
                                      (uint64_t(getpid()) << 32 ^ counter.fetch_add(1)));
  static const char digits[] = "0123456789abcdef";
  uint64_t bits = random();
  std::string suffix(16, '0');
  for (int i = 0; i < 16; ++i)
    suffix[i] = digits[(bits >> (4 * i)) & 0xF];
  return path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter.fetch_add(1)) +
         "." + suffix;
}

// A new file at a fresh temporary name beside `path`; -1 (errno set) when none could be made.
int open_temporary(const std::string &path, std::string &name) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    name = temporary_name(path);
    int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0 || errno != EEXIST)
      return fd;
  }
  return -1;
}

} // namespace

std::string make_private_directory(const std::string &directory, LinkPolicy links) {
  if (directory.empty())
    return "no cache directory";
  fs::path target = fs::path(directory).lexically_normal();
  if (!target.has_filename() && target != target.root_path())
    target = target.parent_path(); // "dir/" names "dir" (lstat would follow a link at "dir/")
  // The missing components, outermost first, each made 0700.
  fs::path partial;
  for (const fs::path &part : target) {
    partial /= part;
    struct stat info;
    if (lstat(partial.c_str(), &info) == 0)
      continue;
    if (errno != ENOENT)
      return system_error("cannot inspect", partial.string());
    if (mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST)
      return system_error("cannot create", partial.string());
  }
  struct stat info;
  if (lstat(target.c_str(), &info) != 0)
    return system_error("cannot inspect", target.string());
  if (S_ISLNK(info.st_mode)) {
    // Below a cache root every folder is devlint's own: a link there was planted (a repository's
    // checkout makes its links as this user).
    if (links == LinkPolicy::Refuse)
      return quoted(target.string()) + " is a symbolic link";
    if (info.st_uid != geteuid())
      return quoted(target.string()) + " is a symbolic link of another user (uid " +
             std::to_string(info.st_uid) + ")";
    if (stat(target.c_str(), &info) != 0)
      return system_error("cannot follow", target.string());
  }
  return unfit_directory(target.string(), info);
}

std::string write_file_replacing(const std::string &path, std::string_view contents) {
  std::string temporary;
  int fd = open_temporary(path, temporary);
  if (fd < 0)
    return system_error("cannot create a file beside", path);
  const char *data = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t written = ::write(fd, data, left);
    if (written < 0 && errno == EINTR)
      continue;
    if (written <= 0) {
      std::string error = system_error("cannot write", temporary);
      ::close(fd);
      ::unlink(temporary.c_str());
      return error;
    }
    data += written;
    left -= static_cast<size_t>(written);
  }
  if (::close(fd) != 0) {
    std::string error = system_error("cannot write", temporary);
    ::unlink(temporary.c_str());
    return error;
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    std::string error = system_error("cannot replace", path);
    ::unlink(temporary.c_str());
    return error;
  }
  return "";
}

std::string make_temporary_file(const std::string &path) {
  std::string name;
  int fd = open_temporary(path, name);
  if (fd < 0)
    return "";
  ::close(fd);
  return name;
}

std::optional<std::string> read_plain_file(const std::string &path, uint64_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return std::nullopt;
  struct stat info;
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) ||
      static_cast<uint64_t>(info.st_size) > max_bytes) {
    ::close(fd);
    return std::nullopt;
  }
  std::string text;
  char buffer[1 << 16];
  for (;;) {
    ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0 || text.size() + static_cast<size_t>(got) > max_bytes) { // it grew meanwhile
      ::close(fd);
      return std::nullopt;
    }
    if (got == 0)
      break;
    text.append(buffer, static_cast<size_t>(got));
  }
  ::close(fd);
  return text;
}

bool is_own_plain_file(const std::string &path) {
  struct stat info;
  return lstat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && info.st_uid == geteuid();
}

} // namespace devlint
