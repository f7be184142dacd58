#include "driver/discovery.h"

#include <algorithm>

#include "driver/path_patterns.h"

namespace devlint {
namespace fs = std::filesystem;

namespace {

bool skipped_directory(const fs::path &p) {
  std::string name = p.filename().string();
  return (name.size() > 1 && name[0] == '.') || name == "__pycache__" || name == "node_modules" ||
         name == "site-packages" || name == "venv" || name == "build";
}

// The default `include`: files named like transformers' model files, and any other Python file
// that uses torch (it may define an nn.Module, or place one, as scripts do for DL008). Other
// files cannot produce findings, so skipping them only saves time.
bool default_included_by_name(const fs::path &p) {
  std::string name = p.filename().string();
  return name.rfind("modeling_", 0) == 0 && p.extension() == ".py";
}

} // namespace

bool looks_like_model_code(const std::string &text) {
  return text.find("torch") != std::string::npos || text.find("nn.Module") != std::string::npos;
}

std::map<std::string, PackageJob>
discover_packages(const std::vector<std::string> &paths, const OptionsForDirectory &options_for,
                  const SourceTexts *texts, std::vector<Diagnostic> &diagnostics, bool &had_error) {
  std::map<std::string, PackageJob> packages;
  for (const std::string &path : paths) {
    std::error_code ec;
    fs::file_status status = fs::status(path, ec);
    bool given_as_text = texts && texts->count(path); // stdin, an editor's buffer
    if (given_as_text)
      status = fs::file_status(fs::file_type::regular);
    else if (ec || !fs::exists(status)) {
      diagnostics.push_back({Severity::Error, path, 0, 0, "no such file or directory"});
      had_error = true;
      continue;
    }
    if (fs::is_directory(status)) {
      fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec),
          end;
      if (ec) {
        diagnostics.push_back(
            {Severity::Error, path, 0, 0, "cannot list directory: " + ec.message()});
        had_error = true;
        continue;
      }
      for (; it != end; it.increment(ec)) {
        if (ec) {
          diagnostics.push_back(
              {Severity::Warning, it->path().string(), 0, 0, "cannot list: " + ec.message()});
          ec.clear();
          continue;
        }
        fs::path entry = it->path().lexically_normal();
        const CheckOptions &here = options_for(entry.parent_path());
        if (it->is_directory(ec)) {
          if (skipped_directory(entry) ||
              any_glob_matches(here.exclude, entry.string(), here.base_directory))
            it.disable_recursion_pending();
          continue;
        }
        if (!it->is_regular_file(ec) || entry.extension() != ".py" ||
            any_glob_matches(here.exclude, entry.string(), here.base_directory))
          continue;
        bool by_name = here.include.empty()
                           ? default_included_by_name(entry)
                           : any_glob_matches(here.include, entry.string(), here.base_directory);
        if (!by_name && !here.include.empty())
          continue;
        PackageJob &job = packages[entry.parent_path().string()];
        job.options = &here;
        job.paths.push_back(entry.string());
        if (!by_name)
          job.by_content.insert(entry.string());
      }
    } else {
      fs::path p = fs::path(path).lexically_normal();
      const CheckOptions &here = options_for(p.parent_path().empty() ? "." : p.parent_path());
      if (here.force_exclude && any_glob_matches(here.exclude, p.string(), here.base_directory))
        continue;
      auto &job = packages[p.parent_path().string()];
      job.options = &here;
      if (std::find(job.paths.begin(), job.paths.end(), p.string()) == job.paths.end())
        job.paths.push_back(p.string());
      job.by_content.erase(p.string()); // named explicitly: always checked
    }
  }
  return packages;
}

} // namespace devlint
