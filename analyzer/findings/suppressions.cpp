#include "findings/suppressions.h"

#include <algorithm>
#include <cctype>

#include "model/text.h"
#include "rules/rule.h"
#include "rules/unused_suppression.h"

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

// `DL008`: a devlint rule code, which no clang-tidy check name looks like.
bool is_devlint_code(const std::string &check) {
  return check.size() == 5 && check.compare(0, 2, "DL") == 0 &&
         check.find_first_not_of("0123456789", 2) == std::string::npos;
}

bool only_space_before(const std::string &text, uint32_t pos) {
  while (pos > 0 && text[pos - 1] != '\n' && text[pos - 1] != '\r') {
    if (text[pos - 1] != ' ' && text[pos - 1] != '\t')
      return false;
    --pos;
  }
  return true;
}

// Lines end with LF, CRLF or a lone CR (old Mac files), as SourceFile::index_lines counts them.
uint32_t line_end(const std::string &text, uint32_t pos) {
  size_t end = text.find_first_of("\r\n", pos);
  return end == std::string::npos ? static_cast<uint32_t>(text.size()) : static_cast<uint32_t>(end);
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
        } else if (!triple && (text[i] == '\n' || text[i] == '\r')) {
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
      // `/* NOLINT(devlint-DL008) */` is read as clang-tidy reads it, on the line it starts.
      size_t close = text.find("*/", i + 2);
      uint32_t begin = static_cast<uint32_t>(i);
      i = close == std::string::npos ? text.size() : close + 2;
      out.push_back({begin, static_cast<uint32_t>(i), only_space_before(text, begin)});
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

SourceRange range_of(const SourceFile &file, uint32_t begin, uint32_t end) {
  return file.range_of(begin, end);
}

// The directives are read by hand rather than with std::regex: its backtracking recursion
// overflows the stack on a comment with thousands of codes. Every scan below is linear.
bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\f' || c == '\v'; }
bool is_word(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; }
bool is_separator(char c) { return c == ',' || is_blank(c); }

size_t skip_blanks(std::string_view s, size_t i) {
  while (i < s.size() && is_blank(s[i]))
    ++i;
  return i;
}

bool starts_with_at(std::string_view s, size_t i, std::string_view prefix) {
  return s.compare(i, prefix.size(), prefix) == 0;
}

// `CODE[,\s]+CODE...` from `i`, where a code is what `code_end` accepts. Returns the end of the
// last code (i itself when there is none) and appends the codes.
template <class CodeEnd>
size_t scan_codes(std::string_view s, size_t i, CodeEnd code_end, std::vector<std::string> &codes) {
  size_t last = i;
  size_t at = i;
  while (true) {
    size_t code_begin = at;
    while (code_begin < s.size() && is_separator(s[code_begin]))
      ++code_begin;
    if (!codes.empty() && code_begin == at)
      break; // codes must be separated
    size_t stop = code_end(s, code_begin);
    if (stop == code_begin)
      break;
    codes.emplace_back(s.substr(code_begin, stop - code_begin));
    last = at = stop;
  }
  return last;
}

size_t word_code_end(std::string_view s, size_t i) {
  while (i < s.size() && is_word(s[i]))
    ++i;
  return i;
}

// flake8/Ruff codes: letters then digits (`E501`, `DL001`).
size_t flake8_code_end(std::string_view s, size_t i) {
  size_t letters = i;
  while (letters < s.size() && std::isalpha(static_cast<unsigned char>(s[letters])))
    ++letters;
  size_t digits = letters;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits])))
    ++digits;
  return letters > i && digits > letters ? digits : i;
}

// Reads the directives in one comment. `#` comments may hold several (`# type: ignore # noqa`).
// A malformed one (`# noqa:` without codes, an unterminated `ignore[`) silences nothing and is
// reported.
void parse_comment(const SourceFile &file, const Comment &comment, bool cpp,
                   std::vector<Suppression> &out) {
  std::string_view body =
      std::string_view(file.text).substr(comment.begin, comment.end - comment.begin);
  uint32_t line = range_of(file, comment.begin, comment.begin).line;
  auto add = [&](Suppression::Scope scope, size_t at, size_t length, std::vector<std::string> codes,
                 bool shared, std::string malformed = {}) {
    Suppression s;
    s.scope = scope;
    s.line = scope == Suppression::Scope::NextLine ? line + 1 : line;
    s.comment = range_of(file, comment.begin + static_cast<uint32_t>(at),
                         comment.begin + static_cast<uint32_t>(at + length));
    s.comment_begin = comment.begin;
    s.comment_end = comment.end;
    s.codes = std::move(codes);
    s.shared_with_other_tools = shared;
    s.malformed = std::move(malformed);
    out.push_back(std::move(s));
  };

  // `devlint: ignore[...]`, `devlint: ignore-file[...]`, `devlint: noqa[: ...]` (file-level).
  for (size_t at = 0; at < body.size();) {
    size_t lead = body[at] == '#' ? 1 : starts_with_at(body, at, "//") ? 2 : 0;
    if (!lead) {
      ++at;
      continue;
    }
    size_t i = skip_blanks(body, at + lead);
    if (!starts_with_at(body, i, "devlint:")) {
      at += lead;
      continue;
    }
    i = skip_blanks(body, i + 8);
    std::string_view kind = starts_with_at(body, i, "ignore-file") ? "ignore-file"
                            : starts_with_at(body, i, "ignore")    ? "ignore"
                            : starts_with_at(body, i, "noqa")      ? "noqa"
                                                                   : "";
    if (kind.empty() || (i + kind.size() < body.size() && is_word(body[i + kind.size()]) &&
                         body[i + kind.size()] != '-')) {
      at = i;
      continue;
    }
    i += kind.size();
    bool file_level = kind != "ignore";
    auto scope = file_level ? Suppression::Scope::File : Suppression::Scope::Line;
    std::vector<std::string> codes;
    std::string malformed;
    size_t end = i;
    if (i < body.size() && body[i] == '[') {
      size_t close = body.find(']', i + 1);
      if (close == std::string_view::npos) {
        malformed = "`[` without a closing `]`";
        end = body.size();
      } else {
        codes = split_codes(std::string(body.substr(i + 1, close - i - 1)));
        if (codes.empty())
          malformed = "`[]` names no rule";
        end = close + 1;
      }
    } else if (i < body.size() && body[i] == ':') {
      end = scan_codes(body, skip_blanks(body, i + 1), word_code_end, codes);
      if (codes.empty()) {
        malformed = "`:` is not followed by rule codes";
        end = i + 1;
      }
    }
    if (!file_level || comment.own_line) // file level after code: most likely a typo; ignored
      add(scope, at, end - at, std::move(codes), false, std::move(malformed));
    at = std::max(end, at + 1);
  }
  if (!cpp) {
    // flake8's file-level `# flake8: noqa` on a line of its own exempts the whole file, as Ruff
    // honours it (with codes, only those). It is flake8's, so DL900 leaves it alone.
    for (size_t at = body.find('#'); comment.own_line && at != std::string_view::npos;
         at = body.find('#', at + 1)) {
      size_t i = skip_blanks(body, at + 1);
      bool flake8 = true;
      for (char c : std::string_view("flake8:"))
        flake8 &= i < body.size() && std::tolower(static_cast<unsigned char>(body[i++])) == c;
      i = skip_blanks(body, i);
      if (!flake8 || !(starts_with_at(body, i, "noqa") || starts_with_at(body, i, "NOQA")) ||
          (i + 4 < body.size() && is_word(body[i + 4])))
        continue;
      i += 4;
      std::vector<std::string> codes;
      size_t end = i;
      if (i < body.size() && body[i] == ':')
        end = scan_codes(body, skip_blanks(body, i + 1), flake8_code_end, codes);
      add(Suppression::Scope::File, at, std::max(end, i) - at, std::move(codes), true);
    }
    // flake8/Ruff-style `# noqa` and `# noqa: CODE, CODE`.
    for (size_t at = body.find('#'); at != std::string_view::npos; at = body.find('#', at)) {
      size_t i = skip_blanks(body, at + 1);
      if (!(starts_with_at(body, i, "noqa") || starts_with_at(body, i, "NOQA")) ||
          (i + 4 < body.size() && is_word(body[i + 4]))) {
        ++at;
        continue;
      }
      i += 4;
      if (i < body.size() && body[i] == ':') {
        std::vector<std::string> codes;
        size_t end = scan_codes(body, skip_blanks(body, i + 1), flake8_code_end, codes);
        if (codes.empty())
          add(Suppression::Scope::Line, at, i + 1 - at, {}, false,
              "`# noqa:` is not followed by rule codes (write `# noqa: DL001`, or `# noqa` for "
              "every rule)");
        else
          add(Suppression::Scope::Line, at, end - at, std::move(codes), false);
        at = std::max(end, i + 1);
      } else {
        add(Suppression::Scope::Line, at, i - at, {}, true);
        at = i;
      }
    }
    return;
  }
  // clang-tidy-style `NOLINT`, `NOLINT(check, ...)`, `NOLINTNEXTLINE(...)`,
  // `NOLINTBEGIN(...)` ... `NOLINTEND(...)`.
  for (size_t at = body.find("NOLINT"); at != std::string_view::npos;
       at = body.find("NOLINT", at)) {
    size_t i = at + 6;
    bool next_line = starts_with_at(body, i, "NEXTLINE");
    bool begin = !next_line && starts_with_at(body, i, "BEGIN");
    bool end = !next_line && !begin && starts_with_at(body, i, "END");
    i += next_line ? 8 : begin ? 5 : end ? 3 : 0;
    auto scope = next_line ? Suppression::Scope::NextLine
                 : begin   ? Suppression::Scope::Range
                 : end     ? Suppression::Scope::Range
                           : Suppression::Scope::Line;
    // NOLINTEND closes the last NOLINTBEGIN with the same checks (parse_suppressions pairs
    // them); it silences nothing itself.
    auto add_end = [&](std::vector<std::string> codes) {
      Suppression close;
      close.scope = Suppression::Scope::Range;
      close.closes_range = true;
      close.line = line;
      close.codes = std::move(codes);
      out.push_back(std::move(close));
    };
    if (i >= body.size() || body[i] != '(') {
      if (end)
        add_end({});
      else
        add(scope, at, i - at, {}, true);
      at = i;
      continue;
    }
    size_t close = body.find(')', i + 1);
    if (close == std::string_view::npos) {
      add(scope, at, body.size() - at, {}, false, "`NOLINT(` without a closing `)`");
      break;
    }
    // Only entries naming devlint (`devlint-DL001`, `devlint-*`) concern us.
    std::vector<std::string> codes;
    bool all = false;
    for (const std::string &check : split_codes(std::string(body.substr(i + 1, close - i - 1)))) {
      if (check == "*" || check == "devlint-*")
        all = true;
      else if (check.rfind("devlint-", 0) == 0)
        codes.push_back(check.substr(8));
      else if (is_devlint_code(check)) // `NOLINT(DL008)`: no other tool's check is named so
        codes.push_back(check);
    }
    if (end) {
      if (all || !codes.empty()) // otherwise another tool's range
        add_end(all ? std::vector<std::string>{} : std::move(codes));
    } else if (all)
      add(scope, at, close + 1 - at, {}, true);
    else if (!codes.empty())
      add(scope, at, close + 1 - at, std::move(codes), false);
    at = close + 1;
  }
}

bool names_rule(const std::string &code_or_name, const Finding &f) {
  return code_or_name == f.code || code_or_name == f.rule_name;
}

bool covers(const Suppression &s, const Finding &f) {
  if (!s.malformed.empty())
    return false;
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
                                        const SuppressionPolicy &policy,
                                        std::vector<Diagnostic> *diagnostics) {
  std::vector<Suppression> suppressions = parse_suppressions(file);
  if (diagnostics)
    for (const Suppression &s : suppressions)
      if (!s.malformed.empty())
        diagnostics->push_back(
            {Severity::Warning, file.display_path, s.comment.line, s.comment.column,
             "malformed suppression comment, it silences nothing: " + s.malformed});
  // used[i][k]: suppression i's code k silenced something (k == codes.size(): a bare directive).
  std::vector<std::vector<bool>> used(suppressions.size());
  for (size_t i = 0; i < suppressions.size(); ++i)
    used[i].assign(suppressions[i].codes.size() + 1, false);

  std::vector<Finding> kept;
  for (Finding &f : findings) {
    if (!policy.enabled(f.code))
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

  if (!policy.report_unused || !policy.not_ignored(kUnusedSuppressionCode))
    return kept;
  for (size_t i = 0; i < suppressions.size(); ++i) {
    const Suppression &s = suppressions[i];
    if (!s.malformed.empty())
      continue; // reported above
    UnusedSuppression unused;
    unused.file = &file;
    unused.comment = {s.comment, s.comment_begin, s.comment_end};
    if (s.codes.empty()) {
      unused.bare = true;
      if (!used[i].back() && !s.shared_with_other_tools)
        kept.push_back(report_unused_suppression(unused));
      continue;
    }
    for (size_t k = 0; k < s.codes.size(); ++k) {
      const std::string &code = s.codes[k];
      const Rule *rule = find_rule(code);
      bool ours = rule || code.rfind("DL", 0) == 0;
      // Another tool's code (`# noqa: E501`) is not ours to judge, and keeps the directive.
      unused.other_codes_in_use |= used[i][k] || !ours;
      if (!ours || used[i][k])
        continue;
      if (!rule)
        unused.unknown.push_back(code);
      else if (!policy.enabled(rule->info().code))
        unused.disabled.push_back(code);
      else
        unused.unused.push_back(code);
    }
    if (unused.unused.empty() && unused.disabled.empty() && unused.unknown.empty())
      continue;
    kept.push_back(report_unused_suppression(unused));
  }
  return kept;
}

} // namespace devlint
