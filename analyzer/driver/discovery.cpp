#include "driver/discovery.h"

#include <algorithm>
#include <set>

#include "driver/gitignore.h"
#include "driver/path_patterns.h"
#include "driver/source_reading.h"
#include "frontend/cpp/compile_flags.h"
#include "frontend/cpp/cpp_frontend.h"
#include "model/file_access.h"
#include "model/file_input.h"
#include "model/paths.h"

namespace devlint {
namespace fs = std::filesystem;

namespace {

// The default `include`: files named like transformers' model files, and any other Python file
// that uses torch (it may define an nn.Module, or place one, as scripts do for DL008). Other
// files cannot produce findings, so skipping them only saves time.
bool default_included_by_name(const fs::path &p) {
  std::string name = p.filename().string();
  return name.rfind("modeling_", 0) == 0 && p.extension() == ".py";
}

} // namespace

bool looks_like_model_code(const std::string &text) {
  return text.find("torch") != std::string::npos || text.find("nn.Module") != std::string::npos ||
         text.find("transformers") != std::string::npos;
}

// The default `include` for C++: sources that include a LibTorch header.
bool includes_torch_header(const std::string &text) {
  for (const char *header : {"<torch/", "\"torch/", "<ATen/", "\"ATen/"})
    for (size_t pos = text.find(header); pos != std::string::npos;
         pos = text.find(header, pos + 1)) {
      size_t line = text.rfind('\n', pos);
      size_t start = line == std::string::npos ? 0 : line + 1;
      std::string_view before(text.data() + start, pos - start);
      if (before.find("#include") != std::string_view::npos ||
          before.find("# include") != std::string_view::npos)
        return true;
    }
  return false;
}

namespace {

// Whether `text`, or a project header it includes with quotes (searched next to `directory`, then
// in `include_dirs`), includes torch; at most 32 headers are read.
bool includes_torch_through(const std::string &text, const fs::path &directory,
                            const std::vector<fs::path> &include_dirs,
                            std::set<std::string> &seen) {
  if (includes_torch_header(text))
    return true;
  for (size_t pos = text.find("#include \""); pos != std::string::npos && seen.size() < 32;
       pos = text.find("#include \"", pos + 1)) {
    size_t begin = pos + 10, end = text.find('"', begin);
    if (end == std::string::npos || text.find('\n', begin) < end)
      continue;
    const std::string name = text.substr(begin, end - begin);
    std::vector<fs::path> candidates{directory / name};
    for (const fs::path &dir : include_dirs)
      candidates.push_back(dir / name);
    for (const fs::path &candidate : candidates) {
      const std::string header = candidate.lexically_normal().string();
      std::string why;
      std::optional<std::string> head = read_regular_file(header, kMaxInputBytes, why);
      if (!head)
        continue;
      // The first header found by that name is the one included.
      if (seen.insert(header).second &&
          includes_torch_through(*head, fs::path(header).parent_path(), include_dirs, seen))
        return true;
      break;
    }
  }
  return false;
}

} // namespace

bool uses_libtorch(const std::string &path, const std::string &text, const std::string &root) {
  // The folders Clang is given without a database (frontend/cpp/torch_setup.cpp), inside the
  // file's checkout, else inside the directory the user asked to check: a repository never makes
  // devlint read beyond it.
  fs::path stop = checkout_root_of(path);
  if (stop.empty())
    stop = resolved_path(root.empty() ? "." : root);
  std::vector<fs::path> include_dirs;
  std::error_code ec;
  for (fs::path dir = resolved_path(path).parent_path(); path_within(dir, stop);
       dir = dir.parent_path()) {
    if (fs::is_directory(dir / "include", ec))
      include_dirs.push_back(dir / "include");
    if (dir == stop || dir == dir.parent_path())
      break;
  }
  std::set<std::string> seen;
  return includes_torch_through(text, fs::path(path).parent_path(), include_dirs, seen);
}

namespace {
// Reached from two of the user's paths, a package keeps the outer one (the shorter path).
void keep_outer_root(PackageJob &job, const std::string &root) {
  if (job.root.empty() || root.size() < job.root.size())
    job.root = root;
}
} // namespace

std::map<std::string, PackageJob> discover_packages(const std::vector<std::string> &paths,
                                                    const OptionsForDirectory &options_for,
                                                    const SourceTexts *texts, CheckResult &result) {
  std::map<std::string, PackageJob> packages;
  auto cannot = [&result](const std::string &path, const std::string &what) {
    result.diagnostics.push_back({Severity::Error, display_path(path), 0, 0, what});
    result.had_error = true;
    ++result.files_not_checked;
  };
  for (const std::string &path : paths) {
    std::error_code ec;
    fs::file_status status = fs::status(path, ec);
    bool given_as_text = texts && texts->count(path); // stdin, an editor's buffer
    if (given_as_text)
      status = fs::file_status(fs::file_type::regular);
    else if (ec || !fs::exists(status)) {
      cannot(path, ec && ec != std::errc::no_such_file_or_directory ? "not checked: " + ec.message()
                                                                    : "no such file or directory");
      continue;
    }
    if (fs::is_directory(status)) {
      // Model files symlinked out of the checkout (or of the directory given, outside one) are
      // not read: a repository could point one at any file of the user's.
      fs::path checkout = checkout_root_of(path);
      if (checkout.empty())
        checkout = resolved_path(path);
      // An explicit walk rather than recursive_directory_iterator: every directory that cannot
      // be listed is reported (not skipped), and symlinked directories are not followed, so a
      // symlink loop cannot make it run forever.
      // Each directory to walk with the .gitignore files in force there.
      const CheckOptions &root_options = options_for(fs::path(path));
      std::vector<std::pair<fs::path, GitignoreChain>> pending{
          {fs::path(path), root_options.respect_gitignore
                               ? enclosing_gitignores(path, result.diagnostics)
                               : GitignoreChain{}}};
      while (!pending.empty()) {
        auto [directory, gitignores] = std::move(pending.back());
        pending.pop_back();
        if (options_for(directory).respect_gitignore)
          gitignores = with_gitignore_of(gitignores, directory, result.diagnostics);
        fs::directory_iterator it(directory, ec), end;
        if (ec) {
          cannot(directory.string(), "not checked: cannot list the directory: " + ec.message());
          continue;
        }
        std::vector<fs::directory_entry> entries;
        for (; it != end; it.increment(ec)) {
          if (ec)
            break;
          entries.push_back(*it);
        }
        if (ec) {
          cannot(directory.string(),
                 "not checked completely: listing the directory failed: " + ec.message());
          ec.clear();
        }
        std::sort(entries.begin(), entries.end(),
                  [](const auto &a, const auto &b) { return a.path() < b.path(); });
        std::vector<fs::path> subdirectories;
        for (const fs::directory_entry &item : entries) {
          fs::path entry = item.path().lexically_normal();
          const CheckOptions &here = options_for(entry.parent_path());
          fs::file_status own = item.symlink_status(ec);
          bool is_directory = !ec && fs::is_directory(own);
          ec.clear();
          bool ignored =
              here.respect_gitignore && !gitignores.empty() &&
              gitignored(gitignores, absolute_path(entry).lexically_normal(), is_directory);
          if (is_directory) {
            if (!ignored && !any_glob_matches(here.exclude, entry.string(), here.base_directory))
              subdirectories.push_back(entry);
            continue;
          }
          bool cpp = is_cpp_source_path(entry.string());
          if ((entry.extension() != ".py" && !cpp) || ignored ||
              any_glob_matches(here.exclude, entry.string(), here.base_directory))
            continue;
          fs::file_status target = item.status(ec);
          if (ec) { // a dangling symlink, a symlink loop, a file that vanished
            cannot(entry.string(), "not checked: " + ec.message());
            ec.clear();
            continue;
          }
          if (fs::is_directory(target))
            continue; // a symlink to a directory named like a file: not followed
          if (fs::is_symlink(own)) {
            fs::path resolved = resolved_path(entry);
            if (!path_within(resolved, checkout)) {
              result.diagnostics.push_back({Severity::Warning, display_path(entry), 0, 0,
                                            "skipped: a symlink to a file outside the checkout (" +
                                                printable_text(resolved.string(), 400) + ")"});
              continue;
            }
          }
          bool by_name = here.include.empty()
                             ? !cpp && default_included_by_name(entry)
                             : any_glob_matches(here.include, entry.string(), here.base_directory);
          if (!by_name && !here.include.empty())
            continue;
          PackageJob &job = packages[entry.parent_path().string()];
          job.options = &here;
          keep_outer_root(job, fs::path(path).lexically_normal().string());
          job.paths.push_back(entry.string());
          if (!by_name)
            job.by_content.insert(entry.string());
        }
        for (auto sub = subdirectories.rbegin(); sub != subdirectories.rend(); ++sub)
          pending.emplace_back(*sub, gitignores);
      }
    } else {
      fs::path p = fs::path(path).lexically_normal();
      const CheckOptions &here = options_for(p.parent_path().empty() ? "." : p.parent_path());
      if (here.force_exclude && any_glob_matches(here.exclude, p.string(), here.base_directory))
        continue;
      auto &job = packages[p.parent_path().string()];
      job.options = &here;
      keep_outer_root(job, p.parent_path().empty() ? "." : p.parent_path().string());
      if (std::find(job.paths.begin(), job.paths.end(), p.string()) == job.paths.end())
        job.paths.push_back(p.string());
      job.by_content.erase(p.string()); // named explicitly: always checked
    }
  }
  return packages;
}

} // namespace devlint
