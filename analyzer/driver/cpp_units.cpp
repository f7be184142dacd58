#include "driver/cpp_units.h"

#include <algorithm>
#include <filesystem>

#include "driver/result_cache.h"
#include "frontend/cpp/cpp_frontend.h"

namespace devlint {
namespace fs = std::filesystem;

// A cache entry holds every project header of its unit (the entry records them as claimed);
// entries written when units reported only the headers they claimed first are not used.
CppUnitResult check_cpp_unit(const SourceFile &main, const CheckOptions &options,
                             const SourceTexts *texts, bool report_headers, ResultCache *cache,
                             const CheckOptions *run_options) {
  CppUnitResult out;
  if (!report_headers)
    cache = nullptr;
  std::string key;
  if (cache) {
    key = cache->cpp_unit_key(main, options, cpp_compile_arguments(main.path, options.cpp));
    if (auto hit = cache->load_cpp_unit(key, main, options.max_file_bytes)) {
      std::vector<std::string> headers;
      for (const auto &header : hit->headers)
        if (header->path != main.path)
          headers.push_back(header->path);
      if (headers == hit->claimed) { // only units that had no error are stored
        out.diagnostics = std::move(hit->result.diagnostics);
        out.findings = std::move(hit->result.findings);
        for (auto &header : hit->headers)
          if (header->path != main.path)
            out.headers.push_back(std::move(header));
        return out;
      }
    }
  }
  CppSettings settings = options.cpp;
  if (run_options && run_options->on_pch_build) // per-directory options carry no callbacks
    settings.on_pch_build = run_options->on_pch_build;
  CppUnit unit = lower_cpp(main, settings, texts);
  for (Diagnostic &d : unit.diagnostics) {
    out.error |= d.severity == Severity::Error;
    out.diagnostics.push_back(std::move(d));
  }
  std::vector<const SourceFile *> reported{&main};
  std::vector<std::string> claimed;
  if (report_headers)
    for (auto &header : unit.headers)
      if (header->path != main.path) {
        reported.push_back(header.get());
        claimed.push_back(header->path);
      }
  std::vector<Diagnostic> analysis_diagnostics;
  out.findings =
      check_lowered(syntax_pointers(unit.syntax), reported, options, &analysis_diagnostics);
  for (Diagnostic &d : analysis_diagnostics)
    out.diagnostics.push_back(std::move(d));
  if (cache && !out.error) {
    std::vector<const SourceFile *> headers(reported.begin() + 1, reported.end());
    cache->store_cpp_unit(key, main, headers, claimed, out.findings, out.diagnostics);
  }
  for (auto &header : unit.headers)
    if (std::find(reported.begin(), reported.end(), header.get()) != reported.end() &&
        header->path != main.path)
      out.headers.push_back(std::move(header));
  return out;
}

bool is_cpp_path(const std::string &path) {
  return is_cpp_source_path(path) || is_cpp_header_path(path);
}

std::vector<CheckTask>
plan_check_tasks(const std::vector<const std::vector<std::string> *> &packages) {
  std::vector<CheckTask> tasks;
  std::vector<std::pair<bool, uintmax_t>> weight; // C++, bytes
  for (size_t i = 0; i < packages.size(); ++i) {
    uintmax_t python_bytes = 0;
    bool any_python = false;
    for (size_t k = 0; k < packages[i]->size(); ++k) {
      std::error_code ec;
      uintmax_t size = fs::file_size((*packages[i])[k], ec);
      size = ec ? 0 : size;
      if (is_cpp_path((*packages[i])[k])) {
        tasks.push_back({i, k});
        weight.emplace_back(true, size);
      } else {
        python_bytes += size;
        any_python = true;
      }
    }
    if (any_python) {
      tasks.push_back({i, kPythonFiles});
      weight.emplace_back(false, python_bytes);
    }
  }
  std::vector<size_t> order(tasks.size());
  for (size_t n = 0; n < order.size(); ++n)
    order[n] = n;
  std::stable_sort(order.begin(), order.end(), [&weight](size_t a, size_t b) {
    return weight[a].first != weight[b].first ? weight[a].first
                                              : weight[a].second > weight[b].second;
  });
  std::vector<CheckTask> sorted;
  for (size_t n : order)
    sorted.push_back(tasks[n]);
  return sorted;
}

void HeaderClaims::resolve(CppUnitResult &unit) {
  std::vector<const SourceFile *> dropped;
  for (const auto &header : unit.headers)
    if (!claimed_.insert(header->path).second)
      dropped.push_back(header.get());
  if (dropped.empty())
    return;
  auto is_dropped = [&dropped](const SourceFile *file) {
    return std::find(dropped.begin(), dropped.end(), file) != dropped.end();
  };
  auto about_dropped = [&dropped](const Diagnostic &d) {
    return std::any_of(dropped.begin(), dropped.end(),
                       [&d](const SourceFile *f) { return d.path == f->display_path; });
  };
  auto &findings = unit.findings;
  findings.erase(std::remove_if(findings.begin(), findings.end(),
                                [&](const Finding &f) { return is_dropped(f.file); }),
                 findings.end());
  auto &diagnostics = unit.diagnostics;
  diagnostics.erase(std::remove_if(diagnostics.begin(), diagnostics.end(), about_dropped),
                    diagnostics.end());
  auto &headers = unit.headers;
  headers.erase(std::remove_if(headers.begin(), headers.end(),
                               [&](const auto &f) { return is_dropped(f.get()); }),
                headers.end());
}

} // namespace devlint
