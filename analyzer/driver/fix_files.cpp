#include "driver/fix_files.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "model/text.h"

namespace devlint {
namespace fs = std::filesystem;
namespace {

std::string quoted(const std::string &path) { return "`" + path + "`"; }

std::string last_error() { return std::strerror(errno); }

// Reads the whole file open at `fd` from its start (pread: the offset stays where it is).
bool read_fd(int fd, std::string &out) {
  out.clear();
  char buffer[1 << 16];
  off_t offset = 0;
  while (true) {
    ssize_t got = pread(fd, buffer, sizeof buffer, offset);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return false;
    if (got == 0)
      return true;
    out.append(buffer, static_cast<size_t>(got));
    offset += got;
  }
}

struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd &) = delete;
  Fd &operator=(const Fd &) = delete;
  ~Fd() {
    if (fd >= 0)
      close(fd);
  }
};

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

WriteResult failure(WriteStatus status, std::string message) {
  WriteResult result;
  result.status = status;
  result.message = std::move(message);
  return result;
}

// Waits, up to half a second, until no process has the file open for writing. Linux grants a
// read lease only then; where leases are unavailable (another owner, NFS) it returns at once and
// the re-read after the rename is the only check.
void wait_for_writers(int fd) {
#ifdef F_SETLEASE
  for (int attempt = 0; attempt < 500; ++attempt) {
    if (fcntl(fd, F_SETLEASE, F_RDLCK) == 0) {
      fcntl(fd, F_SETLEASE, F_UNLCK);
      return;
    }
    if (errno != EAGAIN)
      return;
    usleep(1000);
  }
#else
  (void)fd;
#endif
}

enum class Replaced {
  Done,          // renamed, and the old file did not change until then
  ChangedBefore, // the file changed before the rename: nothing was replaced
  LateWrite,     // renamed, but the old file was written to around the rename
  Failed,        // an I/O error; nothing was replaced
};

struct ReplaceOutcome {
  Replaced status = Replaced::Failed;
  std::string old_text_after; // LateWrite: what the replaced file held right after the rename
  std::string message;        // Failed: what went wrong
};

// Replaces `target` by a new file holding `replacement`, provided the file there is still the
// one open at `current_fd` and still holds `current`. POSIX has no compare-and-swap for file
// contents, so the file is compared right before the rename and read again right after it: a
// write that lands between the two (a process appending to the file) is detected, not lost.
ReplaceOutcome replace_file(const fs::path &target, const std::string &shown, int current_fd,
                            const std::string &current, const std::string &replacement,
                            const WriteHooks *hooks) {
  ReplaceOutcome outcome;
  struct stat before {};
  if (fstat(current_fd, &before) != 0) {
    outcome.message = "cannot examine " + shown + ": " + last_error();
    return outcome;
  }
  const std::string target_path = target.string();
  fs::path directory = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  std::string pattern =
      (directory / ("." + target.filename().string() + ".devlint-XXXXXX")).string();
  std::vector<char> temp_name(pattern.begin(), pattern.end());
  temp_name.push_back('\0');
  int fd = mkstemp(temp_name.data());
  if (fd < 0) {
    outcome.message = "cannot create a temporary file in " + quoted(directory.string()) + ": " +
                      last_error() + "; " + shown + " not written";
    return outcome;
  }
  const std::string temp_path = temp_name.data();
  auto abandon = [&](const std::string &what) {
    outcome.message = what + ": " + last_error() + "; " + shown + " not written";
    if (fd >= 0)
      close(fd);
    unlink(temp_path.c_str());
    return outcome;
  };
  if (!write_all(fd, replacement))
    return abandon("cannot write " + quoted(temp_path));
  // Owner first: chown may clear set-id bits that chmod then restores.
  if (fchown(fd, before.st_uid, before.st_gid) != 0) {
    // Only root may give a file away; the new file then belongs to us, as with any editor.
  }
  if (fchmod(fd, before.st_mode & 07777) != 0)
    return abandon("cannot set the permissions of " + quoted(temp_path));
  if (fsync(fd) != 0)
    return abandon("cannot flush " + quoted(temp_path));
  int closing = fd;
  fd = -1;
  if (close(closing) != 0)
    return abandon("cannot close " + quoted(temp_path));

  // Last look before replacing: the same file, with the same bytes.
  if (hooks && hooks->before_last_check)
    hooks->before_last_check(target_path);
  struct stat now {};
  std::string text;
  if (stat(target_path.c_str(), &now) != 0 || now.st_ino != before.st_ino ||
      now.st_dev != before.st_dev || !read_fd(current_fd, text) || text != current) {
    unlink(temp_path.c_str());
    outcome.status = Replaced::ChangedBefore;
    return outcome;
  }
  if (rename(temp_path.c_str(), target_path.c_str()) != 0) {
    outcome.message = "cannot replace " + shown + ": " + last_error();
    unlink(temp_path.c_str());
    return outcome;
  }
  // Make the rename itself durable.
  int directory_fd = open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (directory_fd >= 0) {
    fsync(directory_fd);
    close(directory_fd);
  }
  // A writer that opened the old file before the rename may have written to it since, or still
  // be about to: wait until none has it open, then read it again.
  if (hooks && hooks->after_rename)
    hooks->after_rename(target_path);
  wait_for_writers(current_fd);
  if (!read_fd(current_fd, outcome.old_text_after) || outcome.old_text_after != current) {
    outcome.status = Replaced::LateWrite;
    return outcome;
  }
  outcome.status = Replaced::Done;
  return outcome;
}

// After a LateWrite: puts the user's text back, with everything written to either file, in
// order (the replaced file's text, then what was appended to the new one since), and leaves the
// fixes out. Returns false when that cannot be done safely; `recovered` then holds the replaced
// file's last text for the caller to save.
bool restore_user_text(const fs::path &target, const std::string &shown, std::string written,
                       std::string &recovered) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    Fd current(open(target.c_str(), O_RDONLY | O_CLOEXEC));
    std::string now;
    if (current.fd < 0 || !read_fd(current.fd, now) || !starts_with(now, written))
      return false; // replaced wholesale meanwhile: no safe way to merge
    std::string wanted = recovered + now.substr(written.size());
    ReplaceOutcome put = replace_file(target, shown, current.fd, now, wanted, nullptr);
    switch (put.status) {
    case Replaced::Done:
      return true;
    case Replaced::ChangedBefore:
      continue; // read again
    case Replaced::LateWrite:
      if (!starts_with(put.old_text_after, now))
        return false;
      recovered = wanted + put.old_text_after.substr(now.size());
      written = std::move(wanted);
      continue;
    case Replaced::Failed:
      return false;
    }
  }
  return false;
}

bool pwrite_all(int fd, const std::string &text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t put = pwrite(fd, text.data() + done, text.size() - done, static_cast<off_t>(done));
    if (put < 0 && errno == EINTR)
      continue;
    if (put <= 0)
      return false;
    done += static_cast<size_t>(put);
  }
  return true;
}

// A file with several hard links is written in place, as Ruff does: renaming a new file over
// one name would split the links, the other names keeping the old text. What is written is the
// file devlint read (same device and inode, opened without following a symlink swapped in
// since) and still holds `expected`.
WriteResult write_in_place(const std::string &path, const std::string &target_path,
                           const struct stat &before, const std::string &expected,
                           const std::string &fixed) {
  Fd file(open(target_path.c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  struct stat now {};
  std::string current;
  if (file.fd < 0 || fstat(file.fd, &now) != 0 || !S_ISREG(now.st_mode) ||
      now.st_ino != before.st_ino || now.st_dev != before.st_dev || !read_fd(file.fd, current) ||
      current != expected)
    return failure(WriteStatus::ChangedOnDisk,
                   quoted(path) + " changed on disk since devlint read it; not overwritten "
                                  "(run devlint again)");
  if (!pwrite_all(file.fd, fixed) || ftruncate(file.fd, static_cast<off_t>(fixed.size())) != 0 ||
      fsync(file.fd) != 0) {
    std::string error = last_error();
    bool restored = pwrite_all(file.fd, expected) &&
                    ftruncate(file.fd, static_cast<off_t>(expected.size())) == 0;
    return failure(WriteStatus::Failed,
                   "cannot write " + quoted(path) + " in place: " + error +
                       (restored ? "; its text is as before" : "; its text may be incomplete"));
  }
  WriteResult written;
  written.status = WriteStatus::Written;
  written.written_path = target_path;
  written.message = quoted(path) + " has " + std::to_string(now.st_nlink) +
                    " hard links: written in place, so every name holds the fixes";
  return written;
}

} // namespace

WriteResult write_fixed_file(const std::string &path, const std::string &expected,
                             const std::string &fixed, const WriteHooks *hooks) {
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

  Fd original(open(target_path.c_str(), O_RDONLY | O_CLOEXEC));
  std::string current;
  if (original.fd < 0 || !read_fd(original.fd, current))
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

  if (before.st_nlink > 1)
    return write_in_place(path, target_path, before, expected, fixed);
  ReplaceOutcome replaced = replace_file(target, quoted(path), original.fd, expected, fixed, hooks);
  switch (replaced.status) {
  case Replaced::Done:
    break;
  case Replaced::Failed:
    return failure(WriteStatus::Failed, replaced.message);
  case Replaced::ChangedBefore:
    return failure(WriteStatus::ChangedOnDisk,
                   quoted(path) + " changed on disk while devlint was writing it; not "
                                  "overwritten (run devlint again)");
  case Replaced::LateWrite: {
    // Something was written to the file as it was replaced. Put the user's text back, with
    // what was written, and leave the fixes out; where even that fails, save it next to it.
    std::string recovered = replaced.old_text_after;
    if (restore_user_text(target, quoted(path), fixed, recovered))
      return failure(WriteStatus::ChangedOnDisk,
                     quoted(path) + " changed on disk while devlint was writing it; put back "
                                    "what was written meanwhile, without the fixes (run "
                                    "devlint again)");
    const std::string backup = target_path + ".devlint-recovered";
    Fd out(open(backup.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    bool saved = out.fd >= 0 && write_all(out.fd, recovered) && fsync(out.fd) == 0;
    return failure(WriteStatus::ChangedOnDisk,
                   quoted(path) +
                       " changed on disk while devlint was writing it, and could not "
                       "be put back safely; " +
                       (saved
                            ? "its text, with what was written meanwhile, is in " + quoted(backup)
                            : "saving its text to " + quoted(backup) + " failed: " + last_error()));
  }
  }
  WriteResult written;
  written.status = WriteStatus::Written;
  written.written_path = target_path;
  if (through_symlink)
    written.message = quoted(path) + " is a symlink; fixed its target " + quoted(target_path);
  return written;
}

} // namespace devlint
