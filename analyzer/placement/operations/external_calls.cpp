// Calls the package does not define: callees computed by an expression, helpers handed a module
// or a method, functions that may fill a container, and compiled kernels of other packages.
#include "placement/interpreter.h"

#include <algorithm>
#include <optional>
#include <string>

#include "placement/operations/call_shapes.h"

namespace devlint {

// A callee computed by an expression (`self.blocks[i](h)`, `self.get_input_embeddings()(ids)`),
// or a name no earlier operation model knows: a module, a loss function, a function handed a
// module or a method, or a function of another package.
Value Interpreter::computed_callee_call(const Expr *call) {
  const Expr *callee = call->operands[0];
  Value target = eval(callee);
  Args args = eval_args(call);
  if (std::optional<Value> out = undeclared_list_element_call(call, target, args))
    return *out;
  if (frame_->script && has_literal(target))
    return script_model_call(call, callee, target, args);
  if (target.kind == Value::Kind::Module || target.kind == Value::Kind::ModuleItem)
    return module_call(target, call, args);
  if (target.kind == Value::Kind::LossFunction)
    return loss_site(call, args, "loss function");
  // A method taken off a tensor-holding object and called later (`sample = dist.rsample`, then
  // `sample(shape)`): its result is where the object is. (A loaded script model is a tensor
  // too: it is called above.)
  if (callee->kind == ExprKind::Name && !frame_->script && target.kind == Value::Kind::Tensor &&
      target.has_origins())
    return target;
  // `self.language_model.get_input_embeddings()(ids)`: what a submodule's method returned and is
  // then called is part of that submodule, on its device, not a pass-through of `ids`.
  if (callee->kind == ExprKind::Call && target.kind == Value::Kind::Tensor &&
      target.has_origins() &&
      std::all_of(target.origins.begin(), target.origins.end(),
                  [](const Origin *o) { return o->kind == OriginKind::Child; }))
    return target;
  if (std::optional<Value> out = call_handed_module(call, args))
    return *out;
  if (std::optional<Value> out = handed_method_call(call, args))
    return *out;
  if (callee->kind == ExprKind::Name)
    forget_filled_containers(call);
  if (callee->kind == ExprKind::Name && !frame_->env.count(callee->text) && frame_->file &&
      imports_kernel(*frame_->file, callee))
    return unknown_call_result(call, kernel_call(call, args));
  // A helper of the model's own source tree that was not read (its module lies above the
  // directory checked) may build its result anywhere: from the argument's shape or `.tolist()`
  // on the CPU, with `device=` of the argument, or from it. Its result has no device to name,
  // not the argument's (the package's own functions are inlined before this is reached).
  if (callee->kind == ExprKind::Name && !frame_->env.count(callee->text) && frame_->file &&
      imports_unread_tree_function(*frame_->file, callee))
    return Value::neutral();
  return unknown_call_result(call, first_tensor(args));
}

// `apply_chunking_to_forward(self.feed_forward_chunk, size, dim, x)`: a helper handed one of this
// object's methods calls it on its trailing arguments, so the result is the method's
// (`self.output`'s), not a pass-through of `x`.
std::optional<Value> Interpreter::handed_method_call(const Expr *call, const Args &args) {
  const FunctionDef *method = handed_method(call, frame_->unit);
  if (!method)
    return std::nullopt;
  size_t wanted = 0;
  for (size_t i = 1; i < method->parameters.size(); ++i)
    if (!method->parameters[i].variadic && !method->parameters[i].default_value)
      ++wanted;
  if (wanted == 0 || wanted >= args.positional.size())
    return std::nullopt;
  Args trailing;
  trailing.positional.assign(args.positional.end() - static_cast<std::ptrdiff_t>(wanted),
                             args.positional.end());
  return call_function(method, call, trailing, true, frame_->unit);
}

// `make_masks(structure)`: a function the analysis cannot see may fill a dict or list it is
// given, with tensors made anywhere: what the container holds afterwards is unknown.
void Interpreter::forget_filled_containers(const Expr *call) {
  for (size_t i = 1; i < call->operands.size(); ++i) {
    const Expr *arg = call->operands[i];
    auto held = arg->kind == ExprKind::Name ? frame_->env.find(arg->text) : frame_->env.end();
    if (held == frame_->env.end() || held->second.kind != Value::Kind::Tuple)
      continue;
    Value unknown;
    unknown.kind = Value::Kind::Tuple;
    unknown.origins.push_back(make_origin(OriginKind::Skip, "filled", arg->range));
    held->second = unknown;
  }
}

namespace {

// `tokens_per_expert.cpu()`, `lengths.to("cpu")`: the code moved the value to the CPU on purpose.
bool moved_to_cpu_on_purpose(const Value &v) {
  return std::all_of(v.origins.begin(), v.origins.end(), moved_to_cpu);
}

} // namespace

// `selective_state_update(state, x, ...)` from mamba-ssm, `flash_attn_func(q, k, v)`: a compiled
// kernel of another package wants every tensor it is handed on one device. A tensor the caller
// moved to the CPU just for it is what the kernel asks for there (grouped_gemm's `gmm(x, w,
// batch_sizes)` checks `batch_sizes.is_cpu()`): host-side sizes and offsets, not an operand.
Value Interpreter::kernel_call(const Expr *call, const Args &args) {
  Site site;
  site.kind = SiteKind::Matmul;
  site.expr = call;
  site.operation = std::string(call->operands[0]->text) + "(...)";
  site.external_kernel = true;
  auto add = [&site](const Expr *expr, const Value &v) {
    // `rearrange(x, "b l d -> b d l", l=seqlen)`: an unannotated argument may be a number.
    if (v.kind != Value::Kind::Tensor || !v.has_origins() ||
        std::all_of(v.origins.begin(), v.origins.end(),
                    [](const Origin *o) { return o->has(OriginFact::MaybeNotTensor); }) ||
        moved_to_cpu_on_purpose(v))
      return;
    SiteOperand operand{expr, v.origins};
    if (std::any_of(v.origins.begin(), v.origins.end(),
                    [](const Origin *o) { return o->kind == OriginKind::HeldState; }))
      operand.move_limit = MoveLimit::UpdatedInPlace;
    site.operands.push_back(operand);
  };
  for (size_t i = 0; i < args.positional.size(); ++i)
    add(call->operands[i + 1], args.positional[i]);
  for (size_t k = 0; k < call->keywords.size(); ++k)
    add(call->keywords[k].value, args.keywords[k].second);
  const OriginSet *reported = site.operands.size() > 1 ? emit(site) : nullptr;
  return anchored_result(reported, first_tensor(args));
}

} // namespace devlint
