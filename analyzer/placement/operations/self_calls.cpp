// Calls on `self` and `super()`: the package's own methods, and those its transformers base
// class provides.
#include "placement/interpreter.h"

#include <optional>
#include <string>

#include "placement/operations/call_shapes.h"

namespace devlint {

namespace {

// A string a class body (or a package base's) assigns to `name`: `_input_embed_layer = "wte"`.
std::optional<std::string_view> class_string(const ModuleClass &cls, std::string_view name,
                                             int depth = 0) {
  if (depth > 8)
    return std::nullopt;
  if (cls.def)
    for (const Stmt *s : cls.def->body)
      if (s->kind == StmtKind::Assign && s->targets.size() == 1 && is_name(s->targets[0], name) &&
          s->value && s->value->kind == ExprKind::String)
        return s->value->text;
  for (const ModuleClass *base : cls.bases)
    if (auto found = class_string(*base, name, depth + 1))
      return found;
  return std::nullopt;
}

// `def get_input_embeddings(self): return self.model.embed_tokens`: the dotted path it returns.
std::optional<std::string> returned_member(const FunctionDef &method) {
  if (method.body.empty())
    return std::nullopt;
  const Stmt *last = method.body.back();
  if (last->kind != StmtKind::Return || !last->value)
    return std::nullopt;
  std::string dotted = dotted_name(last->value);
  if (dotted.rfind("self.", 0) != 0)
    return std::nullopt;
  return dotted.substr(5);
}

} // namespace

// What `get_input_embeddings()` returns on an instance of `cls`, as a path below it, following
// transformers 5's EmbeddingAccessMixin (`modeling_utils.py`): a method the class defines that
// returns a member; else `self.<_input_embed_layer>` ("embed_tokens" unless the class names
// another), the same inside `self.embeddings` or `self.model`, the language model's, and the
// base model's (`base_model_prefix`). nullopt when none of these is known.
std::optional<std::pair<std::string, const ChildDecl *>>
Interpreter::input_embeddings_path(const ModuleClass &cls, int depth) const {
  if (depth > 4)
    return std::nullopt;
  auto child_at = [&](const std::string &path) -> const ChildDecl * {
    const ModuleClass *owner = &cls;
    const ChildDecl *child = nullptr;
    size_t start = 0;
    while (owner) {
      size_t dot = path.find('.', start);
      child = owner->find_child(std::string_view(path).substr(start, dot - start));
      if (!child || dot == std::string::npos)
        return child;
      owner = child->resolved;
      start = dot + 1;
    }
    return nullptr;
  };
  if (const FunctionDef *own = cls.find_method("get_input_embeddings")) {
    std::optional<std::string> member = returned_member(*own);
    if (!member)
      return std::nullopt;
    if (const ChildDecl *child = child_at(*member))
      return std::make_pair(*member, child);
    return std::nullopt;
  }
  std::string name(class_string(cls, "_input_embed_layer").value_or("embed_tokens"));
  for (std::string path : {name, "embeddings." + name, "model." + name})
    if (const ChildDecl *child = child_at(path))
      return std::make_pair(path, child);
  std::vector<std::string> delegates{"language_model"};
  if (auto prefix = class_string(cls, "base_model_prefix"); prefix && !prefix->empty())
    delegates.emplace_back(*prefix);
  for (const std::string &delegate : delegates)
    if (const ChildDecl *child = cls.find_child(delegate); child && child->resolved)
      if (auto inner = input_embeddings_path(*child->resolved, depth + 1))
        return std::make_pair(delegate + "." + inner->first, inner->second);
  return std::nullopt;
}

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
  if (leaf == "get_input_embeddings")
    if (auto embeddings = input_embeddings_path(*unit, 0))
      return module_value(intern(embeddings->first), embeddings->second);
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
