// Calls on `self` and `super()`: the package's own methods, and those its transformers base
// class provides.
#include "placement/interpreter.h"

#include <optional>
#include <string>

#include "placement/operations/call_shapes.h"

namespace devlint {

// `super().forward(x)`: the method of the next package base that defines it, on this `self`.
std::optional<Value> Interpreter::super_call(const Expr *call) {
  const Expr *callee = call->operands[0];
  if (callee->kind != ExprKind::Attribute || !frame_->unit || !frame_->function ||
      callee->operands[0]->kind != ExprKind::Call ||
      !is_name(callee->operands[0]->operands[0], "super"))
    return std::nullopt;
  if (const FunctionDef *m = base_method(frame_->unit, frame_->function, call->text))
    return call_function(m, call, eval_args(call), true, frame_->unit);
  if (call->text == "generate")
    return generate_call(call, eval_args(call), std::nullopt);
  return std::nullopt;
}

// `self.method(...)` that is not a child's call: the class's own method (inlined), a method of
// the transformers base class the package does not hold (`generate`, gradient checkpointing,
// `register_buffer`, the embedding getters, the loss functions), or a module the constructor was
// handed.
std::optional<Value> Interpreter::own_method_call(const Expr *call) {
  const Expr *callee = call->operands[0];
  std::string_view leaf = call->text;
  const ModuleClass *unit = frame_->unit;
  if (callee->kind != ExprKind::Attribute || !is_name(callee->operands[0], "self") || !unit ||
      unit->find_child(leaf) || frame_->env.count(self_key(callee)))
    return std::nullopt;
  Args args = eval_args(call);
  if (const FunctionDef *m = unit->find_method(leaf))
    return call_function(m, call, args, true, unit);
  if (leaf == "generate")
    return generate_call(call, args, std::nullopt);
  if (leaf == "_gradient_checkpointing_func")
    if (std::optional<Value> out = call_handed_module(call, args))
      return *out;
  // A buffer registered while running (`self.register_buffer("inv_freq", inv_freq)`) is that
  // value from now on: dispatch moved the one it replaced, not this one.
  if ((leaf == "register_buffer" || leaf == "register_parameter") && call->operands.size() > 2 &&
      call->operands[1]->kind == ExprKind::String && args.positional.size() > 1) {
    frame_->env[intern("self." + std::string(call->operands[1]->text))] = args.positional[1];
    return Value::neutral();
  }
  if (leaf == "get_input_embeddings" || leaf == "get_output_embeddings")
    return module_value(leaf, nullptr);
  // A module the parent passed to the constructor and called here (SAM's shared positional
  // embedding): its output is that module's, not a pass-through of the argument.
  if (handed_to_constructor(*unit, leaf))
    return module_call(module_value(leaf, nullptr), call, args);
  // One the parent sets after `__init__` left it None (PP-DocLayoutV3's decoder calls
  // `self.bbox_embed(h)`, set to the model's `enc_bbox_head` MLP): the same.
  if (left_for_parent(pkg_, *unit, leaf))
    return module_call(module_value(leaf, nullptr), call, args);
  // transformers' own loss functions move labels to the logits' device themselves.
  return first_tensor(args);
}

} // namespace devlint
