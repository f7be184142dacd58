// Loss modules built in a method.
#include "placement/interpreter.h"

#include <optional>

#include "model/torch_catalog.h"

namespace devlint {

// `nn.CrossEntropyLoss()`, `CrossEntropyLoss()`: a loss module; calling it is a loss site
// (site_emission.cpp, `loss_site`).
std::optional<Value> Interpreter::loss_class_call(const Expr *call) {
  const Expr *callee = call->operands[0];
  if (callee->kind != ExprKind::Name || !torch_catalog::is_loss_class(callee->text))
    return std::nullopt;
  eval_args(call);
  return loss_function();
}

Value Interpreter::loss_function() {
  Value v;
  v.kind = Value::Kind::LossFunction;
  return v;
}

} // namespace devlint
