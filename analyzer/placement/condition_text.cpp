#include "placement/condition_text.h"

#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

namespace devlint {

std::string condition_text(std::string_view code) {
  std::string out;
  for (char c : code)
    if (c != ' ' && c != '\n' && c != '\t' && c != '(' && c != ')')
      out += c;
  return out;
}

std::string condition_text(const SyntaxFile &file, const Expr *e) {
  return condition_text(file.source->slice(e->range));
}

bool negates(const std::string &a, const std::string &b) {
  auto ends = [](const std::string &s, const std::string &tail) {
    return s.size() > tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  auto stem = [](const std::string &s, const std::string &tail) {
    return s.substr(0, s.size() - tail.size());
  };
  if (a == "not" + b || b == "not" + a)
    return true;
  if (ends(a, "isNone") && ends(b, "isnotNone"))
    return stem(a, "isNone") == stem(b, "isnotNone");
  for (const auto &[yes, no] : std::vector<std::pair<std::string, std::string>>{
           {">0", "==0"}, {">0", "<=0"}, {">0", "<1"}, {">=1", "==0"}, {"!=0", "==0"}})
    if ((ends(a, yes) && ends(b, no) && stem(a, yes) == stem(b, no)) ||
        (ends(b, yes) && ends(a, no) && stem(b, yes) == stem(a, no)))
      return true;
  size_t eq = a.find("=="), ne = b.find("!=");
  if (eq != std::string::npos && ne != std::string::npos && eq == ne)
    return a.substr(0, eq) == b.substr(0, ne) && a.substr(eq + 2) == b.substr(ne + 2);
  eq = b.find("=="), ne = a.find("!=");
  return eq != std::string::npos && ne != std::string::npos && eq == ne &&
         b.substr(0, eq) == a.substr(0, ne) && b.substr(eq + 2) == a.substr(ne + 2);
}

std::string_view asserted_condition(const SyntaxFile &file, const Stmt *s) {
  if (!s || s->kind != StmtKind::Other)
    return {};
  std::string_view code = file.source->slice(s->range);
  constexpr std::string_view keyword = "assert";
  if (code.size() <= keyword.size() || code.substr(0, keyword.size()) != keyword ||
      (code[keyword.size()] != ' ' && code[keyword.size()] != '(' && code[keyword.size()] != '\t'))
    return {};
  // Up to the comma that starts the message, outside brackets and strings.
  int depth = 0;
  char quote = 0;
  size_t end = code.size();
  for (size_t i = keyword.size(); i < code.size(); ++i) {
    char c = code[i];
    if (quote) {
      if (c == '\\')
        ++i;
      else if (c == quote)
        quote = 0;
      continue;
    }
    if (c == '"' || c == '\'')
      quote = c;
    else if (c == '(' || c == '[' || c == '{')
      ++depth;
    else if (c == ')' || c == ']' || c == '}')
      --depth;
    else if (c == ',' && depth == 0) {
      end = i;
      break;
    }
  }
  return code.substr(keyword.size(), end - keyword.size());
}

std::optional<bool> constant_truth(const SyntaxFile &file, const Expr *e, int depth) {
  if (!e || depth > 32)
    return std::nullopt;
  if (e->kind == ExprKind::Bool) {
    std::string_view literal = file.source->slice(e->range);
    if (literal == "True" || literal == "False")
      return literal == "True";
    return std::nullopt;
  }
  if (e->kind != ExprKind::BoolOp || e->operands.empty())
    return std::nullopt;
  if (e->text == "not") {
    std::optional<bool> inner = constant_truth(file, e->operands[0], depth + 1);
    return inner ? std::optional<bool>(!*inner) : std::nullopt;
  }
  if (e->text != "and" && e->text != "or")
    return std::nullopt;
  // `and` is decided by any false operand, `or` by any true one; otherwise all must be known.
  const bool decisive = e->text == "or";
  bool all_known = true;
  for (const Expr *operand : e->operands) {
    std::optional<bool> value = constant_truth(file, operand, depth + 1);
    if (value && *value == decisive)
      return decisive;
    all_known = all_known && value.has_value();
  }
  return all_known ? std::optional<bool>(!decisive) : std::nullopt;
}

std::vector<std::string> self_attribute_path(const Expr *e) {
  std::vector<std::string> path;
  for (; e && e->kind == ExprKind::Attribute && path.size() < 4; e = e->operands[0])
    path.insert(path.begin(), std::string(e->text));
  if (!e || e->kind != ExprKind::Name || e->text != "self")
    return {};
  return path;
}

std::string literal_json(const SyntaxFile &file, const Expr *e) {
  if (!e)
    return "";
  std::string_view code = file.source->slice(e->range);
  switch (e->kind) {
  case ExprKind::NoneLiteral:
    return "null";
  case ExprKind::Bool:
    return code == "True" ? "true" : code == "False" ? "false" : "";
  case ExprKind::Number:
    return code.find_first_not_of("0123456789.") == std::string_view::npos && !code.empty() &&
                   code.front() != '.'
               ? std::string(code)
               : "";
  case ExprKind::UnaryOp:
    if (e->text == "-" && e->operands.size() == 1 && e->operands[0]->kind == ExprKind::Number) {
      std::string inner = literal_json(file, e->operands[0]);
      return inner.empty() ? "" : "-" + inner;
    }
    return "";
  case ExprKind::String: {
    if (code.size() < 2 || (code.front() != '"' && code.front() != '\'') ||
        code.find('\\') != std::string_view::npos)
      return ""; // prefixed, escaped or implicitly joined strings are not read
    std::string text(code.substr(1, code.size() - 2));
    if (text.find_first_of("\"'") != std::string::npos)
      return "";
    return "\"" + text + "\"";
  }
  default:
    return "";
  }
}

std::string comparison_operator(const Expr *e) {
  if (!e || e->kind != ExprKind::Compare || e->operands.size() != 2 ||
      e->operands[1]->range.end != e->range.end) // a chain
    return "";
  static const char *const kComparisons[] = {"is", "is not", "==", "!=", "<", "<=", ">", ">="};
  std::string op;
  for (char c : e->text) // `is  not` as `is not`
    if (c != ' ' && c != '\t' && c != '\n')
      op += op == "is" ? std::string(" ") + c : std::string(1, c);
  if (std::none_of(std::begin(kComparisons), std::end(kComparisons),
                   [&](const char *c) { return op == c; }))
    return "";
  return op;
}

void self_tests_required(const SyntaxFile &file, const Expr *condition, bool holds,
                         std::vector<RunCondition> &out, int depth) {
  if (!condition || depth > 16 || condition->range.end - condition->range.begin > kMaxConditionText)
    return;
  if (condition->kind == ExprKind::BoolOp) {
    if (condition->text == "not" && condition->operands.size() == 1) {
      self_tests_required(file, condition->operands[0], !holds, out, depth + 1);
      return;
    }
    // Every operand of an `and` that holds holds; every operand of an `or` that fails fails.
    if ((condition->text == "and" && holds) || (condition->text == "or" && !holds))
      for (const Expr *operand : condition->operands)
        self_tests_required(file, operand, holds, out, depth + 1);
    return;
  }
  RunCondition test;
  test.text = std::string(file.source->slice(condition->range));
  test.holds = holds;
  if (condition->kind == ExprKind::Attribute) {
    test.attribute = self_attribute_path(condition);
  } else if (condition->kind == ExprKind::Subscript && condition->operands.size() == 2) {
    // A per-layer setting: `self.config.cls_token[self.stage]`.
    std::vector<std::string> index = self_attribute_path(condition->operands[1]);
    if (index.size() != 1)
      return;
    test.attribute = self_attribute_path(condition->operands[0]);
    test.subscript = index[0];
  } else if (std::string op = comparison_operator(condition); !op.empty()) {
    test.attribute = self_attribute_path(condition->operands[0]);
    test.comparison = op;
    test.literal = literal_json(file, condition->operands[1]);
    if (test.literal.empty())
      return;
  }
  if (test.attribute.empty())
    return;
  out.push_back(std::move(test));
}

} // namespace devlint
