// The current directory may have been deleted under a running devlint (a build tree cleaned by
// another process). Absolute paths must still work then, so nothing asks for it in a way that
// throws.
#pragma once

#include <filesystem>
#include <string>

namespace devlint {

// The current directory, or an empty path when it cannot be determined.
inline std::filesystem::path current_directory() {
  std::error_code ec;
  std::filesystem::path here = std::filesystem::current_path(ec);
  return ec ? std::filesystem::path() : here;
}

// `p` made absolute; `p` itself (relative) when the current directory is unknown.
inline std::filesystem::path absolute_path(const std::filesystem::path &p) {
  if (p.is_absolute())
    return p;
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(p, ec);
  return ec ? p : absolute;
}

} // namespace devlint
