#include "driver/package_grouping.h"

#include <filesystem>

namespace devlint {

std::vector<std::string> relative_import_paths(const SyntaxFile &file) {
  std::vector<std::string> out;
  std::filesystem::path directory = std::filesystem::path(file.source->path).parent_path();
  for (const ImportedName &imported : file.imports) {
    std::string_view module = imported.module;
    // `from ..x import` reaches the parent package: not a sibling file.
    if (module.empty() || module[0] != '.' || (module.size() > 1 && module[1] == '.'))
      continue;
    std::string_view name = module.size() > 1 ? module.substr(1) : imported.name;
    name = name.substr(0, name.find('.'));
    if (name.empty())
      continue;
    out.push_back((directory / (std::string(name) + ".py")).lexically_normal().string());
  }
  return out;
}

} // namespace devlint
