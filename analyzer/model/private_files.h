// Files devlint keeps for the user between runs (the result cache, the precompiled header): in
// directories only this user may write to, written so that a link planted at any name devlint
// uses is replaced, never written through, and read only when they are plain files. A repository
// devlint checks is untrusted input; these are the rules that keep it from reaching outside.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace devlint {

// Makes `directory` (missing parents too, each 0700 as the XDG base directory specification asks)
// and checks it is fit to hold private files: a directory owned by the effective user that
// neither the group nor others may write to. A symbolic link passes only with FollowOwn (a cache
// root the user pointed elsewhere) and when this user owns it (in /tmp another user could
// have made it); its target is then checked. Returns "" when fit, else why not (for a warning).
enum class LinkPolicy { Refuse, FollowOwn };
std::string make_private_directory(const std::string &directory,
                                   LinkPolicy links = LinkPolicy::Refuse);

// Writes `contents` to `path` whole: into a new file beside it, opened with
// O_CREAT|O_EXCL|O_NOFOLLOW under a random name (mode 0600), then renamed over `path`, which
// replaces whatever is there (a link included) instead of following it. Readers see the old file
// or the new one, never half of one. Returns "" or why it failed (nothing is left behind).
std::string write_file_replacing(const std::string &path, std::string_view contents);

// A new empty file `<path>.tmp.<pid>.<random>`, made with O_CREAT|O_EXCL|O_NOFOLLOW (mode 0600),
// for a tool that writes the output itself (Clang's -o); empty when none could be made.
std::string make_temporary_file(const std::string &path);

// The text of `path` when it is a regular file of at most `max_bytes` (opened with O_NOFOLLOW
// and O_NONBLOCK, checked with fstat: no link, FIFO or device is followed or waited on).
std::optional<std::string> read_plain_file(const std::string &path, uint64_t max_bytes);

// Whether `path` is a regular file (not a link) owned by the effective user.
bool is_own_plain_file(const std::string &path);

} // namespace devlint
