#include "driver/check_run.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <unordered_set>

#include "driver/path_patterns.h"
#include "driver/result_cache.h"
#include "findings/suppressions.h"
#include "frontend/python/python_frontend.h"
#include "model/paths.h"
#include "model/utf8.h"
#include "placement/placement_analysis.h"
#include "placement/unit_placement.h"

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

bool looks_like_model_code(const std::string &text) {
  return text.find("torch") != std::string::npos || text.find("nn.Module") != std::string::npos;
}

std::string display_path(const fs::path &p) {
  fs::path here = current_directory();
  if (here.empty())
    return p.string();
  std::error_code ec;
  fs::path rel = fs::relative(p, here, ec);
  std::string s =
      (!ec && !rel.empty() && rel.string().rfind("..", 0) != 0) ? rel.string() : p.string();
  return s;
}

SourceRange position_of(const SourceFile &file, uint32_t offset) {
  auto it = std::upper_bound(file.line_starts.begin(), file.line_starts.end(), offset);
  SourceRange r;
  r.begin = r.end = offset;
  r.line = r.end_line = static_cast<uint32_t>(it - file.line_starts.begin());
  r.column = r.end_column = offset - file.line_starts[r.line - 1] + 1;
  return r;
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
  diagnostic.path = display_path(path);
  // Every failure below means the file was not checked; the policy (README, "Files that could
  // not be checked") makes each an error with exit code 2.
  diagnostic.severity = Severity::Error;
  auto not_checked = [&](const std::string &why) {
    diagnostic.message = "not checked: " + why;
    return nullptr;
  };
  // O_NONBLOCK: opening a FIFO named by mistake must not wait for a writer. The checks below
  // look at what was opened, not at the name, so a file swapped meanwhile cannot slip through.
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return not_checked(std::string("cannot open: ") + std::strerror(errno));
  struct FdCloser {
    int fd;
    ~FdCloser() { close(fd); }
  } closer{fd};
  struct stat info {};
  if (fstat(fd, &info) != 0)
    return not_checked(std::string("cannot examine: ") + std::strerror(errno));
  if (S_ISDIR(info.st_mode))
    return not_checked("a directory");
  if (!S_ISREG(info.st_mode))
    return not_checked(S_ISFIFO(info.st_mode)   ? "a FIFO, not a regular file"
                       : S_ISCHR(info.st_mode)  ? "a character device, not a regular file"
                       : S_ISBLK(info.st_mode)  ? "a block device, not a regular file"
                       : S_ISSOCK(info.st_mode) ? "a socket, not a regular file"
                                                : "not a regular file");
  auto too_large = [&](uint64_t size) {
    return not_checked("file is " + std::to_string(size) + " bytes, over the limit of " +
                       std::to_string(max_bytes) + " bytes (" + std::to_string(max_bytes >> 20) +
                       " MiB)");
  };
  if (static_cast<uint64_t>(info.st_size) > max_bytes)
    return too_large(static_cast<uint64_t>(info.st_size));
  int flags = fcntl(fd, F_GETFL);
  if (flags >= 0)
    fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);

  // Read at most one byte past the limit: a file that grows while it is read stays bounded.
  std::string text;
  text.reserve(static_cast<size_t>(info.st_size));
  char buffer[1 << 16];
  while (text.size() <= max_bytes) {
    size_t want = std::min<uint64_t>(sizeof buffer, max_bytes + 1 - text.size());
    ssize_t got = read(fd, buffer, want);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return not_checked(std::string("read error: ") + std::strerror(errno));
    if (got == 0)
      break;
    text.append(buffer, static_cast<size_t>(got));
  }
  if (text.size() > max_bytes)
    return too_large(text.size());
  return source_from_bytes(path, std::move(text), diagnostic);
}

std::unique_ptr<SourceFile> source_from_bytes(const std::string &path, std::string bytes,
                                              Diagnostic &diagnostic) {
  diagnostic.path = display_path(path);
  diagnostic.severity = Severity::Error;
  auto not_checked = [&](const std::string &why) {
    diagnostic.message = "not checked: " + why;
    return nullptr;
  };
  auto file = std::make_unique<SourceFile>();
  file->path = path;
  file->display_path = diagnostic.path;
  std::string &text = file->text;
  text = std::move(bytes);
  if (size_t nul = text.find('\0'); nul != std::string::npos) {
    file->index_lines();
    SourceRange r = position_of(*file, static_cast<uint32_t>(nul));
    diagnostic.line = r.line;
    diagnostic.column = r.column;
    return not_checked("binary file (a NUL byte)");
  }
  if (size_t bad = first_invalid_utf8(text); bad != text.size()) {
    file->index_lines();
    SourceRange r = position_of(*file, static_cast<uint32_t>(bad));
    diagnostic.line = r.line;
    diagnostic.column = r.column;
    return not_checked("not valid UTF-8 (devlint reads UTF-8 source, as Python does by default)");
  }
  diagnostic.severity = Severity::Warning;
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
    if (diagnostics && reported_set.count(source) && !syntax.back()->too_deep.empty()) {
      const SourceRange &r = syntax.back()->too_deep.front();
      diagnostics->push_back({Severity::Warning, source->display_path, r.line, r.column,
                              "nested more than " + std::to_string(kMaxSyntaxDepth) +
                                  " levels deep; the code inside was not analyzed"});
    }
  }
  auto package = build_package(files, options.overrides);
  PlacementModel placement(*package);
  SiteChecker checker(placement, options.selection, reported_set);
  analyze_package(*package, placement, checker);
  return filter_findings(checker.take_findings(), reported, options, diagnostics);
}

std::vector<Finding> filter_findings(std::vector<Finding> findings,
                                     const std::vector<const SourceFile *> &reported,
                                     const CheckOptions &options,
                                     std::vector<Diagnostic> *diagnostics) {
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
    for (Finding &f : apply_suppressions(std::move(own), *file, policy, diagnostics)) {
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
      // An explicit walk rather than recursive_directory_iterator: every directory that cannot
      // be listed is reported (not skipped), and symlinked directories are not followed, so a
      // symlink loop cannot make it run forever.
      std::vector<fs::path> pending{fs::path(path)};
      while (!pending.empty()) {
        fs::path directory = std::move(pending.back());
        pending.pop_back();
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
          if (!ec && fs::is_directory(own)) {
            if (!skipped_directory(entry) &&
                !any_glob_matches(here.exclude, entry.string(), here.base_directory))
              subdirectories.push_back(entry);
            continue;
          }
          ec.clear();
          if (entry.extension() != ".py" ||
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
        pending.insert(pending.end(), subdirectories.rbegin(), subdirectories.rend());
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
    size_t not_checked = 0;
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
          out.not_checked += d.severity == Severity::Error;
          out.diagnostics.push_back(d);
          continue;
        }
        if (jobs[i]->by_content.count(path) && !looks_like_model_code(file->text))
          continue; // found in a directory, and not model code: not devlint's to check
        ++out.checked;
        if (file->text.empty())
          continue;
        sources.push_back(file.get());
        reported.push_back(file.get());
        out.files.push_back(std::move(file));
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
    result.files_not_checked += out.not_checked;
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
