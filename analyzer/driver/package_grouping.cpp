#include "driver/package_grouping.h"

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <string_view>
#include <system_error>

namespace devlint {

namespace fs = std::filesystem;

namespace {

bool is_package(const fs::path &directory) {
  std::error_code ec;
  return fs::is_regular_file(directory / "__init__.py", ec);
}

// The directory `dots` leading dots name from `directory`: `.` is the file's own package, each
// further dot its parent. Python refuses to go above the top-level package, so every directory
// climbed out of and into must be a package (have an `__init__.py`); a path that is not stays
// unresolved, which also keeps an untrusted repository from naming files outside its packages.
std::optional<fs::path> package_directory(fs::path directory, size_t dots) {
  for (size_t up = 1; up < dots; ++up) {
    if (!is_package(directory) || !directory.has_parent_path() ||
        directory.parent_path() == directory)
      return std::nullopt;
    directory = directory.parent_path();
    if (!is_package(directory))
      return std::nullopt;
  }
  return directory;
}

bool is_inside(const fs::path &path, const fs::path &root) {
  std::error_code ec;
  fs::path a = fs::absolute(path, ec).lexically_normal();
  fs::path b = fs::absolute(root, ec).lexically_normal();
  if (ec)
    return false;
  auto mismatch = std::mismatch(b.begin(), b.end(), a.begin(), a.end());
  // A trailing separator leaves an empty last element in `b`.
  return mismatch.first == b.end() ||
         (std::next(mismatch.first) == b.end() && mismatch.first->empty());
}

// `from model.modelclass import Model` in `.../src/model/harness.py`: an absolute import whose
// package part is the importing file's own directory (and the directories above it, as named)
// names a module beside it, as Python finds it when the script runs with `src` on its path.
std::optional<fs::path> same_directory_module(const fs::path &directory, std::string_view module) {
  size_t last_dot = module.rfind('.');
  if (last_dot == std::string_view::npos || last_dot + 1 >= module.size())
    return std::nullopt;
  std::string_view leaf = module.substr(last_dot + 1);
  std::string_view package = module.substr(0, last_dot);
  std::error_code ec;
  fs::path above =
      fs::absolute(directory.empty() ? fs::path(".") : directory, ec).lexically_normal();
  if (ec)
    return std::nullopt;
  if (above.filename().empty()) // a trailing separator
    above = above.parent_path();
  while (!package.empty()) {
    size_t dot = package.rfind('.');
    std::string_view part = dot == std::string_view::npos ? package : package.substr(dot + 1);
    if (part.empty() || above.filename().string() != part)
      return std::nullopt;
    above = above.parent_path();
    package = dot == std::string_view::npos ? std::string_view() : package.substr(0, dot);
  }
  return directory / (std::string(leaf) + ".py");
}

} // namespace

std::vector<std::string> relative_import_paths(const SyntaxFile &file, const std::string &root) {
  std::vector<std::string> out;
  fs::path directory = fs::path(file.source->path).parent_path();
  for (const ImportedName &imported : file.imports) {
    std::string_view module = imported.module;
    size_t dots = module.find_first_not_of('.');
    dots = dots == std::string_view::npos ? module.size() : dots;
    if (dots == 0) {
      if (std::optional<fs::path> sibling = same_directory_module(directory, module))
        out.push_back(sibling->lexically_normal().string());
      continue;
    }
    std::optional<fs::path> base = package_directory(directory, dots);
    if (!base || (dots > 1 && !is_inside(*base, root)))
      continue;
    std::string_view rest = module.substr(dots);
    fs::path target = *base;
    if (rest.empty()) {
      // `from . import visual`, `from .. import utils`: the names are modules.
      if (imported.name.empty())
        continue;
      target /= std::string(imported.name);
    } else {
      for (size_t start = 0; start <= rest.size();) {
        size_t dot = rest.find('.', start);
        target /=
            std::string(rest.substr(start, dot == std::string_view::npos ? dot : dot - start));
        if (dot == std::string_view::npos)
          break;
        start = dot + 1;
      }
    }
    // `from .layers import x` may name a module (layers.py) or a package (layers/__init__.py).
    std::error_code ec;
    fs::path module_file = target;
    module_file += ".py";
    if (!rest.empty() && !fs::exists(module_file, ec) && is_package(target))
      out.push_back((target / "__init__.py").lexically_normal().string());
    else
      out.push_back(module_file.lexically_normal().string());
  }
  return out;
}

} // namespace devlint
