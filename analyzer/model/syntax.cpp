#include "model/syntax.h"

#include <algorithm>

#include <string>
#include <vector>

namespace devlint {

std::string dotted_name(const Expr *e) {
  if (!e)
    return {};
  if (e->kind == ExprKind::Name)
    return std::string(e->text);
  if (e->kind == ExprKind::Attribute) {
    std::string base = dotted_name(e->operands[0]);
    if (base.empty())
      return {};
    base += '.';
    base += e->text;
    return base;
  }
  return {};
}

std::string_view callee_leaf(const Expr *call) {
  if (!call || call->kind != ExprKind::Call || call->operands.empty())
    return {};
  const Expr *callee = call->operands[0];
  if (callee->kind == ExprKind::Name || callee->kind == ExprKind::Attribute)
    return callee->text;
  return {};
}

bool library_assumed_installed(std::string_view library) {
  return library == "torch" || library == "torch_cuda" || library == "torch_accelerator" ||
         library == "accelerate";
}

std::string_view library_probed_by(std::string_view function_name) {
  constexpr std::string_view prefix = "is_", suffix = "_available";
  if (function_name.size() <= prefix.size() + suffix.size() ||
      function_name.substr(0, prefix.size()) != prefix ||
      function_name.substr(function_name.size() - suffix.size()) != suffix)
    return {};
  return function_name.substr(prefix.size(), function_name.size() - prefix.size() - suffix.size());
}

std::string_view probed_library(const Expr *call) {
  if (!call || call->kind != ExprKind::Call || call->operands.size() != 1 ||
      !call->keywords.empty())
    return {};
  return library_probed_by(callee_leaf(call));
}

namespace {

void add_module_level(const std::vector<Stmt *> &body, std::vector<const Stmt *> &out) {
  for (const Stmt *s : body) {
    std::string_view library =
        s->kind == StmtKind::If ? probed_library(s->value) : std::string_view();
    if (library.empty())
      out.push_back(s);
    else // an `elif` is an If nested in `orelse`: taken the same way
      add_module_level(library_assumed_installed(library) ? s->body : s->orelse, out);
  }
}

} // namespace

std::vector<const Stmt *> module_level_statements(const std::vector<Stmt *> &body) {
  std::vector<const Stmt *> out;
  add_module_level(body, out);
  return out;
}

bool binds_name(const Stmt *s, std::string_view name) {
  if (s->kind != StmtKind::Assign && s->kind != StmtKind::AugAssign && s->kind != StmtKind::For &&
      s->kind != StmtKind::With)
    return false;
  return std::any_of(s->targets.begin(), s->targets.end(), [&](const Expr *t) {
    return any_subexpression(
        t, [&](const Expr *x) { return is_name(x, name); }, 8, true);
  });
}

bool assigns_to(const FunctionDef &function, std::string_view name) {
  return find_statement(function.body, [&](const Stmt *s) { return binds_name(s, name); }) !=
         nullptr;
}

std::optional<const Expr *> argument_passed(const Expr *call, size_t index, std::string_view name) {
  const Expr *passed = nullptr;
  for (size_t a = 1; a < call->operands.size(); ++a) {
    if (call->operands[a]->kind == ExprKind::Starred)
      return std::nullopt;
    if (a == index)
      passed = call->operands[a];
  }
  for (const Keyword &k : call->keywords) {
    if (k.name.empty())
      return std::nullopt;
    if (k.name == name)
      passed = k.value;
  }
  return passed;
}

} // namespace devlint
