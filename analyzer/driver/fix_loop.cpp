#include "driver/fix_loop.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "driver/fix_safety.h"
#include "fixes/apply_fixes.h"

namespace devlint {
namespace fs = std::filesystem;
namespace {

// What identifies a fix across passes, whose offsets move: its rule, the flagged text and what
// its edits replace with what.
std::string fix_identity(const Finding &f) {
  std::string key = f.code;
  const std::string &text = f.file->text;
  auto slice = [&](uint32_t begin, uint32_t end) {
    begin = std::min<uint32_t>(begin, text.size());
    return text.substr(begin, std::min<uint32_t>(end, text.size()) - std::min(begin, end));
  };
  key += '\0' + slice(f.range.begin, f.range.end);
  if (f.fix)
    for (const TextEdit &e : f.fix->edits)
      key += '\0' + slice(e.begin, e.end) + '\1' + e.replacement;
  return key;
}

struct FileChange {
  const SourceFile *file = nullptr; // as the pass found it
  AppliedFixes applied;
};

class FixLoop {
public:
  FixLoop(const AnalyzeTexts &analyze, const FixLoopSettings &settings)
      : analyze_(analyze), settings_(settings) {}

  FixLoopResult run() {
    out_.remaining = analyze_(nullptr, nullptr);
    // Every pass analyzes the texts read by the first one, so a file edited on disk meanwhile
    // cannot mix into the result; writing checks for such edits (fix_files.h).
    for (const auto &file : out_.remaining.files) {
      texts_.emplace(file->path, file->text);
      originals_.emplace(file->path, file->text);
    }
    for (int pass = 1;; ++pass) {
      std::map<std::string, FileChange> changes = apply_pass();
      if (changes.empty())
        break;
      SourceTexts next = texts_;
      for (auto &[path, change] : changes)
        next[path] = change.applied.text;
      CheckResult analysis = analyze_(&next, nullptr);
      if (adds_findings(out_.remaining, analysis)) {
        blame_added_findings(changes);
        continue; // this pass is not kept; the next one runs without the fixes to blame
      }
      for (auto &[path, change] : changes)
        record(path, change);
      texts_ = std::move(next);
      out_.remaining = std::move(analysis);
      if (pass >= settings_.max_passes) {
        stop_unconverged();
        break;
      }
    }
    // What is left to report: a dropped fix is no longer offered.
    for (Finding &f : out_.remaining.findings)
      if (fix_allowed(f, settings_.unsafe_fixes))
        if (auto reason = dropped_.find(fix_identity(f)); reason != dropped_.end()) {
          f.fix.reset();
          f.no_fix_reason = "its fix was withheld: " + reason->second;
        }
    for (auto &[path, record] : changed_)
      if (record.fixed != record.original)
        out_.files.push_back(std::move(record));
    std::sort(out_.files.begin(), out_.files.end(), [](const FixedFile &a, const FixedFile &b) {
      return a.display_path < b.display_path;
    });
    return std::move(out_);
  }

private:
  bool allowed(const Finding &f) const {
    return fix_allowed(f, settings_.unsafe_fixes) && !dropped_.count(fix_identity(f));
  }

  void drop(const Finding &f, const std::string &reason) {
    if (!dropped_.emplace(fix_identity(f), reason).second)
      return;
    out_.dropped.push_back({f.file->display_path, f.range.line, f.code, f.rule_name, reason});
  }

  // Applies the allowed fixes of every file once; fixes that fail the local checks (parse, bytes
  // and token classes) are dropped, the rest applied.
  std::map<std::string, FileChange> apply_pass() {
    std::map<std::string, FileChange> changes;
    std::map<std::string, std::vector<const Finding *>> by_path;
    for (const Finding &f : out_.remaining.findings)
      if (allowed(f))
        by_path[f.file->path].push_back(&f);
    auto allowed_here = [this](const Finding &f) { return allowed(f); };
    for (auto &[path, findings] : by_path) {
      const SourceFile &file = *findings.front()->file;
      const bool python = file.language == Language::Python;
      for (;;) {
        AppliedFixes applied = apply_fixes(file.text, findings, allowed_here);
        if (applied.text == file.text)
          break;
        auto problem = fix_pass_problem(file.text, applied.text, applied.edits, python);
        if (!problem) {
          changes[path] = {&file, std::move(applied)};
          break;
        }
        // Which fixes are at fault: each one alone. If none is, they are only wrong together.
        bool blamed = false;
        for (const Finding *f : applied.applied_findings) {
          AppliedFixes alone = apply_fixes(file.text, {f}, allowed_here);
          if (auto own = fix_pass_problem(file.text, alone.text, alone.edits, python)) {
            drop(*f, *own);
            blamed = true;
          }
        }
        if (!blamed)
          for (const Finding *f : applied.applied_findings)
            drop(*f, *problem + ", together with the other fixes of its pass");
      }
    }
    return changes;
  }

  // The (file, rule) pairs with more findings after the pass than before it. Counted, not
  // matched by position: a fix may move code (hoisting, merged casts), and a finding it moves
  // is not a new one.
  static std::vector<const Finding *> added_findings(const CheckResult &before,
                                                     const CheckResult &after,
                                                     const std::string *only_path = nullptr) {
    std::map<std::pair<std::string, std::string>, long> balance;
    for (const Finding &f : before.findings)
      if (!only_path || f.file->path == *only_path)
        --balance[{f.file->path, f.code}];
    std::vector<const Finding *> added;
    for (const Finding &f : after.findings)
      if ((!only_path || f.file->path == *only_path) && ++balance[{f.file->path, f.code}] > 0)
        added.push_back(&f);
    return added;
  }

  static bool adds_findings(const CheckResult &before, const CheckResult &after) {
    return !added_findings(before, after).empty();
  }

  // A pass added a finding: try each of its fixes alone (analyzing only that file's package)
  // and drop the ones that add one.
  void blame_added_findings(const std::map<std::string, FileChange> &changes) {
    bool blamed = false;
    auto allowed_here = [this](const Finding &f) { return allowed(f); };
    for (const auto &[path, change] : changes) {
      CheckResult before = analyze_(&texts_, &path);
      for (const Finding *f : change.applied.applied_findings) {
        SourceTexts texts = texts_;
        texts[path] = apply_fixes(change.file->text, {f}, allowed_here).text;
        CheckResult analysis = analyze_(&texts, &path);
        for (const auto &[other, unused] : changes) {
          auto added = added_findings(before, analysis, &other);
          if (added.empty())
            continue;
          const Finding &first = *added.front();
          drop(*f, "it would add a finding: " + first.code + " at " + first.file->display_path +
                       ":" + std::to_string(first.range.line));
          blamed = true;
          break;
        }
      }
    }
    if (!blamed)
      for (const auto &[path, change] : changes)
        for (const Finding *f : change.applied.applied_findings)
          drop(*f, "together with the other fixes of its pass, it would add a finding");
  }

  void record(const std::string &path, const FileChange &change) {
    FixedFile &record = changed_[path];
    if (record.path.empty()) {
      record.path = path;
      record.display_path = change.file->display_path;
      record.original = originals_[path];
    }
    for (const Finding *f : change.applied.applied_findings)
      ++record.fixes_by_code[f->code];
    record.fixes += change.applied.applied;
    out_.fixes_applied += change.applied.applied;
    record.fixed = change.applied.text;
  }

  // The pass limit was reached with fixes still to apply: those fixes do not converge. Their
  // files go back to what was read, so a second run sees the same starting point.
  void stop_unconverged() {
    std::set<std::string> reverted;
    for (const Finding &f : out_.remaining.findings)
      if (allowed(f)) {
        reverted.insert(f.file->path);
        drop(f, "fixes were still changing the file after " + std::to_string(settings_.max_passes) +
                    " passes");
      }
    if (reverted.empty())
      return;
    out_.converged = false;
    for (const std::string &path : reverted) {
      texts_[path] = originals_[path];
      if (auto it = changed_.find(path); it != changed_.end()) {
        out_.fixes_applied -= it->second.fixes;
        changed_.erase(it);
      }
    }
    out_.remaining = analyze_(&texts_, nullptr);
  }

  const AnalyzeTexts &analyze_;
  FixLoopSettings settings_;
  FixLoopResult out_;
  SourceTexts texts_, originals_;
  std::map<std::string, FixedFile> changed_;
  std::map<std::string, std::string> dropped_; // fix identity -> why
};

} // namespace

bool fix_allowed(const Finding &finding, bool unsafe_fixes) {
  if (!finding.fix || finding.fix->edits.empty())
    return false;
  return finding.fix->applicability == Applicability::Safe ||
         (unsafe_fixes && finding.fix->applicability == Applicability::Unsafe);
}

FixLoopResult fix_until_stable(const AnalyzeTexts &analyze, const FixLoopSettings &settings) {
  return FixLoop(analyze, settings).run();
}

FixLoopResult fix_until_stable(const std::vector<std::string> &paths, const CheckOptions &options,
                               DirectoryOptionsSource *per_directory,
                               const FixLoopSettings &settings) {
  AnalyzeTexts analyze = [&](const SourceTexts *texts, const std::string *only) {
    if (!only)
      return check_paths(paths, options, per_directory, texts);
    // Just the package of `only`: its directory, or the files named in it.
    fs::path directory = fs::path(*only).parent_path();
    std::vector<std::string> scoped;
    for (const std::string &given : paths) {
      fs::path p = fs::path(given).lexically_normal();
      std::error_code ec;
      if (fs::is_directory(p, ec))
        scoped.push_back(directory.string());
      else if (p.parent_path() == directory)
        scoped.push_back(p.string());
    }
    std::sort(scoped.begin(), scoped.end());
    scoped.erase(std::unique(scoped.begin(), scoped.end()), scoped.end());
    return check_paths(scoped, options, per_directory, texts);
  };
  return fix_until_stable(analyze, settings);
}

} // namespace devlint
