#include "findings/suppressions.h"

#include <algorithm>
#include <cctype>
#include <regex>

#include "rules/rule.h"

namespace devlint {
namespace {

constexpr std::string_view kUnusedSuppressionCode = "DL900";

struct Comment {
  uint32_t begin = 0; // byte offset of `#` or `//`
  uint32_t end = 0;   // end of line
  bool own_line = false;
};

bool is_cpp_path(const std::string &path) {
  static const char *const extensions[] = {".cpp", ".cc", ".cxx", ".c",  ".h",
                                           ".hpp", ".hh", ".cu",  ".cuh"};
  for (const char *ext : extensions) {
    std::string_view e(ext);
    if (path.size() >= e.size() && path.compare(path.size() - e.size(), e.size(), e) == 0)
      return true;
  }
  return false;
}

bool only_space_before(const std::string &text, uint32_t pos) {
  while (pos > 0 && text[pos - 1] != '\n') {
    if (text[pos - 1] != ' ' && text[pos - 1] != '\t')
      return false;
    --pos;
  }
  return true;
}

uint32_t line_end(const std::string &text, uint32_t pos) {
  size_t nl = text.find('\n', pos);
  uint32_t end = nl == std::string::npos ? static_cast<uint32_t>(text.size()) : uint32_t(nl);
  if (end > pos && text[end - 1] == '\r')
    --end;
  return end;
}

// Comments outside string literals: a small lexer is enough, since a `# noqa` inside a string
// must not count.
std::vector<Comment> python_comments(const std::string &text) {
  std::vector<Comment> out;
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (c == '#') {
      uint32_t begin = static_cast<uint32_t>(i);
      uint32_t end = line_end(text, begin);
      out.push_back({begin, end, only_space_before(text, begin)});
      i = end;
    } else if (c == '"' || c == '\'') {
      bool triple = text.compare(i, 3, std::string(3, c)) == 0;
      size_t quote_len = triple ? 3 : 1;
      i += quote_len;
      while (i < text.size()) {
        if (text[i] == '\\') {
          i += 2;
        } else if (text.compare(i, quote_len, std::string(quote_len, c)) == 0) {
          i += quote_len;
          break;
        } else if (!triple && text[i] == '\n') {
          break; // unterminated: the parser reports it; stop at the line end
        } else {
          ++i;
        }
      }
    } else {
      ++i;
    }
  }
  return out;
}

std::vector<Comment> cpp_comments(const std::string &text) {
  std::vector<Comment> out;
  size_t i = 0;
  while (i < text.size()) {
    if (text.compare(i, 2, "//") == 0) {
      uint32_t begin = static_cast<uint32_t>(i);
      uint32_t end = line_end(text, begin);
      out.push_back({begin, end, only_space_before(text, begin)});
      i = end;
    } else if (text.compare(i, 2, "/*") == 0) {
      size_t close = text.find("*/", i + 2);
      i = close == std::string::npos ? text.size() : close + 2;
    } else if (text[i] == '"' || text[i] == '\'') {
      char quote = text[i++];
      while (i < text.size() && text[i] != quote && text[i] != '\n')
        i += text[i] == '\\' ? 2 : 1;
      ++i;
    } else {
      ++i;
    }
  }
  return out;
}

std::vector<std::string> split_codes(const std::string &list) {
  std::vector<std::string> codes;
  std::string current;
  for (char c : list + ",") {
    if (c == ',' || std::isspace(static_cast<unsigned char>(c))) {
      if (!current.empty())
        codes.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  return codes;
}

SourceRange range_of(const SourceFile &file, uint32_t begin, uint32_t end) {
  auto position = [&](uint32_t offset, uint32_t &line, uint32_t &column) {
    auto it = std::upper_bound(file.line_starts.begin(), file.line_starts.end(), offset);
    line = static_cast<uint32_t>(it - file.line_starts.begin());
    column = offset - file.line_starts[line - 1] + 1;
  };
  SourceRange r;
  r.begin = begin;
  r.end = end;
  position(begin, r.line, r.column);
  position(end, r.end_line, r.end_column);
  return r;
}

// Reads the directives in one comment. `#` comments may hold several (`# type: ignore # noqa`).
void parse_comment(const SourceFile &file, const Comment &comment, bool cpp,
                   std::vector<Suppression> &out) {
  std::string body = file.text.substr(comment.begin, comment.end - comment.begin);
  uint32_t line = range_of(file, comment.begin, comment.begin).line;
  auto add = [&](Suppression::Scope scope, size_t at, size_t length, std::vector<std::string> codes,
                 bool shared) {
    Suppression s;
    s.scope = scope;
    s.line = scope == Suppression::Scope::NextLine ? line + 1 : line;
    s.comment = range_of(file, comment.begin + static_cast<uint32_t>(at),
                         comment.begin + static_cast<uint32_t>(at + length));
    s.codes = std::move(codes);
    s.shared_with_other_tools = shared;
    out.push_back(std::move(s));
  };

  // `devlint: ignore[...]`, `devlint: ignore-file[...]`, `devlint: noqa[: ...]` (file-level).
  static const std::regex devlint_directive(
      R"((?:#|//)\s*devlint:\s*(ignore-file|ignore|noqa)(?:\[([^\]]*)\]|:\s*([\w\-]+(?:[,\s]+[\w\-]+)*))?)");
  // flake8/Ruff-style `# noqa` and `# noqa: CODE, CODE`.
  static const std::regex noqa(
      R"(#\s*(?:noqa|NOQA)(?::\s*([A-Za-z]+[0-9]+(?:[,\s]+[A-Za-z]+[0-9]+)*))?)");
  // clang-tidy-style `NOLINT`, `NOLINT(check, ...)`, `NOLINTNEXTLINE(...)`.
  static const std::regex nolint(R"(NOLINT(NEXTLINE|BEGIN|END)?(?:\(([^)]*)\))?)");

  bool file_level_allowed = comment.own_line;
  for (std::sregex_iterator it(body.begin(), body.end(), devlint_directive), end; it != end; ++it) {
    const std::smatch &m = *it;
    std::string kind = m[1];
    std::string list = m[2].matched ? m[2].str() : m[3].str();
    bool file_level = kind != "ignore";
    if (file_level && !file_level_allowed)
      continue; // a file-level directive after code is most likely a typo for the line form
    add(file_level ? Suppression::Scope::File : Suppression::Scope::Line, m.position(0),
        m.length(0), split_codes(list), false);
  }
  if (!cpp) {
    for (std::sregex_iterator it(body.begin(), body.end(), noqa), end; it != end; ++it) {
      const std::smatch &m = *it;
      add(Suppression::Scope::Line, m.position(0), m.length(0), split_codes(m[1].str()),
          !m[1].matched);
    }
    return;
  }
  for (std::sregex_iterator it(body.begin(), body.end(), nolint), end; it != end; ++it) {
    const std::smatch &m = *it;
    // NOLINTEND closes the last NOLINTBEGIN with the same checks (parse_suppressions pairs
    // them); it silences nothing itself.
    if (m[1].matched && m[1].str() == "END") {
      std::vector<std::string> codes;
      bool all = !m[2].matched;
      for (const std::string &check : split_codes(m[2].str())) {
        all |= check == "*" || check == "devlint-*";
        if (check.rfind("devlint-", 0) == 0 && check != "devlint-*")
          codes.push_back(check.substr(8));
      }
      if (!all && codes.empty())
        continue; // another tool's range
      Suppression close;
      close.scope = Suppression::Scope::Range;
      close.closes_range = true;
      close.line = line;
      close.codes = all ? std::vector<std::string>{} : codes;
      out.push_back(std::move(close));
      continue;
    }
    auto scope = !m[1].matched           ? Suppression::Scope::Line
                 : m[1].str() == "BEGIN" ? Suppression::Scope::Range
                                         : Suppression::Scope::NextLine;
    if (!m[2].matched) {
      add(scope, m.position(0), m.length(0), {}, true);
      continue;
    }
    // Only entries naming devlint (`devlint-DL001`, `devlint-*`) concern us.
    std::vector<std::string> codes;
    bool all = false;
    for (const std::string &check : split_codes(m[2].str())) {
      if (check == "*" || check == "devlint-*")
        all = true;
      else if (check.rfind("devlint-", 0) == 0)
        codes.push_back(check.substr(8));
    }
    if (all)
      add(scope, m.position(0), m.length(0), {}, true);
    else if (!codes.empty())
      add(scope, m.position(0), m.length(0), std::move(codes), false);
  }
}

bool names_rule(const std::string &code_or_name, const Finding &f) {
  return code_or_name == f.code || code_or_name == f.rule_name;
}

bool covers(const Suppression &s, const Finding &f) {
  switch (s.scope) {
  case Suppression::Scope::File:
    return true;
  case Suppression::Scope::Line:
  case Suppression::Scope::NextLine:
    return s.line >= f.range.line && s.line <= std::max(f.range.line, f.range.end_line);
  case Suppression::Scope::Range:
    return f.range.line >= s.line && f.range.line <= s.end_line;
  }
  return false;
}

// Deletes a directive and the blanks before it; a comment left empty goes with its line.
Fix removal_fix(const SourceFile &file, const Suppression &s) {
  uint32_t begin = s.comment.begin;
  while (begin > 0 && (file.text[begin - 1] == ' ' || file.text[begin - 1] == '\t'))
    --begin;
  uint32_t end = s.comment.end;
  uint32_t line_begin = file.line_starts[s.comment.line - 1];
  uint32_t line_stop = line_begin + static_cast<uint32_t>(file.line_text(s.comment.line).size());
  bool rest_blank = file.text.find_first_not_of(" \t", end) >= line_stop;
  if (begin == line_begin && rest_blank) // the directive was the whole line: remove the line
    end = line_stop < file.text.size() ? static_cast<uint32_t>(file.text.find('\n', line_stop) + 1)
                                       : line_stop;
  Fix fix;
  fix.applicability = Applicability::Safe;
  fix.title = "Remove the unused suppression";
  fix.edits.push_back({begin, end, ""});
  return fix;
}

Finding unused_finding(const SourceFile &file, const Suppression &s, const std::string &detail) {
  Finding f;
  f.code = std::string(kUnusedSuppressionCode);
  if (const Rule *rule = find_rule(kUnusedSuppressionCode))
    f.rule_name = std::string(rule->info().name);
  f.message = "Unused suppression " + detail;
  f.file = &file;
  f.range = s.comment;
  f.why = "no finding of these rules starts on the lines this comment covers";
  f.fix = removal_fix(file, s);
  return f;
}

} // namespace

std::vector<Suppression> parse_suppressions(const SourceFile &file) {
  bool cpp = is_cpp_path(file.path);
  // Cheap pre-check: most files have no directive at all.
  if (file.text.find(cpp ? "NOLINT" : "noqa") == std::string::npos &&
      file.text.find("NOQA") == std::string::npos &&
      file.text.find("devlint:") == std::string::npos)
    return {};
  std::vector<Suppression> out;
  for (const Comment &c : cpp ? cpp_comments(file.text) : python_comments(file.text))
    parse_comment(file, c, cpp, out);
  if (!cpp)
    return out;
  // Pair each NOLINTEND with the last open NOLINTBEGIN naming the same checks; a NOLINTBEGIN
  // left open runs to the end of the file.
  std::vector<Suppression> paired;
  std::vector<size_t> open;
  for (Suppression &s : out) {
    if (s.closes_range) {
      for (size_t k = open.size(); k-- > 0;)
        if (paired[open[k]].codes == s.codes) {
          paired[open[k]].end_line = s.line;
          open.erase(open.begin() + static_cast<std::ptrdiff_t>(k));
          break;
        }
      continue;
    }
    if (s.scope == Suppression::Scope::Range) {
      s.end_line = file.line_count();
      open.push_back(paired.size());
    }
    paired.push_back(std::move(s));
  }
  return paired;
}

std::vector<Finding> apply_suppressions(std::vector<Finding> findings, const SourceFile &file,
                                        const SuppressionPolicy &policy) {
  std::vector<Suppression> suppressions = parse_suppressions(file);
  // used[i][k]: suppression i's code k silenced something (k == codes.size(): a bare directive).
  std::vector<std::vector<bool>> used(suppressions.size());
  for (size_t i = 0; i < suppressions.size(); ++i)
    used[i].assign(suppressions[i].codes.size() + 1, false);

  std::vector<Finding> kept;
  for (Finding &f : findings) {
    if (!policy.selection.enabled(f.code))
      continue;
    bool suppressed = false;
    for (size_t i = 0; i < suppressions.size(); ++i) {
      const Suppression &s = suppressions[i];
      if (!covers(s, f))
        continue;
      if (s.codes.empty()) {
        used[i].back() = suppressed = true;
        continue;
      }
      for (size_t k = 0; k < s.codes.size(); ++k)
        if (names_rule(s.codes[k], f))
          used[i][k] = suppressed = true;
    }
    if (!suppressed)
      kept.push_back(std::move(f));
  }

  RuleSelection unused_selection{{}, policy.selection.ignore};
  if (!policy.report_unused || !unused_selection.enabled(kUnusedSuppressionCode))
    return kept;
  for (size_t i = 0; i < suppressions.size(); ++i) {
    const Suppression &s = suppressions[i];
    if (s.codes.empty()) {
      if (!used[i].back() && !s.shared_with_other_tools)
        kept.push_back(unused_finding(file, s, "(nothing to suppress here)"));
      continue;
    }
    std::vector<std::string> unused, unknown, disabled;
    for (size_t k = 0; k < s.codes.size(); ++k) {
      const std::string &code = s.codes[k];
      const Rule *rule = find_rule(code);
      bool ours = rule || code.rfind("DL", 0) == 0;
      if (!ours || used[i][k])
        continue; // another tool's code (`# noqa: E501`) is not ours to judge
      if (!rule)
        unknown.push_back(code);
      else if (!policy.selection.enabled(rule->info().code))
        disabled.push_back(code);
      else
        unused.push_back(code);
    }
    auto join = [](const std::vector<std::string> &codes) {
      std::string list;
      for (const std::string &c : codes)
        list += (list.empty() ? "`" : ", `") + c + "`";
      return list;
    };
    std::vector<std::string> parts;
    if (!unused.empty())
      parts.push_back("unused: " + join(unused));
    if (!disabled.empty())
      parts.push_back("not enabled: " + join(disabled));
    if (!unknown.empty())
      parts.push_back("unknown: " + join(unknown));
    if (parts.empty())
      continue;
    std::string detail = "(";
    for (size_t p = 0; p < parts.size(); ++p)
      detail += (p ? "; " : "") + parts[p];
    Finding f = unused_finding(file, s, detail + ")");
    // Only remove the whole directive when none of its codes is still doing something.
    size_t ours_used = 0;
    for (size_t k = 0; k < s.codes.size(); ++k)
      ours_used += used[i][k] || !(find_rule(s.codes[k]) || s.codes[k].rfind("DL", 0) == 0);
    if (ours_used > 0) {
      f.fix.reset();
      f.no_fix_reason = "other codes in this directive are still in use";
    }
    kept.push_back(std::move(f));
  }
  return kept;
}

} // namespace devlint
