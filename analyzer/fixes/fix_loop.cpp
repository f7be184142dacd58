#include "fixes/fix_loop.h"

#include <algorithm>
#include <set>

#include "fixes/apply_fixes.h"
#include "frontend/cpp/cpp_frontend.h"
#include "frontend/python/python_frontend.h"

namespace devlint {
namespace {

size_t syntax_error_count(const std::string &path, const std::string &text) {
  // C++ fixes are checked against the compiler in the test suite; tree-sitter cannot judge them.
  if (is_cpp_source_path(path) || is_cpp_header_path(path))
    return 0;
  SourceFile file;
  file.path = path;
  file.text = text;
  file.index_lines();
  return lower_python(file)->syntax_errors.size();
}

bool any_fix_left(const CheckResult &result, bool unsafe_fixes,
                  const std::set<std::string> &frozen) {
  return std::any_of(result.findings.begin(), result.findings.end(), [&](const Finding &f) {
    return fix_allowed(f, unsafe_fixes) && !frozen.count(f.file->path);
  });
}

} // namespace

bool fix_allowed(const Finding &finding, bool unsafe_fixes) {
  if (!finding.fix || finding.fix->edits.empty())
    return false;
  return finding.fix->applicability == Applicability::Safe ||
         (unsafe_fixes && finding.fix->applicability == Applicability::Unsafe);
}

FixLoopResult fix_until_stable(const std::vector<std::string> &paths, const CheckOptions &options,
                               DirectoryOptionsSource *per_directory,
                               const FixLoopSettings &settings) {
  FixLoopResult out;
  out.remaining = check_paths(paths, options, per_directory);
  // Every pass analyzes the texts read by the first one, so a file edited on disk meanwhile
  // cannot mix into the result; writing checks for such edits (fix_files.h).
  SourceTexts texts;
  for (const auto &file : out.remaining.files)
    texts.emplace(file->path, file->text);
  std::map<std::string, FixedFile> changed;
  std::set<std::string> frozen; // files whose fixes would break the syntax
  auto allowed = [&](const Finding &f) { return fix_allowed(f, settings.unsafe_fixes); };

  for (int pass = 1;; ++pass) {
    std::map<std::string, std::pair<const SourceFile *, std::vector<const Finding *>>> by_path;
    for (const Finding &f : out.remaining.findings)
      if (allowed(f) && !frozen.count(f.file->path)) {
        auto &entry = by_path[f.file->path];
        entry.first = f.file;
        entry.second.push_back(&f);
      }
    bool changed_any = false;
    for (auto &[path, entry] : by_path) {
      const SourceFile &file = *entry.first;
      AppliedFixes applied = apply_fixes(file.text, entry.second, allowed);
      if (applied.text == file.text)
        continue;
      // A fix must never make the file worse to parse; keep the file as it is if one would.
      if (syntax_error_count(path, applied.text) > syntax_error_count(path, file.text)) {
        frozen.insert(path);
        out.reverted.push_back(file.display_path);
        continue;
      }
      FixedFile &record = changed[path];
      if (record.path.empty()) {
        record.path = path;
        record.display_path = file.display_path;
        record.original = file.text;
      }
      for (const Finding *f : applied.applied_findings)
        ++record.fixes_by_code[f->code];
      record.fixes += applied.applied;
      out.fixes_applied += applied.applied;
      record.fixed = applied.text;
      texts[path] = std::move(applied.text);
      changed_any = true;
    }
    if (!changed_any)
      break;
    out.remaining = check_paths(paths, options, per_directory, &texts);
    if (pass == settings.max_passes) {
      out.converged = !any_fix_left(out.remaining, settings.unsafe_fixes, frozen);
      break;
    }
  }
  for (auto &[path, record] : changed)
    if (record.fixed != record.original)
      out.files.push_back(std::move(record));
  std::sort(out.files.begin(), out.files.end(),
            [](const FixedFile &a, const FixedFile &b) { return a.display_path < b.display_path; });
  return out;
}

} // namespace devlint
