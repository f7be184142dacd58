// Python's builtins and containers: `list`/`tuple`/`sum` over tensors, instances of the package's
// plain classes, lists that collect tensors, and calls that return no tensor.
#include "placement/interpreter.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <unordered_set>

#include "model/torch_catalog.h"

namespace devlint {

// `list(x)`, `tuple(x)`, `sorted(x)`, `sum(xs)`, `next(iter(xs))`, `max(a, b)`.
std::optional<Value> Interpreter::container_builtin_call(const Expr *call) {
  const Expr *callee = call->operands[0];
  if (callee->kind != ExprKind::Name)
    return std::nullopt;
  static const std::unordered_set<std::string_view> containers = {
      "list", "tuple", "sorted", "reversed", "sum", "max", "min", "next", "iter"};
  std::string_view name = callee->text;
  if (!containers.count(name))
    return std::nullopt;
  Args args = eval_args(call);
  if (name == "max" || name == "min" || args.positional.empty())
    return Value::neutral();
  if (name == "list" || name == "tuple") {
    // Known elements stay known (`tuple(t[mask] for t in [a, b])`).
    if (args.positional[0].kind == Value::Kind::Tuple && args.positional[0].elements)
      return args.positional[0];
    // A container: `tuple(a) + tuple(b)` concatenates, whatever the elements.
    Value container;
    container.kind = Value::Kind::Tuple;
    container.origins = origins_of(args.positional[0]);
    return container;
  }
  // `sum([emb(x) for emb in self.embed_tokens]) + h` adds up the elements: a tensor, not the
  // list. Not with a container to start from (`sum(caches, ())` concatenates).
  if (name == "sum" && args.positional[0].kind == Value::Kind::Tuple &&
      (args.positional.size() < 2 || args.positional[1].kind != Value::Kind::Tuple))
    return as_tensor(args.positional[0]);
  return args.positional[0];
}

// `IndexMap(indices, num_segments)`: an instance of a plain class of the package is an object
// holding tensors, not a tensor: its methods (`index.batch_shape()`) are its own.
std::optional<Value> Interpreter::plain_object_call(const Expr *call) {
  const Expr *callee = call->operands[0];
  if (callee->kind != ExprKind::Name || frame_->env.count(callee->text))
    return std::nullopt;
  const ModuleClass *cls = pkg_.find_class(callee->text, frame_->file);
  if (!cls || cls->is_module)
    return std::nullopt;
  Args args = eval_args(call);
  Value object;
  object.kind = Value::Kind::Tuple;
  for (const Value &v : args.positional)
    add_origins(object.origins, origins_of(v));
  for (const auto &kv : args.keywords)
    add_origins(object.origins, origins_of(kv.second));
  return object;
}

// `zip(...)`, `enumerate(...)`, `len(x)`, `isinstance(...)`: no tensor comes out.
std::optional<Value> Interpreter::non_tensor_builtin_call(const Expr *call) {
  const Expr *callee = call->operands[0];
  if (callee->kind != ExprKind::Name)
    return std::nullopt;
  std::string_view name = callee->text;
  if (name != "zip" && name != "enumerate" && !torch_catalog::is_non_tensor_builtin(name))
    return std::nullopt;
  Args args = eval_args(call);
  // `abs(reg_scale)` of a tensor is `Tensor.__abs__`: a tensor where its argument is.
  if (name == "abs" && args.positional.size() == 1 &&
      args.positional[0].kind == Value::Kind::Tensor && args.positional[0].has_origins())
    return args.positional[0];
  return Value::neutral();
}

// `hidden_states.append(x)`, `cache.pop(0)`, `outputs.items()`: a method of a list, tuple or dict
// of tensors. Lists that collect tensors remember what went in.
Value Interpreter::container_method_call(const Expr *call, const Value &receiver) {
  const Expr *object = call->operands[0]->operands[0];
  std::string_view leaf = call->text;
  Args args = eval_args(call);
  if (leaf == "append" || leaf == "extend" || leaf == "insert") {
    if (object->kind == ExprKind::Name && !args.positional.empty())
      append_to_list(object->text,
                     leaf == "insert" && args.positional.size() > 1 ? args.positional[1]
                                                                    : args.positional[0],
                     leaf == "append" ? call : nullptr);
    return Value::neutral();
  }
  // `kwargs.get("temperature", config.temperature)`: what a caller passes under a key whose
  // default is a Python value (a number, a string, a configuration's setting) is that kind too.
  if ((leaf == "pop" || leaf == "get") && args.positional.size() > 1 && call->operands.size() > 2 &&
      call->operands[2]->kind != ExprKind::NoneLiteral &&
      (args.positional[1].kind == Value::Kind::Neutral ||
       args.positional[1].kind == Value::Kind::Str) &&
      !args.positional[1].has_origins())
    return Value::neutral();
  // `hint, scale = hints.pop()` of a list of appended pairs: one of its elements, each part
  // joined over them, not every tensor of the list under both names.
  if (leaf == "pop" && receiver.kind == Value::Kind::Tuple && receiver.elements &&
      !receiver.elements->empty() &&
      std::all_of(receiver.elements->begin(), receiver.elements->end(),
                  [](const Value &e) { return e.kind == Value::Kind::Tuple && e.elements; })) {
    Value out = receiver.elements->front();
    for (size_t i = 1; i < receiver.elements->size(); ++i)
      out = join(out, (*receiver.elements)[i]);
    return out;
  }
  if (leaf == "pop" || leaf == "get" || leaf == "values" || leaf == "items")
    return as_tensor(receiver);
  return Value::neutral();
}

const Origin *Interpreter::final_pass_version(const Origin *o) {
  // (A comprehension is no statement: what one gathered has no loop, and it has finished.)
  if (o->kind != OriginKind::LayerIteration || o->has(OriginFact::Settled) ||
      (!o->loop && !o->has(OriginFact::Collected)) ||
      std::find(loops_.begin(), loops_.end(), o->loop) != loops_.end())
    return o;
  for (const OriginSet &element : loop_elements_)
    for (const Origin *e : element)
      if (same_origin(e, o))
        return o; // taken per pass from a list of such outputs (`for source in sources`)
  Origin &copy = origins_.emplace_back(*o);
  copy.set(OriginFact::Settled);
  return &copy;
}

// A list made during the pass of a layer loop that is running (`packed = []` in the loop's body,
// or in a helper it calls) holds what this pass appends: its elements share one pass.
const Origin *Interpreter::one_pass_version(const Origin *o, const Value &list) {
  if (o->kind != OriginKind::LayerIteration || !o->loop || !list.made_in_loop ||
      o->has(OriginFact::OnePassList))
    return o;
  auto loop_at = std::find(loops_.begin(), loops_.end(), o->loop);
  auto made_at = std::find(loops_.begin(), loops_.end(), list.made_in_loop);
  if (loop_at == loops_.end() || made_at == loops_.end() || made_at < loop_at)
    return o;
  Origin &copy = origins_.emplace_back(*o);
  copy.set(OriginFact::OnePassList);
  return &copy;
}

void Interpreter::append_to_list(std::string_view name, const Value &added, const Expr *call) {
  Value &list = frame_->env[name];
  Value updated;
  updated.kind = Value::Kind::Tuple;
  updated.origins = origins_of(list);
  OriginSet appended = origins_of(added);
  // Inside a loop, a ModuleList output of a loop that has already finished (`anchors` made on
  // `source_flatten.device` at every level) is one value at every append: the elements do not
  // differ by it. What a loop variable takes from a list of such outputs (`for source in
  // sources`) differs per pass.
  if (!loops_.empty())
    for (const Origin *&o : appended)
      o = one_pass_version(final_pass_version(o), list);
  updated.made_in_loop = list.made_in_loop;
  add_origins(updated.origins, appended);
  // A list of known elements keeps them: each `.append` call adds one element (joined over the
  // passes of a loop), so `torch.cat(embeds)` compares the text embeddings one call appended with
  // the image features another did, or with what the list was made with. Elements one call
  // appends are built alike: they stay one.
  if (call && list.kind == Value::Kind::Tuple && list.elements) {
    updated.elements = std::make_shared<std::vector<Value>>(*list.elements);
    updated.appended_by =
        list.appended_by
            ? std::make_shared<std::vector<const Expr *>>(*list.appended_by)
            : std::make_shared<std::vector<const Expr *>>(list.elements->size(), nullptr);
    Value element = added;
    element.origins = appended;
    add_appended_element(updated, call, element, limits_.max_origins);
  }
  list = updated;
}

} // namespace devlint
