// Calls: the dispatch over the operation models (placement/operations/, one file per idiom
// family), and what the interpreter itself does with a call: argument evaluation, inlining of the
// package's functions and methods, and method resolution.
#include "placement/interpreter.h"

#include <algorithm>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>

#include "model/text.h"
#include "model/torch_catalog.h"

namespace devlint {

Interpreter::Args Interpreter::eval_args(const Expr *call) {
  Args a;
  for (size_t i = 1; i < call->operands.size(); ++i)
    a.positional.push_back(eval(call->operands[i]));
  for (const Keyword &k : call->keywords)
    a.keywords.emplace_back(k.name, eval(k.value));
  return a;
}

OriginSet Interpreter::tensor_union(const Args &args) {
  std::vector<OriginSet> operands;
  for (const Value &v : args.positional)
    if (v.kind == Value::Kind::Tensor)
      operands.push_back(v.origins);
  for (const auto &keyword : args.keywords)
    if (keyword.second.kind == Value::Kind::Tensor &&
        torch_catalog::is_tensor_operand_keyword(keyword.first))
      operands.push_back(keyword.second.origins);
  // `torch.div(torch.arange(n), size[1])`: the result stays on the CPU.
  drop_numbers_beside_cpu(operands);
  OriginSet out;
  for (const OriginSet &origins : operands)
    for (const Origin *o : origins)
      if (std::find(out.begin(), out.end(), o) == out.end())
        out.push_back(o);
  return out;
}

// `x.index_select(0, beam_idx)`: the index of these operations can only be a tensor, so a fix
// may move it even when nothing else says so (an unannotated argument). The dimension before it
// is a Python int, never an operand (`torch.gather(values, index.batch_dims, indices)`).
void Interpreter::note_index_tensor(std::string_view operation, Args &args, size_t shift) {
  static const std::unordered_set<std::string_view> index_second = {
      "index_select", "gather",       "index_add",      "index_add_",     "index_copy",
      "index_copy_",  "index_fill",   "index_fill_",    "scatter",        "scatter_",
      "scatter_add",  "scatter_add_", "scatter_reduce", "scatter_reduce_"};
  size_t position = operation == "take_along_dim" ? 0 : 1;
  if (operation != "take_along_dim" && !index_second.count(operation))
    return;
  if (operation != "take_along_dim") {
    if (shift < args.positional.size())
      args.positional[shift] = Value::neutral();
    for (auto &[name, value] : args.keywords)
      if (name == "dim")
        value = Value::neutral();
  }
  if (position + shift < args.positional.size())
    note_tensor(args.positional[position + shift]);
  else if (const Value *index = args.keyword(operation == "take_along_dim" ? "indices" : "index"))
    note_tensor(*index);
}

Value Interpreter::first_tensor(const Args &args) {
  for (const Value &v : args.positional)
    if (v.kind == Value::Kind::Tensor && v.has_origins())
      return v;
  for (const auto &[k, v] : args.keywords)
    if (v.kind == Value::Kind::Tensor && v.has_origins())
      return v;
  return Value::neutral();
}

// `int`, `float | None`, `Optional[int]`: Python's own numbers and strings, no tensor.
bool Interpreter::python_number_annotation(std::string_view annotation) {
  bool any = false;
  for (std::string_view name : annotation_names(annotation)) {
    if (name == "Optional" || name == "Union" || name == "None" || name == "typing.Optional" ||
        name == "typing.Union")
      continue;
    if (name != "int" && name != "float" && name != "bool" && name != "str")
      return false;
    any = true;
  }
  return any;
}

Value Interpreter::call_function(const FunctionDef *fn, const Expr *call, const Args &args,
                                 bool bound_self, const ModuleClass *unit) {
  if (frame_->depth >= limits_.max_inline_depth || over_budget() ||
      std::find(call_stack_.begin(), call_stack_.end(), fn) != call_stack_.end())
    return first_tensor(args);
  Frame frame;
  frame.outer_loops = loops_.size();
  frame.unit = unit;
  frame.function = fn;
  frame.file = file_of_.count(fn) ? file_of_[fn] : frame_->file;
  frame.depth = frame_->depth + 1;
  frame.script = frame_->script;
  frame.pipeline = frame_->pipeline;
  frame.parent = frame_;
  if (!bound_self) {
    frame.call = call;
    frame.caller = frame_;
  }
  size_t first = bound_self && !fn->is_staticmethod ? 1 : 0;
  if (first == 1 && !fn->parameters.empty()) {
    Value self;
    self.kind = Value::Kind::Self;
    frame.env[fn->parameters[0].name] = self;
  }
  seed_globals(frame, fn); // a Python script's function reads the top level's names
  Args renamed = args;
  rename_devices_for_parameters(fn, first, renamed);
  size_t next = 0;
  for (size_t i = first; i < fn->parameters.size(); ++i) {
    const Parameter &p = fn->parameters[i];
    Value v;
    bool bound = false;
    if (p.variadic) {
      Value rest;
      rest.kind = Value::Kind::Tuple;
      rest.elements = std::make_shared<std::vector<Value>>();
      while (next < renamed.positional.size())
        rest.elements->push_back(renamed.positional[next++]);
      v = rest;
      bound = true;
    } else if (next < renamed.positional.size()) {
      v = renamed.positional[next++];
      bound = true;
    } else if (const Value *kw = renamed.keyword(p.name)) {
      v = *kw;
      bound = true;
    }
    if (!bound && p.default_value) {
      Frame *caller = frame_;
      frame_ = &frame;
      v = eval(p.default_value);
      frame_ = caller;
    }
    // `num_frames: int`: a Python number, whatever shape arithmetic the caller did to get it.
    // Python does not enforce the annotation: a module's own nn.Parameter or buffer handed on
    // as it is (`distance2bbox(points, d, self.reg_scale)` to `reg_scale: float`) is a tensor.
    if (bound && !p.variadic && (v.kind == Value::Kind::Tensor || v.kind == Value::Kind::Tuple) &&
        python_number_annotation(p.annotation) &&
        !(v.kind == Value::Kind::Tensor && v.has_origins() &&
          std::all_of(v.origins.begin(), v.origins.end(),
                      [](const Origin *o) { return o->kind == OriginKind::Parameter; })))
      v = Value::neutral();
    frame.env[p.name] = v;
  }
  (void)call;
  // A method of the same object sees the attributes this entry has set on `self` so far, and
  // its own settings stay for the caller (`self._set_cache(...)` then `self.cos_cached`).
  const bool same_self = bound_self && unit && unit == frame_->unit && muted_sites_ == 0;
  if (same_self)
    for (const auto &[key, value] : frame_->env)
      if (starts_with(key, "self."))
        frame.env.emplace(key, value);
  Frame *caller = frame_;
  frame_ = &frame;
  call_stack_.push_back(fn);
  exec_block(fn->body);
  call_stack_.pop_back();
  frame_ = caller;
  if (same_self)
    for (const auto &[key, value] : frame.env)
      if (starts_with(key, "self."))
        frame_->env[key] = value;
  return call ? device_returned(frame.returns, call) : frame.returns;
}

const FunctionDef *Interpreter::base_method(const ModuleClass *unit, const FunctionDef *running,
                                            std::string_view name) {
  // The class whose method is running, among the unit and its package bases.
  std::vector<const ModuleClass *> pending{unit};
  for (size_t i = 0; i < pending.size() && i < 32; ++i) {
    const ModuleClass *cls = pending[i];
    if (std::find(cls->def->methods.begin(), cls->def->methods.end(), running) !=
        cls->def->methods.end()) {
      for (const ModuleClass *base : cls->bases)
        if (const FunctionDef *m = base->find_method(name))
          return m;
      return nullptr;
    }
    pending.insert(pending.end(), cls->bases.begin(), cls->bases.end());
  }
  return nullptr;
}

const ChildDecl *Interpreter::returned_child(const FunctionDef *fn, const ModuleClass *cls) {
  for (const Stmt *st : fn->body)
    if (st->kind == StmtKind::Return && st->value && st->value->kind == ExprKind::Attribute &&
        is_name(st->value->operands[0], "self"))
      return cls->find_child(st->value->text);
  return nullptr;
}

// The operation models, in the order they are asked: the first that recognises a call evaluates
// it. `super()` and `self` come first (the package's own methods win over any idiom of the same
// name), then names bound in the running function, the package's functions, Python's builtins
// and loss classes, calls on an attribute (PyTorch's API, then by what the receiver holds), and
// last a callee computed by an expression, which takes every call left.
const Interpreter::CallOperation Interpreter::kCallOperations[] = {
    &Interpreter::pipeline_call,           // operations/pipelines.cpp
    &Interpreter::super_call,              // operations/self_calls.cpp
    &Interpreter::own_method_call,         // operations/self_calls.cpp
    &Interpreter::local_callable_call,     // operations/module_calls.cpp
    &Interpreter::package_function_call,   // here: inlined
    &Interpreter::container_builtin_call,  // operations/python_builtins.cpp
    &Interpreter::plain_object_call,       // operations/python_builtins.cpp
    &Interpreter::non_tensor_builtin_call, // operations/python_builtins.cpp
    &Interpreter::loss_class_call,         // operations/losses.cpp
    &Interpreter::attribute_call,          // here: dispatches on the receiver
};

Value Interpreter::eval_call(const Expr *call) {
  for (CallOperation operation : kCallOperations)
    if (std::optional<Value> result = (this->*operation)(call))
      return *std::move(result);
  return computed_callee_call(call); // operations/external_calls.cpp
}

// `helper(x)`: a function of the package (or one defined in the running function), inlined with
// the caller's values.
std::optional<Value> Interpreter::package_function_call(const Expr *call) {
  const Expr *callee = call->operands[0];
  if (callee->kind != ExprKind::Name || frame_->env.count(callee->text))
    return std::nullopt;
  auto nested = frame_->local_functions.find(callee->text);
  const FunctionDef *fn = nested != frame_->local_functions.end()
                              ? nested->second
                              : pkg_.find_function(callee->text, frame_->file);
  if (!fn)
    return std::nullopt;
  Args args = eval_args(call);
  return call_function(fn, call, args, false, frame_->unit);
}

// `torch.cat(...)`, `x.view(...)`, `self.encoder.embed(x)`, `hidden_states.append(x)`: the
// receiver decides which operation model answers.
std::optional<Value> Interpreter::attribute_call(const Expr *call) {
  const Expr *callee = call->operands[0];
  if (callee->kind != ExprKind::Attribute)
    return std::nullopt;
  std::string_view leaf = call->text;
  std::string dotted = dotted_name(callee);
  if (starts_with(dotted, "torch.") || starts_with(dotted, "F.") || starts_with(dotted, "nn.") ||
      starts_with(dotted, "functional.")) {
    Value out = torch_call(call, leaf, dotted); // operations/torch_functions.cpp
    // An elementwise function keeps a 1-D tensor 1-D; anything else may not (vectors.cpp).
    return torch_catalog::is_elementwise_function(leaf) ? out : maybe_reshaped(out, call);
  }
  if (std::optional<Value> out = handed_module_forward(call))
    return out;
  Value receiver = eval(callee->operands[0]);
  if (script_object(receiver) && (leaf == "to" || leaf == "cuda")) {
    Value placed = tensor_method(call, leaf, receiver); // model.to("cuda:0"): a placed object
    if (!moves_its_inputs(receiver))
      for (const Origin *o : placed.origins)
        if (o->kind == OriginKind::LiteralDevice || o->kind == OriginKind::RunTimeDevice)
          const_cast<Origin *>(o)->set(OriginFact::PlacedObject);
    return placed;
  }
  switch (receiver.kind) {
  case Value::Kind::Tensor:
    return tensor_receiver_call(call, receiver); // operations/tensor_methods.cpp
  case Value::Kind::Self:
  case Value::Kind::Module:
    return module_receiver_call(call, receiver); // operations/module_calls.cpp
  case Value::Kind::ModuleItem:
    return module_call(receiver, call, eval_args(call)); // layer.forward(...)
  case Value::Kind::Tuple:
    return container_method_call(call, receiver); // operations/python_builtins.cpp
  case Value::Kind::Str:
  case Value::Kind::Device:
    eval_args(call);
    return Value::neutral();
  default:
    break;
  }
  Args args = eval_args(call);
  if (leaf == "checkpoint" || leaf == "_gradient_checkpointing_func")
    if (std::optional<Value> out = call_handed_module(call, args))
      return out;
  if (torch_catalog::is_loss_class(leaf))
    return loss_function();
  return unknown_call_result(call, first_tensor(args));
}

} // namespace devlint
