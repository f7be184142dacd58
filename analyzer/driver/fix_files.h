// Writes fixed text back to disk for `--fix`, without ever leaving a half-written or clobbered
// file behind.
#pragma once

#include <string>

namespace devlint {

enum class WriteStatus {
  Written,
  AlreadyFixed,  // the file already holds the fixed text (e.g. reached again through a symlink)
  ChangedOnDisk, // someone edited the file since devlint read it: not overwritten
  ReadOnly,      // no write permission bits on the file: not written
  Failed,        // an I/O error; the original file is untouched
};

struct WriteResult {
  WriteStatus status = WriteStatus::Failed;
  std::string message;      // for everything but Written/AlreadyFixed: what happened, and why
  std::string written_path; // the file actually replaced (a symlink's target)
};

// Replaces the file at `path` with `fixed`, provided it still holds `expected` (what devlint
// read and fixed). The new text goes to a temporary file in the same directory, is flushed to
// disk and renamed over the original, so readers see either the old or the new file; the mode
// bits (and, where allowed, the owner) are kept. Line endings, encoding and the trailing newline
// are whatever `fixed` holds: fixes are byte-range edits of the original text.
// A symlink is followed: its target is replaced and the link itself stays as it is.
// A file with several hard links is written in place instead (as Ruff does), so that the links
// stay one file; the result's message says so.
// A write that lands while the file is being replaced (an editor or a log appending to it) is
// never lost: the file is compared right before the rename and read again right after it; if it
// changed, the user's text is put back with what was written and without the fixes (or, when
// that is impossible, saved to `<path>.devlint-recovered`), and the result is ChangedOnDisk.
//
// `hooks` let tests act at the two moments that matter; they are null in normal use.
struct WriteHooks {
  void (*before_last_check)(const std::string &target) = nullptr;
  void (*after_rename)(const std::string &target) = nullptr;
};
WriteResult write_fixed_file(const std::string &path, const std::string &expected,
                             const std::string &fixed, const WriteHooks *hooks = nullptr);

} // namespace devlint
