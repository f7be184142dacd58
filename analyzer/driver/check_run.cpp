#include "driver/check_run.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "driver/path_patterns.h"
#include "driver/result_cache.h"
#include "findings/suppressions.h"
#include "frontend/python/python_frontend.h"
#include "placement/placement_analysis.h"
#include "placement/unit_placement.h"

namespace devlint {
namespace fs = std::filesystem;

namespace {

bool valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t extra = c < 0x80           ? 0
                   : (c >> 5) == 0x6  ? 1
                   : (c >> 4) == 0xE  ? 2
                   : (c >> 3) == 0x1E ? 3
                                      : 9;
    if (extra == 9 || i + extra >= s.size() + (extra ? 0 : 1))
      return false;
    for (size_t k = 1; k <= extra; ++k)
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2)
        return false;
    i += extra + 1;
  }
  return true;
}

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

bool looks_like_model_code(const std::string &text) {
  return text.find("torch") != std::string::npos || text.find("nn.Module") != std::string::npos;
}

std::string display_path(const fs::path &p) {
  std::error_code ec;
  fs::path rel = fs::relative(p, fs::current_path(ec), ec);
  std::string s =
      (!ec && !rel.empty() && rel.string().rfind("..", 0) != 0) ? rel.string() : p.string();
  return s;
}

struct PackageJob {
  std::vector<std::string> paths;             // reported files
  std::unordered_set<std::string> by_content; // paths kept only if they look like model code
  const CheckOptions *options = nullptr;
};

} // namespace

namespace {
std::unique_ptr<SourceFile> source_from_text(const std::string &path, const std::string &text) {
  auto file = std::make_unique<SourceFile>();
  file->path = path;
  file->display_path = display_path(path);
  file->text = text;
  file->index_lines();
  return file;
}
} // namespace

std::unique_ptr<SourceFile> read_source_file(const std::string &path, uint64_t max_bytes,
                                             Diagnostic &diagnostic) {
  diagnostic.path = path;
  std::error_code ec;
  auto size = fs::file_size(path, ec);
  if (ec) {
    diagnostic.severity = Severity::Error;
    diagnostic.message = "cannot read file: " + ec.message();
    return nullptr;
  }
  if (size > max_bytes) {
    diagnostic.severity = Severity::Warning;
    diagnostic.message = "skipped: file is " + std::to_string(size >> 20) +
                         " MiB, over the limit of " + std::to_string(max_bytes >> 20) + " MiB";
    return nullptr;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    diagnostic.severity = Severity::Error;
    diagnostic.message = "cannot open file (permission denied or not a regular file)";
    return nullptr;
  }
  std::string text;
  text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (in.bad()) {
    diagnostic.severity = Severity::Error;
    diagnostic.path = display_path(path);
    diagnostic.message = "read error";
    return nullptr;
  }
  return source_from_bytes(path, std::move(text), diagnostic);
}

std::unique_ptr<SourceFile> source_from_bytes(const std::string &path, std::string text,
                                              Diagnostic &diagnostic) {
  auto file = std::make_unique<SourceFile>();
  file->path = path;
  file->display_path = display_path(path);
  diagnostic.path = file->display_path;
  file->text = std::move(text);
  if (file->text.find('\0') != std::string::npos) {
    diagnostic.severity = Severity::Warning;
    diagnostic.message = "skipped: binary file (contains NUL bytes)";
    return nullptr;
  }
  if (!valid_utf8(file->text)) {
    diagnostic.severity = Severity::Warning;
    diagnostic.message = "skipped: not valid UTF-8";
    return nullptr;
  }
  file->index_lines();
  return file;
}

std::vector<Finding> check_package(const std::vector<const SourceFile *> &sources,
                                   const std::vector<const SourceFile *> &reported,
                                   const CheckOptions &options,
                                   std::vector<Diagnostic> *diagnostics) {
  std::vector<std::unique_ptr<SyntaxFile>> syntax;
  std::vector<const SyntaxFile *> files;
  std::unordered_set<const SourceFile *> reported_set(reported.begin(), reported.end());
  for (const SourceFile *source : sources) {
    syntax.push_back(lower_python(*source));
    files.push_back(syntax.back().get());
    if (diagnostics && reported_set.count(source) && !syntax.back()->syntax_errors.empty()) {
      const SourceRange &r = syntax.back()->syntax_errors.front();
      Diagnostic d;
      d.severity = Severity::Warning;
      d.path = source->display_path;
      d.line = r.line;
      d.column = r.column;
      d.message = "syntax error; analyzed the parts of the file that parse (" +
                  std::to_string(syntax.back()->syntax_errors.size()) + " error region(s))";
      diagnostics->push_back(d);
    }
  }
  auto package = build_package(files, options.overrides);
  PlacementModel placement(*package);
  SiteChecker checker(placement, options.selection, reported_set);
  analyze_package(*package, placement, checker);
  return filter_findings(checker.take_findings(), reported, options);
}

std::vector<Finding> filter_findings(std::vector<Finding> findings,
                                     const std::vector<const SourceFile *> &reported,
                                     const CheckOptions &options) {
  RuleSelection unfixable{options.unfixable, {}};
  std::vector<Finding> out;
  for (const SourceFile *file : reported) {
    std::vector<Finding> own;
    for (Finding &f : findings)
      if (f.file == file)
        own.push_back(std::move(f));
    SuppressionPolicy policy{options.selection, options.report_unused_suppressions};
    for (const PerFileIgnore &entry : options.per_file_ignores)
      if (glob_matches(entry.pattern, file->path, options.base_directory))
        policy.selection.ignore.insert(policy.selection.ignore.end(), entry.codes.begin(),
                                       entry.codes.end());
    for (Finding &f : apply_suppressions(std::move(own), *file, policy)) {
      if (f.fix && !options.unfixable.empty() && unfixable.enabled(f.code)) {
        f.fix.reset();
        f.no_fix_reason =
            "fixes for " + f.code + " are turned off by `unfixable`" +
            (options.unfixable_source.empty() ? "" : " in " + options.unfixable_source);
      }
      out.push_back(std::move(f));
    }
  }
  return out;
}

CheckResult check_paths(const std::vector<std::string> &paths, const CheckOptions &options,
                        DirectoryOptionsSource *per_directory, const SourceTexts *texts) {
  CheckResult result;
  auto load = [texts](const std::string &path, uint64_t max_bytes, Diagnostic &diagnostic) {
    auto replaced = texts ? texts->find(path) : SourceTexts::const_iterator();
    return texts && replaced != texts->end() ? source_from_text(path, replaced->second)
                                             : read_source_file(path, max_bytes, diagnostic);
  };
  auto options_for = [&](const fs::path &directory) -> const CheckOptions & {
    return per_directory ? per_directory->options_for(directory.string()) : options;
  };
  std::map<std::string, PackageJob> packages; // by directory; ordered for determinism
  for (const std::string &path : paths) {
    std::error_code ec;
    fs::file_status status = fs::status(path, ec);
    bool given_as_text = texts && texts->count(path); // stdin, an editor's buffer
    if (given_as_text)
      status = fs::file_status(fs::file_type::regular);
    else if (ec || !fs::exists(status)) {
      result.diagnostics.push_back({Severity::Error, path, 0, 0, "no such file or directory"});
      result.had_error = true;
      continue;
    }
    if (fs::is_directory(status)) {
      fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec),
          end;
      if (ec) {
        result.diagnostics.push_back(
            {Severity::Error, path, 0, 0, "cannot list directory: " + ec.message()});
        result.had_error = true;
        continue;
      }
      for (; it != end; it.increment(ec)) {
        if (ec) {
          result.diagnostics.push_back(
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
  std::vector<PackageJob *> jobs;
  for (auto &[dir, job] : packages) {
    std::sort(job.paths.begin(), job.paths.end());
    jobs.push_back(&job);
  }

  struct PackageOutput {
    std::vector<std::unique_ptr<SourceFile>> files;
    std::vector<Finding> findings;
    std::vector<Diagnostic> diagnostics;
    size_t checked = 0;
    bool error = false;
  };
  std::vector<PackageOutput> outputs(jobs.size());
  std::atomic<size_t> next{0};
  std::mutex progress_mutex;
  size_t files_done = 0, files_total = 0;
  for (const PackageJob *job : jobs)
    files_total += job->paths.size();
  auto worker = [&] {
    for (size_t i = next++; i < jobs.size(); i = next++) {
      PackageOutput &out = outputs[i];
      const CheckOptions &package_options = *jobs[i]->options;
      std::vector<const SourceFile *> sources, reported;
      for (const std::string &path : jobs[i]->paths) {
        Diagnostic d;
        auto file = load(path, package_options.max_file_bytes, d);
        if (!file) {
          out.error |= d.severity == Severity::Error;
          out.diagnostics.push_back(d);
          continue;
        }
        if (file->text.empty() ||
            (jobs[i]->by_content.count(path) && !looks_like_model_code(file->text)))
          continue;
        sources.push_back(file.get());
        reported.push_back(file.get());
        out.files.push_back(std::move(file));
        ++out.checked;
      }
      // Sibling modules named by relative imports give definitions (GLM-4V's visual.py).
      std::unordered_set<std::string> have(jobs[i]->paths.begin(), jobs[i]->paths.end());
      for (size_t k = 0; k < reported.size() && !options.discover_only; ++k) {
        const std::string &text = reported[k]->text;
        for (size_t pos = text.find("from ."); pos != std::string::npos;
             pos = text.find("from .", pos + 6)) {
          size_t begin = pos + 6;
          size_t end = begin;
          while (end < text.size() &&
                 (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_'))
            ++end;
          if (end == begin)
            continue;
          fs::path sibling =
              fs::path(reported[k]->path).parent_path() / (text.substr(begin, end - begin) + ".py");
          std::string s = sibling.lexically_normal().string();
          if (have.count(s) || !fs::is_regular_file(sibling))
            continue;
          have.insert(s);
          Diagnostic d;
          if (auto file = load(s, package_options.max_file_bytes, d)) {
            sources.push_back(file.get());
            out.files.push_back(std::move(file));
          }
        }
      }
      if (!sources.empty() && !options.discover_only) {
        // Files given as text (the fix loop, the editor) are never cached: they change often.
        ResultCache *cache = texts ? nullptr : options.cache;
        std::string key;
        if (cache) {
          std::vector<const SourceFile *> context(sources.begin() + reported.size(), sources.end());
          key = cache->package_key(reported, context, package_options);
        }
        if (auto cached = cache ? cache->load(key, reported) : std::nullopt) {
          out.findings = std::move(cached->findings);
          for (Diagnostic &d : cached->diagnostics)
            out.diagnostics.push_back(std::move(d));
        } else {
          std::vector<Diagnostic> analysis_diagnostics;
          out.findings = check_package(sources, reported, package_options, &analysis_diagnostics);
          if (cache)
            cache->store(key, reported, out.findings, analysis_diagnostics);
          for (Diagnostic &d : analysis_diagnostics)
            out.diagnostics.push_back(std::move(d));
        }
      }
      if (options.on_progress) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        files_done += jobs[i]->paths.size();
        options.on_progress(files_done, files_total);
      }
    }
  };
  unsigned threads =
      options.jobs ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  threads = std::min<unsigned>(threads, static_cast<unsigned>(std::max<size_t>(1, jobs.size())));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back(worker);
  worker();
  for (std::thread &t : pool)
    t.join();

  for (PackageOutput &out : outputs) {
    for (auto &f : out.files)
      result.files.push_back(std::move(f));
    for (auto &f : out.findings)
      result.findings.push_back(std::move(f));
    for (auto &d : out.diagnostics)
      result.diagnostics.push_back(std::move(d));
    result.files_checked += out.checked;
    result.had_error |= out.error;
  }
  sort_findings(result.findings);
  return result;
}

void sort_findings(std::vector<Finding> &findings) {
  std::stable_sort(findings.begin(), findings.end(), [](const Finding &a, const Finding &b) {
    return std::tie(a.file->display_path, a.range.line, a.range.column, a.code) <
           std::tie(b.file->display_path, b.range.line, b.range.column, b.code);
  });
}

} // namespace devlint
