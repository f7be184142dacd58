// `.gitignore` files for discovery's `respect-gitignore` (on by default, as in Ruff): what they
// ignore is not checked. Each file is read as data only (a regular file, not a symlink, at most
// kMaxGitignoreBytes); one that cannot be read is a warning, never a reason to stop.
// The patterns follow gitignore(5): `#` comments, `!` negation, a trailing `/` for directories
// only, a `/` at the start or in the middle anchors the pattern to the file's directory, `*`
// and `?` stay within a name and `**` crosses directories; the last matching line wins and a
// deeper file's lines come after its parents'.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "diagnostics/finding.h"

namespace devlint {

constexpr uint64_t kMaxGitignoreBytes = 1u << 20;

struct GitignoreRule {
  std::string pattern;
  bool negated = false;
  bool directory_only = false;
  bool anchored = false; // matched against the path below the file's directory
};

struct Gitignore {
  std::filesystem::path directory; // absolute, normal: where the file sits
  std::vector<GitignoreRule> rules;
};

// The .gitignore files in force in a directory, outermost first.
using GitignoreChain = std::vector<std::shared_ptr<const Gitignore>>;

Gitignore parse_gitignore(std::string_view text, const std::filesystem::path &directory);

// `directory`'s own .gitignore added to `chain` (unchanged when there is none); a file that
// cannot be read adds a warning to `diagnostics`.
GitignoreChain with_gitignore_of(const GitignoreChain &chain,
                                 const std::filesystem::path &directory,
                                 std::vector<Diagnostic> &diagnostics);

// The .gitignore files above `directory` that git would apply to it: those from the root of the
// enclosing git repository (the nearest directory above with a `.git`) down to its parent. None
// outside a repository.
GitignoreChain enclosing_gitignores(const std::filesystem::path &directory,
                                    std::vector<Diagnostic> &diagnostics);

// Whether `path` (absolute, normal) is ignored.
bool gitignored(const GitignoreChain &chain, const std::filesystem::path &path, bool is_directory);

} // namespace devlint
