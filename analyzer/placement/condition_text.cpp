#include "placement/condition_text.h"

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

} // namespace devlint
