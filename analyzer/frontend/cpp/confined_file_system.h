// The file system Clang sees: it opens files only under given roots (the checkout, LibTorch's
// and the system's include directories), symlinks resolved first. A repository's
// `#include "/home/user/.ssh/id_rsa"`, or a header symlinked out of the checkout, is refused,
// so no text of a file outside them can reach a diagnostic devlint prints.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include <llvm/Support/VirtualFileSystem.h>

namespace devlint {

class ConfinedFileSystem final : public llvm::vfs::ProxyFileSystem {
public:
  // `roots`: resolved directories (no symlinks in them).
  ConfinedFileSystem(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> underlying,
                     std::vector<std::string> roots);

  llvm::ErrorOr<std::unique_ptr<llvm::vfs::File>> openFileForRead(const llvm::Twine &path) override;

  // The paths refused so far (absolute, as asked for).
  std::vector<std::string> refused() const;

  // Whether `path` (absolute) resolves to a place under one of `roots`.
  static bool allowed(const std::string &path, const std::vector<std::string> &roots);

private:
  std::vector<std::string> roots_;
  mutable std::mutex mutex_;
  std::vector<std::string> refused_;
};

} // namespace devlint
