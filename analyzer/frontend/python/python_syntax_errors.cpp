#include "frontend/python/python_syntax_errors.h"

#include <cctype>
#include <cstring>
#include <vector>

#include "frontend/python/python_lowering.h"
#include "frontend/python/python_tokens.h"

namespace devlint {
namespace {

bool is(TSNode n, const char *type) { return std::strcmp(ts_node_type(n), type) == 0; }

std::string_view text_of(TSNode n, std::string_view text) {
  uint32_t begin = std::min<uint32_t>(ts_node_start_byte(n), static_cast<uint32_t>(text.size()));
  uint32_t end = std::min<uint32_t>(ts_node_end_byte(n), static_cast<uint32_t>(text.size()));
  return text.substr(begin, end > begin ? end - begin : 0);
}

bool has_anonymous_child(TSNode n, const char *type) {
  for (uint32_t i = 0, count = ts_node_child_count(n); i < count; ++i) {
    TSNode child = ts_node_child(n, i);
    if (!ts_node_is_named(child) && is(child, type))
      return true;
  }
  return false;
}

// What an ERROR node starts with, for "unexpected `...`": its first line, shortened.
std::string unexpected_text(std::string_view error) {
  size_t start = 0;
  while (start < error.size() && std::isspace(static_cast<unsigned char>(error[start])))
    ++start;
  std::string_view rest = error.substr(start);
  rest = rest.substr(0, rest.find('\n'));
  constexpr size_t kMaxShown = 30;
  std::string shown(rest.substr(0, kMaxShown));
  if (rest.size() > kMaxShown)
    shown += "...";
  return shown;
}

// The first bracket an ERROR node's text opens and never closes (strings and comments aside),
// or 0: what Python reports as "`(` was never closed".
char unclosed_bracket(std::string_view error) {
  std::string open;
  std::vector<ByteClass> classes = lex_python_fragment(error);
  for (size_t i = 0; i < error.size(); ++i) {
    char c = error[i];
    if (classes[i] != ByteClass::Code)
      continue;
    if (c == '(' || c == '[' || c == '{') {
      open += c;
    } else if ((c == ')' || c == ']' || c == '}') && !open.empty()) {
      open.pop_back();
    }
  }
  return open.empty() ? 0 : open.front();
}

// Python 2 integer literals Python 3 rejects: a long (`10L`) or an old octal (`0777`).
const char *python2_integer(std::string_view literal) {
  if (!literal.empty() && (literal.back() == 'l' || literal.back() == 'L'))
    return "Python 2 long integer literal: Python 3 writes it without the `L`";
  if (literal.size() > 1 && literal[0] == '0' &&
      literal.find_first_not_of("0123456789") == std::string_view::npos &&
      literal.find_first_not_of('0') != std::string_view::npos)
    return "Python 2 octal literal: Python 3 writes `0o777`";
  return nullptr;
}

// The message for one node, or "" when the node is fine.
std::string error_at(TSNode n, std::string_view text) {
  if (ts_node_is_missing(n)) {
    const char *type = ts_node_type(n);
    return ts_node_is_named(n) ? std::string("expected ") + type + " here"
                               : std::string("expected `") + type + "`";
  }
  if (is(n, "ERROR")) {
    std::string_view error = text_of(n, text);
    if (error.find('`') != std::string_view::npos)
      return "Python 2 backticks: Python 3 calls repr(...)";
    std::string shown = unexpected_text(error);
    std::string message = shown.empty() ? "invalid syntax" : "unexpected `" + shown + "`";
    if (char open = unclosed_bracket(error))
      message += std::string(": `") + open + "` was never closed";
    return message;
  }
  // tree-sitter-python's scanner lexes Python 2's `x` (repr) as a string.
  if (is(n, "string_start") && text_of(n, text).find('`') != std::string_view::npos)
    return "Python 2 backticks: Python 3 calls repr(...)";
  if (is(n, "print_statement"))
    return "Python 2 `print` statement: Python 3 calls print(...)";
  if (is(n, "exec_statement"))
    return "Python 2 `exec` statement: Python 3 calls exec(...)";
  if (is(n, "comparison_operator") && has_anonymous_child(n, "<>"))
    return "Python 2 `<>` operator: Python 3 writes `!=`";
  if (is(n, "except_clause") && has_anonymous_child(n, ","))
    return "Python 2 `except X, e:`: Python 3 writes `except X as e:`";
  if (is(n, "raise_statement")) {
    for (uint32_t i = 0, count = ts_node_named_child_count(n); i < count; ++i)
      if (is(ts_node_named_child(n, i), "expression_list"))
        return "Python 2 `raise E, value`: Python 3 writes `raise E(value)`";
  }
  if (is(n, "integer"))
    if (const char *python2 = python2_integer(text_of(n, text)))
      return python2;
  return "";
}

// Keeps at most kMaxSyntaxErrorsPerFile and says how many more there were.
void add_error(std::vector<SyntaxErrorNote> &errors, size_t &total, TSNode node,
               std::string message) {
  if (++total <= kMaxSyntaxErrorsPerFile)
    errors.push_back({node_range(node), std::move(message)});
}

void finish(std::vector<SyntaxErrorNote> &errors, size_t total) {
  if (total > errors.size())
    errors.back().message +=
        " (and " + std::to_string(total - errors.size()) + " more syntax errors in this file)";
}

// Plain comparisons, not <cctype>: this runs on every byte of every file.
bool is_digit_byte(char c) { return c >= '0' && c <= '9'; }

bool is_identifier_byte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit_byte(c) || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}

// The bytes where a Python 2 form could start: the keywords that open its node (`print`, `exec`,
// `except`, `raise`), `<>`, a backtick, a number token ending in `L` or starting with `0` and
// another digit. Strings and comments are not told apart here: the tree decides.
std::vector<uint32_t> python2_anchors(std::string_view text) {
  std::vector<uint32_t> anchors;
  static constexpr std::string_view kKeywords[] = {"print", "exec", "except", "raise"};
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    bool starts_token = i == 0 || !is_identifier_byte(text[i - 1]);
    if (c == '`' || (c == '<' && i + 1 < text.size() && text[i + 1] == '>')) {
      anchors.push_back(static_cast<uint32_t>(i));
    } else if (starts_token && is_digit_byte(c) && (i == 0 || text[i - 1] != '.')) {
      size_t end = i;
      while (end < text.size() && is_identifier_byte(text[end]))
        ++end;
      std::string_view token = text.substr(i, end - i);
      bool long_suffix = token.back() == 'l' || token.back() == 'L';
      bool leading_zero = token.size() > 1 && token[0] == '0' && is_digit_byte(token[1]);
      if (long_suffix || leading_zero)
        anchors.push_back(static_cast<uint32_t>(i));
      i = end - 1;
    } else if (starts_token && (c == 'p' || c == 'e' || c == 'r')) {
      for (std::string_view keyword : kKeywords)
        if (text.substr(i, keyword.size()) == keyword) {
          anchors.push_back(static_cast<uint32_t>(i));
          break;
        }
    }
  }
  return anchors;
}

// Visits `root`'s nodes in document order and reports each error_at finds. With `anchors`
// (sorted bytes), a node holding none of them is skipped with all it encloses: every Python 2
// form holds the byte it starts with, so only the paths down to those bytes need a visit.
std::vector<SyntaxErrorNote> walk(TSNode root, std::string_view text,
                                  const std::vector<uint32_t> *anchors) {
  std::vector<SyntaxErrorNote> errors;
  size_t total = 0;
  size_t next_anchor = 0;
  // Iterative walk: a file may nest far deeper than the stack would allow recursion.
  TSTreeCursor cursor = ts_tree_cursor_new(root);
  for (;;) {
    TSNode node = ts_tree_cursor_current_node(&cursor);
    bool visit = true;
    if (anchors) {
      // Document order never goes back: anchors before this node are behind the walk.
      while (next_anchor < anchors->size() && (*anchors)[next_anchor] < ts_node_start_byte(node))
        ++next_anchor;
      if (next_anchor == anchors->size())
        break;
      visit = (*anchors)[next_anchor] < ts_node_end_byte(node);
    }
    if (visit) {
      std::string message = error_at(node, text);
      if (!message.empty())
        add_error(errors, total, node, std::move(message));
    }
    // An ERROR node is one error: what tree-sitter recovered inside it is not reported again.
    bool leaf = !visit || is(node, "ERROR") || !ts_tree_cursor_goto_first_child(&cursor);
    if (!leaf)
      continue;
    bool moved = false;
    while (!(moved = ts_tree_cursor_goto_next_sibling(&cursor)))
      if (!ts_tree_cursor_goto_parent(&cursor))
        break;
    if (!moved)
      break;
  }
  ts_tree_cursor_delete(&cursor);
  finish(errors, total);
  return errors;
}

} // namespace

std::vector<SyntaxErrorNote> find_python_syntax_errors_by_walk(TSNode root, std::string_view text) {
  return walk(root, text, nullptr);
}

std::vector<SyntaxErrorNote> find_python_syntax_errors(TSNode root, std::string_view text) {
  // A tree with ERROR or MISSING nodes is walked whole. Without them only the Python 2 forms
  // remain, and each holds a byte a text scan finds: visiting only the nodes that hold one costs
  // far less than visiting every node (the whole walk was about a seventh of a check).
  if (ts_node_has_error(root))
    return walk(root, text, nullptr);
  std::vector<uint32_t> anchors = python2_anchors(text);
  return walk(root, text, &anchors);
}

} // namespace devlint
