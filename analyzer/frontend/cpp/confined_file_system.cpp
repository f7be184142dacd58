#include "frontend/cpp/confined_file_system.h"

#include <climits>
#include <cstdlib>
#include <filesystem>

#include "model/file_access.h"

namespace devlint {

ConfinedFileSystem::ConfinedFileSystem(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> underlying,
                                       std::vector<std::string> roots)
    : ProxyFileSystem(std::move(underlying)), roots_(std::move(roots)) {}

bool ConfinedFileSystem::allowed(const std::string &path, const std::vector<std::string> &roots) {
  char resolved[PATH_MAX];
  if (!::realpath(path.c_str(), resolved))
    return false;
  for (const std::string &root : roots)
    if (path_within(std::filesystem::path(resolved), std::filesystem::path(root)))
      return true;
  return false;
}

llvm::ErrorOr<std::unique_ptr<llvm::vfs::File>>
ConfinedFileSystem::openFileForRead(const llvm::Twine &path) {
  llvm::SmallString<256> absolute;
  path.toVector(absolute);
  if (makeAbsolute(absolute))
    return std::make_error_code(std::errc::permission_denied);
  std::string name(absolute.str());
  std::error_code exists;
  if (!std::filesystem::exists(name, exists))
    return std::make_error_code(std::errc::no_such_file_or_directory);
  if (!allowed(name, roots_)) {
    std::lock_guard<std::mutex> lock(mutex_);
    refused_.push_back(name);
    return std::make_error_code(std::errc::permission_denied);
  }
  return ProxyFileSystem::openFileForRead(path);
}

std::vector<std::string> ConfinedFileSystem::refused() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return refused_;
}

} // namespace devlint
