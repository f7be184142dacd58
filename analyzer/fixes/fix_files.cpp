#include "fixes/fix_files.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace devlint {
namespace fs = std::filesystem;
namespace {

std::string quoted(const std::string &path) { return "`" + path + "`"; }

std::string last_error() { return std::strerror(errno); }

bool read_all(const std::string &path, std::string &out) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  out.clear();
  char buffer[1 << 16];
  ssize_t got;
  while ((got = read(fd, buffer, sizeof buffer)) != 0) {
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0) {
      close(fd);
      return false;
    }
    out.append(buffer, static_cast<size_t>(got));
  }
  close(fd);
  return true;
}

bool write_all(int fd, const std::string &text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t put = write(fd, text.data() + done, text.size() - done);
    if (put < 0 && errno == EINTR)
      continue;
    if (put <= 0)
      return false;
    done += static_cast<size_t>(put);
  }
  return true;
}

bool same_file_state(const struct stat &a, const struct stat &b) {
  return a.st_ino == b.st_ino && a.st_dev == b.st_dev && a.st_size == b.st_size &&
         a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec;
}

WriteResult failure(WriteStatus status, std::string message) {
  WriteResult result;
  result.status = status;
  result.message = std::move(message);
  return result;
}

} // namespace

WriteResult write_fixed_file(const std::string &path, const std::string &expected,
                             const std::string &fixed) {
  std::error_code ec;
  fs::path target = path;
  bool through_symlink = fs::is_symlink(fs::symlink_status(path, ec));
  if (through_symlink) {
    // Replacing the link itself would turn it into a copy; the target is the file meant.
    target = fs::canonical(path, ec);
    if (ec)
      return failure(WriteStatus::Failed,
                     "cannot resolve the symlink " + quoted(path) + ": " + ec.message());
  }
  const std::string target_path = target.string();

  struct stat before {};
  if (stat(target_path.c_str(), &before) != 0)
    return failure(WriteStatus::Failed, "cannot examine " + quoted(path) + ": " + last_error());
  if (!S_ISREG(before.st_mode))
    return failure(WriteStatus::Failed, quoted(path) + " is not a regular file; not written");
  // Renaming over a file needs only a writable directory, so check the file's own permission
  // explicitly; the mode bits also count for root, who passes every access() check.
  if ((before.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0 || access(target_path.c_str(), W_OK))
    return failure(WriteStatus::ReadOnly,
                   quoted(path) + ": read-only; not fixed (make it writable to apply the fixes)");

  std::string current;
  if (!read_all(target_path, current))
    return failure(WriteStatus::Failed, "cannot read " + quoted(path) + ": " + last_error());
  if (current != expected) {
    if (current == fixed) {
      WriteResult already;
      already.status = WriteStatus::AlreadyFixed;
      already.written_path = target_path;
      return already;
    }
    return failure(WriteStatus::ChangedOnDisk,
                   quoted(path) + " changed on disk since devlint read it; not overwritten "
                                  "(run devlint again)");
  }

  fs::path directory = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  std::string pattern =
      (directory / ("." + target.filename().string() + ".devlint-XXXXXX")).string();
  std::vector<char> temp_name(pattern.begin(), pattern.end());
  temp_name.push_back('\0');
  int fd = mkstemp(temp_name.data());
  if (fd < 0)
    return failure(WriteStatus::Failed, "cannot create a temporary file in " +
                                            quoted(directory.string()) + ": " + last_error() +
                                            "; " + quoted(path) + " not written");
  const std::string temp_path = temp_name.data();
  auto abandon = [&](const std::string &what) {
    std::string message = what + ": " + last_error() + "; " + quoted(path) + " not written";
    close(fd);
    unlink(temp_path.c_str());
    return failure(WriteStatus::Failed, message);
  };
  if (!write_all(fd, fixed))
    return abandon("cannot write " + quoted(temp_path));
  // Owner first: chown may clear set-id bits that chmod then restores.
  if (fchown(fd, before.st_uid, before.st_gid) != 0) {
    // Only root may give a file away; the new file then belongs to us, as with any editor.
  }
  if (fchmod(fd, before.st_mode & 07777) != 0)
    return abandon("cannot set the permissions of " + quoted(temp_path));
  if (fsync(fd) != 0)
    return abandon("cannot flush " + quoted(temp_path));
  if (close(fd) != 0) {
    std::string message = "cannot close " + quoted(temp_path) + ": " + last_error();
    unlink(temp_path.c_str());
    return failure(WriteStatus::Failed, message + "; " + quoted(path) + " not written");
  }

  // Last look before replacing: an edit made while the temporary file was written wins.
  struct stat now {};
  if (stat(target_path.c_str(), &now) != 0 || !same_file_state(before, now)) {
    unlink(temp_path.c_str());
    return failure(WriteStatus::ChangedOnDisk,
                   quoted(path) + " changed on disk while devlint was writing it; not "
                                  "overwritten (run devlint again)");
  }
  if (rename(temp_path.c_str(), target_path.c_str()) != 0) {
    std::string message = "cannot replace " + quoted(path) + ": " + last_error();
    unlink(temp_path.c_str());
    return failure(WriteStatus::Failed, message);
  }
  // Make the rename itself durable.
  int directory_fd = open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (directory_fd >= 0) {
    fsync(directory_fd);
    close(directory_fd);
  }
  WriteResult written;
  written.status = WriteStatus::Written;
  written.written_path = target_path;
  if (through_symlink)
    written.message = quoted(path) + " is a symlink; fixed its target " + quoted(target_path);
  return written;
}

} // namespace devlint
