#include "driver/model_setup_imports.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>
#include <sstream>

#include "model/file_input.h"
#include "model/module_model.h"

namespace devlint {
namespace fs = std::filesystem;

namespace {

// diffusers' UNet2DConditionModel reads about ten files this way; a hostile tree cannot make
// devlint read more.
constexpr size_t kMaxImportedFiles = 24;

struct RelativeImport {
  std::string module;                   // "..embeddings"
  std::vector<std::string> local_names; // as bound in the importing file
};

std::string trimmed(std::string s) {
  size_t hash = s.find('#');
  if (hash != std::string::npos)
    s.erase(hash);
  size_t begin = s.find_first_not_of(" \t\r");
  size_t end = s.find_last_not_of(" \t\r");
  return begin == std::string::npos ? std::string() : s.substr(begin, end - begin + 1);
}

std::vector<std::string> lines_of(const std::string &text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

size_t indentation(const std::string &line) {
  size_t n = line.find_first_not_of(" \t");
  return n == std::string::npos ? line.size() : n;
}

// `from .x import a, b as c` and `from ..x import (\n a,\n b,\n)`, at any indentation (an import
// under `if is_torch_available():` binds the name too).
std::vector<RelativeImport> relative_imports(const std::vector<std::string> &lines) {
  std::vector<RelativeImport> out;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string line = trimmed(lines[i]);
    if (line.rfind("from .", 0) != 0)
      continue;
    size_t module_end = line.find(' ', 5);
    size_t import_at = line.find(" import ", 5);
    if (module_end == std::string::npos || import_at != module_end)
      continue;
    RelativeImport imported{line.substr(5, module_end - 5), {}};
    std::string names = line.substr(import_at + 8);
    if (!names.empty() && names[0] == '(')
      while (names.find(')') == std::string::npos && i + 1 < lines.size())
        names += " " + trimmed(lines[++i]);
    std::replace_if(
        names.begin(), names.end(), [](char c) { return c == '(' || c == ')' || c == '\\'; }, ' ');
    std::istringstream items(names);
    for (std::string item; std::getline(items, item, ',');) {
      item = trimmed(item);
      size_t as = item.find(" as ");
      std::string local = trimmed(as == std::string::npos ? item : item.substr(as + 4));
      if (!local.empty() && local != "*")
        imported.local_names.push_back(local);
    }
    out.push_back(std::move(imported));
  }
  return out;
}

// The code building a module runs, comments left out: every `def __init__` (signature and body),
// and for a file read for its classes, their base lists too (a base's __init__ runs).
std::string building_text(const std::vector<std::string> &lines, bool with_bases) {
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string line = trimmed(lines[i]);
    if (with_bases && line.rfind("class ", 0) == 0) {
      for (size_t j = i; j < lines.size(); ++j) {
        out += trimmed(lines[j]) + "\n";
        if (!trimmed(lines[j]).empty() && trimmed(lines[j]).back() == ':')
          break;
      }
      continue;
    }
    if (line.rfind("def __init__(", 0) != 0)
      continue;
    size_t indent = indentation(lines[i]);
    out += line + "\n";
    for (size_t j = i + 1; j < lines.size(); ++j) {
      std::string next = trimmed(lines[j]);
      if (!next.empty() && indentation(lines[j]) <= indent && next[0] != ')' && next[0] != ']')
        break;
      out += next + "\n";
    }
  }
  return out;
}

// `word` as a name, not as an attribute (`self.register_to_config(...)` is a method, not the
// imported decorator).
bool mentions_word(const std::string &text, const std::string &word) {
  auto part = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1))
    if ((at == 0 || (!part(text[at - 1]) && text[at - 1] != '.')) &&
        (at + word.size() == text.size() || !part(text[at + word.size()])))
      return true;
  return false;
}

bool inside(const fs::path &path, const fs::path &root) {
  auto [r, p] = std::mismatch(root.begin(), root.end(), path.begin(), path.end());
  return r == root.end();
}

// The top-level Python package holding `directory`: the highest ancestor reached through
// directories that each have an __init__.py.
std::optional<fs::path> top_level_package(const fs::path &directory) {
  std::error_code ec;
  if (!fs::is_regular_file(directory / "__init__.py", ec))
    return std::nullopt;
  fs::path top = directory;
  while (top.has_parent_path() && top.parent_path() != top &&
         fs::is_regular_file(top.parent_path() / "__init__.py", ec))
    top = top.parent_path();
  return top;
}

} // namespace

std::vector<std::string> relatively_imported_files(const std::string &directory) {
  std::vector<std::string> out;
  std::error_code ec;
  fs::path own = fs::weakly_canonical(fs::path(directory.empty() ? "." : directory), ec);
  if (ec)
    return out;
  std::optional<fs::path> top = top_level_package(own);
  if (!top)
    return out;
  struct Pending {
    fs::path path;
    bool library; // read for its classes (not one of the package's own files)
  };
  std::vector<Pending> pending;
  // Paths as load_model_setup names the files (DIRECTORY/name, then relative_import_path's), so
  // that the package resolves a relative import to the file read; canonical ones to compare.
  std::vector<fs::path> own_files;
  std::set<fs::path> seen;
  for (fs::directory_iterator it(own, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".py") {
      own_files.push_back(fs::path(directory) / it->path().filename());
      seen.insert(it->path());
    }
  std::sort(own_files.begin(), own_files.end());
  for (const fs::path &p : own_files)
    pending.push_back({p, false});
  for (size_t next = 0; next < pending.size() && out.size() < kMaxImportedFiles; ++next) {
    std::string why;
    std::optional<std::string> text =
        read_regular_file(pending[next].path.string(), kMaxInputBytes, why);
    if (!text)
      continue;
    std::vector<std::string> lines = lines_of(*text);
    std::string building = building_text(lines, pending[next].library);
    for (const RelativeImport &imported : relative_imports(lines)) {
      if (std::none_of(imported.local_names.begin(), imported.local_names.end(),
                       [&](const std::string &name) { return mentions_word(building, name); }))
        continue;
      fs::path target(relative_import_path(pending[next].path.string(), imported.module));
      for (const fs::path &file : {fs::path(target.string() + ".py"), target / "__init__.py"}) {
        if (!fs::is_regular_file(file, ec))
          continue;
        fs::path real = fs::weakly_canonical(file, ec);
        if (ec || !inside(real, *top) || real.parent_path() == own || !seen.insert(real).second)
          break;
        pending.push_back({file, true});
        out.push_back(file.string());
        break;
      }
      if (out.size() == kMaxImportedFiles)
        break;
    }
  }
  return out;
}

} // namespace devlint
