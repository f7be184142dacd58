#include "driver/cache_location.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <sys/stat.h>

#include "driver/result_cache.h"
#include "model/paths.h"
#include "model/text.h"

namespace devlint {
namespace fs = std::filesystem;

namespace {

std::string environment(const char *name) {
  const char *value = std::getenv(name);
  return value ? value : "";
}

// A folder name for people looking: the project directory's name, its odd characters dropped.
std::string readable_name(const std::string &project_root) {
  std::string name;
  for (char c : fs::path(project_root).filename().string())
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')
      name += c;
  if (name.empty() || name.front() == '.')
    name = "project" + name;
  return name.substr(0, 40);
}

} // namespace

std::string user_cache_directory(const std::string &from_command_line) {
  std::string chosen =
      from_command_line.empty() ? environment("DEVLINT_CACHE_DIR") : from_command_line;
  if (!chosen.empty())
    return absolute_path(chosen).lexically_normal().string();
  // The XDG base directory specification: a relative value is invalid and ignored (it would put
  // the cache in whatever directory devlint runs in).
  if (std::string xdg = environment("XDG_CACHE_HOME"); !xdg.empty() && xdg.front() == '/')
    return (fs::path(xdg) / "devlint").lexically_normal().string();
  if (std::string home = environment("HOME"); !home.empty() && home.front() == '/')
    return (fs::path(home) / ".cache" / "devlint").lexically_normal().string();
  return "";
}

std::string precompiled_header_directory(const std::string &cache_directory) {
  if (std::string chosen = environment("DEVLINT_PCH_DIR"); !chosen.empty())
    return absolute_path(chosen).lexically_normal().string();
  return cache_directory.empty() ? "" : (fs::path(cache_directory) / "pch").string();
}

std::string current_project_root() {
  fs::path here = current_directory();
  if (here.empty())
    return "";
  for (fs::path dir = here;; dir = dir.parent_path()) {
    struct stat info;
    if (lstat((dir / ".git").c_str(), &info) == 0)
      return dir.string();
    if (dir == dir.root_path() || dir.parent_path() == dir)
      break;
  }
  return here.string();
}

std::string project_cache_directory(const std::string &cache_directory,
                                    const std::string &project_root) {
  std::string hash = CacheKeyBuilder().add("devlint-project/1").add(project_root).hex();
  return (fs::path(cache_directory) / "results" /
          (readable_name(project_root) + "-" + hash.substr(0, 16)))
      .string();
}

CleanOutcome remove_project_entries(const std::string &cache_directory,
                                    const std::string &project_root) {
  CleanOutcome outcome;
  if (cache_directory.empty()) {
    outcome.error = "no cache directory: HOME and XDG_CACHE_HOME are not set";
    return outcome;
  }
  std::error_code ec;
  struct stat info;
  if (lstat(cache_directory.c_str(), &info) != 0)
    return outcome; // nothing was ever cached there
  if (!fs::exists(fs::path(cache_directory) / "CACHEDIR.TAG", ec)) {
    outcome.error = "`" + printable(cache_directory) +
                    "` is not a devlint cache (no CACHEDIR.TAG); nothing removed";
    return outcome;
  }
  std::string folder = project_cache_directory(cache_directory, project_root);
  if (lstat(folder.c_str(), &info) != 0)
    return outcome;
  // Links are removed, never followed (std::filesystem's iteration and remove_all do neither).
  for (fs::recursive_directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec) && it->path().extension() == ".json")
      ++outcome.removed;
  fs::remove_all(folder, ec);
  if (ec) {
    outcome.error = "cannot remove `" + printable(folder) + "`: " + ec.message();
    return outcome;
  }
  outcome.removed_from = folder;
  return outcome;
}

} // namespace devlint
