#include "model/syntax.h"

#include <string>

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

} // namespace devlint
