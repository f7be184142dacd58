#include "fixes/fix_files.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "fixes/apply_fixes.h"

namespace devlint {
namespace fs = std::filesystem;

FixOutcome fix_until_stable(const std::vector<std::string> &paths, const CheckOptions &options,
                            DirectoryOptionsSource *per_directory, const FixSettings &settings) {
  FixOutcome outcome;
  SourceTexts texts;
  std::map<std::string, FixedFile> files;
  auto allowed = [&](const Finding &f) {
    return f.fix->applicability == Applicability::Safe ||
           (settings.unsafe_fixes && f.fix->applicability == Applicability::Unsafe);
  };
  for (int pass = 0;; ++pass) {
    CheckResult result = check_paths(paths, options, per_directory, &texts);
    std::map<const SourceFile *, std::vector<const Finding *>> by_file;
    for (const Finding &f : result.findings)
      if (f.fix && allowed(f))
        by_file[f.file].push_back(&f);
    bool changed = false;
    if (pass < settings.max_passes) {
      for (auto &[source, findings] : by_file) {
        AppliedFixes applied = apply_fixes(source->text, findings, allowed);
        if (applied.text == source->text)
          continue;
        FixedFile &file = files[source->path];
        if (file.path.empty()) {
          file.path = source->path;
          file.display_path = source->display_path;
          file.original = source->text;
        }
        file.fixed = applied.text;
        for (const Finding *f : applied.applied_findings)
          ++file.fixed_codes[f->code];
        outcome.fixes_applied += applied.applied;
        texts[source->path] = applied.text;
        changed = true;
      }
    } else if (!by_file.empty()) {
      outcome.converged = false;
    }
    if (!changed) {
      outcome.remaining = std::move(result);
      break;
    }
  }
  for (auto &[path, file] : files)
    if (file.fixed != file.original)
      outcome.files.push_back(std::move(file));
  return outcome;
}

namespace {

std::vector<std::string_view> split_lines(const std::string &text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    size_t end = nl == std::string::npos ? text.size() : nl + 1;
    lines.emplace_back(text.data() + start, end - start);
    start = end;
  }
  return lines;
}

void emit_line(std::ostringstream &out, char tag, std::string_view line) {
  out << tag << line;
  if (line.empty() || line.back() != '\n')
    out << "\n\\ No newline at end of file\n";
}

} // namespace

std::string unified_diff(const FixedFile &file) {
  if (file.original == file.fixed)
    return {};
  auto a = split_lines(file.original);
  auto b = split_lines(file.fixed);
  // Fixes never add or remove line breaks, so lines correspond one to one; anything else falls
  // back to a single hunk over the whole file.
  std::vector<std::pair<size_t, size_t>> hunks; // [first, last] changed line ranges
  if (a.size() == b.size()) {
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i] == b[i])
        continue;
      if (!hunks.empty() && i <= hunks.back().second + 7)
        hunks.back().second = i;
      else
        hunks.emplace_back(i, i);
    }
  } else {
    hunks.emplace_back(0, std::max(a.size(), b.size()) - 1);
  }
  std::ostringstream out;
  out << "--- a/" << file.display_path << "\n+++ b/" << file.display_path << "\n";
  for (const auto &[first, last] : hunks) {
    size_t context = 3;
    size_t begin = first > context ? first - context : 0;
    size_t end_a = std::min(a.size(), last + context + 1);
    size_t end_b = std::min(b.size(), last + context + 1);
    if (a.size() != b.size()) {
      end_a = a.size();
      end_b = b.size();
    }
    out << "@@ -" << (end_a > begin ? begin + 1 : begin) << "," << end_a - begin << " +"
        << (end_b > begin ? begin + 1 : begin) << "," << end_b - begin << " @@\n";
    if (a.size() == b.size()) {
      for (size_t i = begin; i < end_a; ++i) {
        if (a[i] == b[i]) {
          emit_line(out, ' ', a[i]);
        } else {
          // Consecutive changed lines: all removals, then all additions.
          size_t j = i;
          while (j < end_a && a[j] != b[j])
            ++j;
          for (size_t k = i; k < j; ++k)
            emit_line(out, '-', a[k]);
          for (size_t k = i; k < j; ++k)
            emit_line(out, '+', b[k]);
          i = j - 1;
        }
      }
    } else {
      for (size_t i = begin; i < end_a; ++i)
        emit_line(out, '-', a[i]);
      for (size_t i = begin; i < end_b; ++i)
        emit_line(out, '+', b[i]);
    }
  }
  return out.str();
}

std::string write_fixed_file(const FixedFile &file) {
  std::error_code ec;
  // A symlink is followed: the file it points to is the one the user's code imports.
  fs::path target = fs::canonical(file.path, ec);
  if (ec)
    return file.display_path + ": cannot resolve path: " + ec.message();
  std::ifstream in(target, std::ios::binary);
  if (!in)
    return file.display_path + ": cannot read the file again before writing";
  std::string current((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (current != file.original)
    return file.display_path + ": changed on disk since it was read; not overwritten";
  struct stat info {};
  if (stat(target.c_str(), &info) != 0)
    return file.display_path + ": cannot stat: " + std::strerror(errno);
  // Checked on the mode bits too: root may write anything, but a read-only file says "leave me".
  if ((info.st_mode & 0222) == 0 || access(target.c_str(), W_OK) != 0)
    return file.display_path + ": read-only; not fixed";
  std::string temp =
      (target.parent_path() / ("." + target.filename().string() + ".devlint-XXXXXX")).string();
  std::vector<char> name(temp.begin(), temp.end());
  name.push_back('\0');
  int fd = mkstemp(name.data());
  if (fd < 0)
    return file.display_path +
           ": cannot create a temporary file next to it: " + std::strerror(errno);
  auto fail = [&](const std::string &what) {
    int saved = errno;
    close(fd);
    unlink(name.data());
    return file.display_path + ": " + what + ": " + std::strerror(saved);
  };
  const char *data = file.fixed.data();
  size_t left = file.fixed.size();
  while (left > 0) {
    ssize_t n = write(fd, data, left);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return fail("write failed");
    }
    data += n;
    left -= static_cast<size_t>(n);
  }
  if (fchmod(fd, info.st_mode & 07777) != 0)
    return fail("cannot keep the file mode");
  if (fsync(fd) != 0)
    return fail("fsync failed");
  if (close(fd) != 0) {
    unlink(name.data());
    return file.display_path + ": close failed: " + std::strerror(errno);
  }
  if (rename(name.data(), target.c_str()) != 0) {
    int saved = errno;
    unlink(name.data());
    return file.display_path + ": rename failed: " + std::strerror(saved);
  }
  return {};
}

} // namespace devlint
