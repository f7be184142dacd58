// The run: reads each discovered package, lowers it with the frontend, adds the sibling modules
// it imports, and runs module model -> placement analysis -> rules on a pool of threads.
#include "driver/check_run.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_set>

#include "driver/cpp_units.h"
#include "driver/discovery.h"
#include "driver/model_setup_version.h"
#include "driver/package_grouping.h"
#include "driver/path_patterns.h"
#include "driver/placement_rank.h"
#include "driver/result_cache.h"
#include "driver/search_paths.h"
#include "driver/session_cache.h"
#include "driver/source_reading.h"
#include "findings/site_checker.h"
#include "findings/suppressions.h"
#include "frontend/cpp/cpp_frontend.h"
#include "frontend/python/python_frontend.h"
#include "placement/placement_analysis.h"
#include "placement/unit_placement.h"

namespace devlint {
namespace fs = std::filesystem;

namespace {

// Lowers one file (incrementally from its previous text, with a session); with `diagnostics` (a
// reported file), each syntax error becomes an invalid-syntax diagnostic (the run fails, as in
// Ruff) and code nested too deep to analyze a warning. Unlike Ruff, the parts of the file that
// parse are still analyzed, and the message says so.
std::unique_ptr<SyntaxFile> lower_source(const SourceFile &source,
                                         std::vector<Diagnostic> *diagnostics,
                                         SessionCache *session = nullptr) {
  std::unique_ptr<SyntaxFile> syntax =
      session ? session->lower_reported(source) : lower_python(source);
  if (diagnostics)
    for (const SyntaxErrorNote &error : syntax->syntax_errors)
      diagnostics->push_back({Severity::InvalidSyntax, source.display_path, error.range.line,
                              error.range.column,
                              error.message + " (devlint checked the parts that parse)"});
  if (diagnostics && !syntax->too_deep.empty()) {
    const SourceRange &r = syntax->too_deep.front();
    diagnostics->push_back({Severity::Warning, source.display_path, r.line, r.column,
                            "nested more than " + std::to_string(kMaxSyntaxDepth) +
                                " levels deep; the code inside was not analyzed"});
  }
  return syntax;
}

} // namespace

std::vector<const SyntaxFile *>
syntax_pointers(const std::vector<std::unique_ptr<SyntaxFile>> &files) {
  std::vector<const SyntaxFile *> out;
  for (const auto &file : files)
    out.push_back(file.get());
  return out;
}

std::vector<Finding> check_lowered(const std::vector<const SyntaxFile *> &files,
                                   const std::vector<const SourceFile *> &reported,
                                   const CheckOptions &options,
                                   std::vector<Diagnostic> *diagnostics,
                                   ExternalClassResolver *external_classes, SessionCache *session) {
  std::unordered_set<const SourceFile *> reported_set(reported.begin(), reported.end());
  // The installed transformers, read once and only when a rule asks (its dist-info on the
  // search paths).
  auto version = std::make_shared<std::optional<TransformersVersion>>();
  auto installed = [&options, &files, version]() -> const TransformersVersion & {
    if (!*version)
      *version = release_for_code(
          installed_transformers_version(options.search_paths, options.search_python_environment),
          files);
    return **version;
  };
  PackageOverrides overrides = options.overrides;
  overrides.external_classes = external_classes;
  overrides.transformers_major = [installed] { return installed().major; };
  auto package = build_package(files, overrides);
  PlacementModel placement(*package);
  SiteChecker checker(
      placement, [&](std::string_view code) { return options.selection.enabled(code); },
      reported_set);
  analyze_package(*package, checker);
  std::vector<Finding> findings = checker.take_findings();
  if (!files.empty() && files.front()->source) {
    PlacementSettings settings = options.placement;
    settings.transformers_major = [installed] { return installed().major; };
    settings.transformers_minor = [installed] {
      const std::string &v = installed().version;
      size_t dot = v.find('.');
      int minor = 0;
      for (size_t i = dot == std::string::npos ? v.size() : dot + 1;
           i < v.size() && std::isdigit(static_cast<unsigned char>(v[i])) && minor < 1000; ++i)
        minor = minor * 10 + (v[i] - '0');
      return minor;
    };
    place_findings(findings, *package,
                   std::filesystem::path(files.front()->source->path).parent_path().string(),
                   settings, diagnostics, session ? &session->simulations() : nullptr,
                   checker.take_passed_arguments());
  }
  return filter_findings(std::move(findings), reported, options, diagnostics);
}

std::vector<Finding> check_package(const std::vector<const SourceFile *> &sources,
                                   const std::vector<const SourceFile *> &reported,
                                   const CheckOptions &options,
                                   std::vector<Diagnostic> *diagnostics) {
  std::unordered_set<const SourceFile *> reported_set(reported.begin(), reported.end());
  std::vector<std::unique_ptr<SyntaxFile>> syntax;
  std::vector<const SourceFile *> python_reported;
  std::vector<Finding> findings;
  for (const SourceFile *source : sources) {
    if (source->language == Language::Cpp) {
      // Each C++ translation unit is its own package.
      if (!reported_set.count(source))
        continue;
      CppUnitResult unit = check_cpp_unit(*source, options, nullptr, false);
      for (Finding &f : unit.findings)
        findings.push_back(std::move(f));
      if (diagnostics)
        diagnostics->insert(diagnostics->end(), unit.diagnostics.begin(), unit.diagnostics.end());
      continue;
    }
    syntax.push_back(lower_source(*source, reported_set.count(source) ? diagnostics : nullptr));
    if (reported_set.count(source))
      python_reported.push_back(source);
  }
  std::unique_ptr<SearchPathResolver> resolver;
  if (!options.search_paths.empty() || options.search_python_environment)
    resolver = std::make_unique<SearchPathResolver>(options.search_paths,
                                                    options.search_python_environment);
  if (!syntax.empty())
    for (Finding &f : check_lowered(syntax_pointers(syntax), python_reported, options, diagnostics,
                                    resolver.get()))
      findings.push_back(std::move(f));
  return findings;
}

std::vector<Finding> filter_findings(std::vector<Finding> findings,
                                     const std::vector<const SourceFile *> &reported,
                                     const CheckOptions &options,
                                     std::vector<Diagnostic> *diagnostics) {
  // A fix is offered when its rule is `fixable` (empty: every rule) and not `unfixable`.
  RuleSelection fix_offered{options.fixable, options.unfixable};
  RuleSelection unfixable{options.unfixable, {}};
  std::vector<Finding> out;
  for (const SourceFile *file : reported) {
    std::vector<Finding> own;
    for (Finding &f : findings)
      if (f.file == file)
        own.push_back(std::move(f));
    RuleSelection selection = options.selection;
    for (const PerFileIgnore &entry : options.per_file_ignores)
      if (glob_matches(entry.pattern, file->path, options.base_directory))
        selection.ignore.insert(selection.ignore.end(), entry.codes.begin(), entry.codes.end());
    RuleSelection ignore_only{{}, selection.ignore};
    SuppressionPolicy policy{[&](std::string_view code) { return selection.enabled(code); },
                             [&](std::string_view code) { return ignore_only.enabled(code); },
                             options.report_unused_suppressions};
    for (Finding &f : apply_suppressions(std::move(own), *file, policy, diagnostics)) {
      if (f.fix && !fix_offered.enabled(f.code)) {
        bool by_unfixable = !options.unfixable.empty() && unfixable.enabled(f.code);
        f.fix.reset();
        f.no_fix_reason =
            "fixes for " + f.code +
            (by_unfixable ? " are turned off by `unfixable`" : " are not in `fixable`") +
            (options.unfixable_source.empty() ? "" : " in " + options.unfixable_source);
      }
      out.push_back(std::move(f));
    }
  }
  return out;
}

CheckResult check_paths(const std::vector<std::string> &paths, const CheckOptions &options,
                        DirectoryOptionsSource *per_directory, const SourceTexts *texts,
                        RunCaches caches) {
  CheckResult result;
  // A text given in place of the file (stdin, the editor's buffer, a fix pass) gets the same
  // checks as the file: the size cap, binary, UTF-8.
  auto load = [texts](const std::string &path, uint64_t max_bytes,
                      Diagnostic &diagnostic) -> std::unique_ptr<SourceFile> {
    auto replaced = texts ? texts->find(path) : SourceTexts::const_iterator();
    if (!texts || replaced == texts->end())
      return read_source_file(path, max_bytes, diagnostic);
    if (replaced->second.size() > max_bytes) {
      diagnostic = {Severity::Error, display_path(path), 0, 0,
                    "not checked: " + over_the_limit(replaced->second.size(), max_bytes)};
      return nullptr;
    }
    return source_from_bytes(path, replaced->second, diagnostic);
  };
  OptionsForDirectory options_for = [&](const fs::path &directory) -> const CheckOptions & {
    return per_directory ? per_directory->options_for(directory.string()) : options;
  };
  std::map<std::string, PackageJob> packages = discover_packages(paths, options_for, texts, result);
  if (per_directory)
    for (Diagnostic &d : per_directory->take_diagnostics())
      result.diagnostics.push_back(std::move(d));
  std::vector<PackageJob *> jobs;
  for (auto &[dir, job] : packages) {
    std::sort(job.paths.begin(), job.paths.end());
    jobs.push_back(&job);
  }

  // What one path of a package gave: the file read, or why not; a C++ unit's result.
  struct PathOutput {
    std::vector<std::unique_ptr<SourceFile>> files; // the file, when it was read
    std::optional<Diagnostic> unread;
    bool checked = false;
    std::optional<CppUnitResult> unit;
  };
  // A package's paths, and its Python files' analysis (with the context files it read).
  struct PackageOutput {
    std::vector<PathOutput> paths;
    std::vector<std::unique_ptr<SourceFile>> files;
    std::vector<Finding> findings;
    std::vector<Diagnostic> diagnostics;
    size_t not_checked = 0; // reported files an internal error left unchecked
  };
  std::vector<PackageOutput> outputs(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i)
    outputs[i].paths.resize(jobs[i]->paths.size());
  // One resolver per list of search paths, shared by the threads: each module is read once.
  using SearchKey = std::pair<std::vector<std::string>, bool>;
  auto search_key = [](const CheckOptions &o) {
    return SearchKey(o.search_paths, o.search_python_environment);
  };
  std::map<SearchKey, std::unique_ptr<SearchPathResolver>> own_resolvers;
  std::map<SearchKey, SearchPathResolver *> resolvers;
  for (const PackageJob *job : jobs) {
    const CheckOptions &o = *job->options;
    if ((!o.search_paths.empty() || o.search_python_environment) && !resolvers.count(search_key(o)))
      resolvers[search_key(o)] =
          caches.session ? caches.session->resolver(o.search_paths, o.search_python_environment)
                         : (own_resolvers[search_key(o)] = std::make_unique<SearchPathResolver>(
                                o.search_paths, o.search_python_environment))
                               .get();
  }
  SessionCache *session = caches.session;
  std::mutex progress_mutex;
  size_t files_done = 0, files_total = 0;
  for (const PackageJob *job : jobs)
    files_total += job->paths.size();
  std::vector<const std::vector<std::string> *> package_paths;
  for (const PackageJob *job : jobs)
    package_paths.push_back(&job->paths);
  const std::vector<CheckTask> tasks = plan_check_tasks(package_paths);
  std::atomic<size_t> next{0};
  // Reads one path into its slot; null when it is not to be checked.
  auto read_path = [&](size_t i, size_t k) -> SourceFile * {
    const std::string &path = jobs[i]->paths[k];
    PathOutput &slot = outputs[i].paths[k];
    Diagnostic d;
    auto file = load(path, jobs[i]->options->max_file_bytes, d);
    if (!file) {
      slot.unread = d;
      return nullptr;
    }
    bool cpp = file->language == Language::Cpp;
    if (jobs[i]->by_content.count(path) &&
        !(cpp ? uses_libtorch(path, file->text, jobs[i]->root) : looks_like_model_code(file->text)))
      return nullptr; // found in a directory, and not model code: not devlint's to check
    slot.checked = true;
    if (file->text.empty())
      return nullptr;
    slot.files.push_back(std::move(file));
    return slot.files.back().get();
  };
  auto worker = [&] {
    for (size_t n = next++; n < tasks.size(); n = next++) {
      const size_t i = tasks[n].package;
      PackageOutput &out = outputs[i];
      const CheckOptions &package_options = *jobs[i]->options;
      if (tasks[n].path != kPythonFiles) {
        // A translation unit is its own package: everything it uses is in what it includes.
        const size_t k = tasks[n].path;
        SourceFile *file = read_path(i, k);
        if (file && !options.discover_only) {
          PathOutput &slot = out.paths[k];
          slot.unit = check_cpp_unit(*file, package_options, texts, true,
                                     texts ? nullptr : caches.results, &options);
        }
        if (options.on_progress) {
          std::lock_guard<std::mutex> lock(progress_mutex);
          options.on_progress(++files_done, files_total);
        }
        continue;
      }
      std::vector<const SourceFile *> reported;
      size_t python_paths = 0;
      for (size_t k = 0; k < jobs[i]->paths.size(); ++k) {
        if (is_cpp_path(jobs[i]->paths[k]))
          continue;
        ++python_paths;
        if (SourceFile *file = read_path(i, k))
          reported.push_back(file);
      }
      // Files given as text (the fix loop, the editor) are never cached: they change often.
      ResultCache *cache = texts ? nullptr : caches.results;
      auto take_cached = [&out](CachedPackage &cached) {
        for (Finding &f : cached.findings)
          out.findings.push_back(std::move(f));
        for (Diagnostic &d : cached.diagnostics)
          out.diagnostics.push_back(std::move(d));
      };
      std::string direct_key;
      if (cache && !reported.empty() && !options.discover_only) {
        // A warm run: the manifest's files read again give the full key, nothing is lowered.
        direct_key = cache->package_direct_key(reported, package_options);
        if (auto manifest = cache->load_manifest(direct_key, package_options.max_file_bytes)) {
          std::vector<const SourceFile *> context;
          for (const auto &file : manifest->context)
            context.push_back(file.get());
          std::string key =
              cache->package_key(reported, context, package_options, manifest->outside);
          if (auto cached = cache->load(key, reported)) {
            take_cached(*cached);
            reported.clear();
          }
        }
      }
      if (!reported.empty() && !options.discover_only) {
        std::vector<Diagnostic> analysis_diagnostics;
        std::vector<std::unique_ptr<SyntaxFile>> syntax; // owned here; `lowered` has them all
        std::vector<const SyntaxFile *> lowered;
        for (const SourceFile *source : reported) {
          syntax.push_back(lower_source(*source, &analysis_diagnostics, session));
          lowered.push_back(syntax.back().get());
        }
        // Sibling modules named by relative imports give definitions (GLM-4V's visual.py).
        std::vector<const SourceFile *> context;
        std::vector<std::string> absent; // looked for, not found: the manifest's misses
        // The files read: one of the directory found not to be model code may still give
        // definitions to those that import it.
        std::unordered_set<std::string> have;
        for (size_t k = 0; k < jobs[i]->paths.size(); ++k)
          if (outputs[i].paths[k].checked || !jobs[i]->by_content.count(jobs[i]->paths[k]))
            have.insert(jobs[i]->paths[k]);
        for (size_t k = 0; k < reported.size(); ++k) {
          for (const std::string &sibling : relative_import_paths(*lowered[k], jobs[i]->root)) {
            if (have.count(sibling))
              continue;
            if (!fs::is_regular_file(sibling)) {
              absent.push_back(sibling);
              continue;
            }
            have.insert(sibling);
            Diagnostic d;
            auto file = load(sibling, package_options.max_file_bytes, d);
            if (file && session) { // lowered once per content; the result gets a copy
              const SessionCache::ContextFile &kept = session->lower_context(std::move(file));
              lowered.push_back(kept.syntax.get());
              context.push_back(kept.source.get());
              out.files.push_back(std::make_unique<SourceFile>(*kept.source));
            } else if (file) {
              syntax.push_back(lower_source(*file, nullptr));
              lowered.push_back(syntax.back().get());
              context.push_back(file.get());
              out.files.push_back(std::move(file));
            }
          }
        }
        auto found = resolvers.find(search_key(package_options));
        SearchPathResolver *resolver = found == resolvers.end() ? nullptr : found->second;
        std::string key;
        if (cache) {
          // The files on the search paths that the package's imports reach are part of the key.
          std::vector<std::pair<std::string, std::string>> outside;
          if (resolver)
            outside = resolver->dependencies_of(lowered, &absent);
          key = cache->package_key(reported, context, package_options, outside);
          cache->store_manifest(direct_key, context, outside, absent);
        }
        if (auto cached = cache ? cache->load(key, reported) : std::nullopt) {
          take_cached(*cached);
        } else {
          std::vector<Finding> findings;
          // A defect of devlint's own, met on code it was never shown, costs this package's
          // findings, not the run: the files are reported unchecked (exit code 2).
          try {
            findings = check_lowered(lowered, reported, package_options, &analysis_diagnostics,
                                     resolver, session);
          } catch (const std::exception &e) {
            for (const SourceFile *file : reported)
              out.diagnostics.push_back({Severity::Error, file->display_path, 0, 0,
                                         std::string("not checked: internal error in devlint (") +
                                             e.what() + "); please report it with this file"});
            out.not_checked = reported.size();
            analysis_diagnostics.clear();
            cache = nullptr;
          }
          if (cache)
            cache->store(key, reported, findings, analysis_diagnostics);
          for (Finding &f : findings)
            out.findings.push_back(std::move(f));
          for (Diagnostic &d : analysis_diagnostics)
            out.diagnostics.push_back(std::move(d));
        }
      }
      if (options.on_progress) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        files_done += python_paths;
        options.on_progress(files_done, files_total);
      }
    }
  };
  unsigned threads =
      options.jobs ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  threads = std::min<unsigned>(threads, static_cast<unsigned>(std::max<size_t>(1, tasks.size())));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back(worker);
  worker();
  for (std::thread &t : pool)
    t.join();

  // In the run's order: each path's file (a C++ unit's headers first, each header reported by the
  // first unit that includes it), then the Python files' context; each path's diagnostics and a
  // unit's findings, then the Python files' analysis.
  HeaderClaims header_claims;
  for (PackageOutput &out : outputs) {
    for (PathOutput &slot : out.paths) {
      if (slot.unit) {
        header_claims.resolve(*slot.unit);
        for (auto &header : slot.unit->headers)
          result.files.push_back(std::move(header));
      }
      for (auto &f : slot.files)
        result.files.push_back(std::move(f));
      if (slot.unread) {
        result.had_error |= slot.unread->severity == Severity::Error;
        result.files_not_checked += slot.unread->severity == Severity::Error;
        result.diagnostics.push_back(std::move(*slot.unread));
      }
      result.files_checked += slot.checked;
      if (slot.unit) {
        result.had_error |= slot.unit->error;
        for (auto &f : slot.unit->findings)
          result.findings.push_back(std::move(f));
        for (auto &d : slot.unit->diagnostics)
          result.diagnostics.push_back(std::move(d));
      }
    }
    for (auto &f : out.files)
      result.files.push_back(std::move(f));
    for (auto &f : out.findings)
      result.findings.push_back(std::move(f));
    for (auto &d : out.diagnostics)
      result.diagnostics.push_back(std::move(d));
    result.had_error |= out.not_checked > 0;
    result.files_not_checked += out.not_checked;
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
