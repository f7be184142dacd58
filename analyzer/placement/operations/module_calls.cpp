// Module calls: a submodule's output sits on its device (its hook moves its inputs there), a
// ModuleList element's on the element's; a submodule's other methods run without a hook;
// `checkpoint(layer, x)` runs the module it is handed.
#include "placement/interpreter.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_set>

#include "model/text.h"
#include "model/torch_catalog.h"
#include "placement/operations/call_shapes.h"

namespace devlint {
namespace {

void assigned_names(const Expr *target, std::unordered_set<std::string_view> &out) {
  if (!target)
    return;
  if (target->kind == ExprKind::Name)
    out.insert(target->text);
  else if (target->kind == ExprKind::Tuple || target->kind == ExprKind::Starred)
    for (const Expr *e : target->operands)
      assigned_names(e, out);
}

void collect_statements(const std::vector<Stmt *> &body, std::vector<const Stmt *> &returns,
                        std::unordered_set<std::string_view> &assigned) {
  for (const Stmt *s : body) {
    if (s->kind == StmtKind::FunctionDef || s->kind == StmtKind::ClassDef)
      continue;
    if (s->kind == StmtKind::Return && s->value)
      returns.push_back(s);
    if (s->kind == StmtKind::Assign || s->kind == StmtKind::AugAssign || s->kind == StmtKind::For ||
        s->kind == StmtKind::With)
      for (const Expr *t : s->targets)
        assigned_names(t, assigned);
    collect_statements(s->body, returns, assigned);
    collect_statements(s->orelse, returns, assigned);
    for (const auto &handler : s->handlers)
      collect_statements(handler, returns, assigned);
    collect_statements(s->finalbody, returns, assigned);
  }
}

// What a returned expression hands back of its values as they are, out of training: the input
// of a dropout function (`F.dropout(x, p, self.training)`), of a view that only rearranges
// (`x.transpose(-1, -2)`), or the expression itself.
const Expr *values_returned(const Expr *e, int depth = 0) {
  static const std::unordered_set<std::string_view> rearranging = {
      "transpose", "permute", "view", "reshape", "contiguous", "squeeze", "unsqueeze", "flatten"};
  if (!e || e->kind != ExprKind::Call || depth > 4)
    return e;
  const Expr *callee = e->operands[0];
  std::string_view leaf = callee_leaf(e);
  if (torch_catalog::is_dropout_function(leaf)) {
    const Keyword *input = e->keyword("input");
    return values_returned(input                    ? input->value
                           : e->operands.size() > 1 ? e->operands[1]
                                                    : nullptr,
                           depth + 1);
  }
  if (callee->kind == ExprKind::Attribute && rearranging.count(leaf))
    return values_returned(callee->operands[0], depth + 1);
  return e;
}

// Whether `fn` may hand back one of its parameters with its values as it received them: `return
// x` with `x` never rebound, a dropout or a rearranging view of it, or the call of a module-level
// function of its file that may (`return drop_path(x, self.drop_prob, self.training)`, whose
// `drop_path` returns `input` when not training). Such a module passes its input through out of
// training, as a dropout does; one that rebinds what it returns (`corners = F.softmax(corners,
// ...)`, `return corners`) computes a value of its own.
bool may_return_argument(const Package &pkg, const SyntaxFile *file, const FunctionDef *fn,
                         int depth = 0) {
  std::vector<const Stmt *> returns;
  std::unordered_set<std::string_view> assigned;
  collect_statements(fn->body, returns, assigned);
  auto handed = [&](const Expr *e) {
    return e && e->kind == ExprKind::Name && e->text != "self" && !assigned.count(e->text) &&
           std::any_of(fn->parameters.begin(), fn->parameters.end(),
                       [&](const Parameter &p) { return !p.variadic && p.name == e->text; });
  };
  for (const Stmt *r : returns) {
    const Expr *v = values_returned(r->value);
    if (handed(v))
      return true;
    if (depth > 0 || !v || v->kind != ExprKind::Call || v->operands[0]->kind != ExprKind::Name ||
        std::none_of(v->operands.begin() + 1, v->operands.end(), handed))
      continue;
    auto own = file ? pkg.functions_of_file.find(file) : pkg.functions_of_file.end();
    if (own == pkg.functions_of_file.end())
      continue;
    auto helper = own->second.find(v->operands[0]->text);
    if (helper != own->second.end() && may_return_argument(pkg, file, helper->second, depth + 1))
      return true;
  }
  return false;
}

} // namespace

// What a class's forward hands a submodule of the package, by the callee's parameter: a split
// callee has no hook, so its arguments arrive where these values are (the placement ranking
// reads them). Only the caller's own forward counts: another method's arguments are not the
// ones the ranking places.
void Interpreter::note_module_arguments(const Value &callee, const Expr *call, const Args &args) {
  const ModuleClass *cls = callee.module_class;
  const FunctionDef *forward = cls ? cls->find_method("forward") : nullptr;
  if (!forward || !frame_->unit || muted_sites_ != 0 || cpu_probe_ || call_stack_.empty() ||
      call_stack_.front()->name != "forward")
    return;
  bool spread = false; // `*args` or `**kwargs`: may pass any parameter
  for (size_t i = 1; i < call->operands.size(); ++i)
    spread = spread || call->operands[i]->kind == ExprKind::Starred;
  for (const Keyword &k : call->keywords)
    spread = spread || k.name.empty();
  auto note = [&](std::string_view parameter, const Value *value, const Expr *passed) {
    ModuleArgument argument{frame_->unit, callee.path, parameter, {}};
    // `None` passes nothing. A number, a flag or an object has no place, but is passed: noted
    // without origins (the ranking asks whether an instance receives the argument at all).
    if (passed && passed->kind == ExprKind::NoneLiteral)
      return;
    if (value && value->kind == Value::Kind::Tensor)
      for (const Origin *o : value->origins) {
        if (o->kind == OriginKind::Input && (!o->function || o->function->name != "forward")) {
          argument.origins.clear();
          break;
        }
        argument.origins.push_back(o);
      }
    sink_.on_module_argument(argument);
  };
  for (size_t p = 1; p < forward->parameters.size(); ++p) {
    const auto &parameter = forward->parameters[p];
    if (parameter.variadic)
      continue;
    const Value *value = nullptr;
    const Expr *expression = nullptr;
    bool passed = false;
    if (p - 1 < args.positional.size() && !spread) {
      value = &args.positional[p - 1];
      passed = true;
      if (p < call->operands.size())
        expression = call->operands[p];
    } else if (const Value *keyword = args.keyword(parameter.name)) {
      value = keyword;
      passed = true;
      if (const Keyword *k = call->keyword(parameter.name))
        expression = k->value;
    }
    if (passed)
      note(parameter.name, value, expression);
    else if (spread)
      note(parameter.name, nullptr, nullptr);
  }
}

Value Interpreter::module_call(const Value &callee, const Expr *call, const Args &args) {
  if (callee.kind == Value::Kind::Module || callee.kind == Value::Kind::ModuleItem)
    note_module_arguments(callee, call, args);
  // The first argument of a layer, a norm or a projection is its input tensor.
  if (!args.positional.empty() && (!callee.child || callee.child->has_parameters))
    note_tensor(args.positional[0]);
  // A ModuleList element's forward gets the tensors handed to it as a single child's does.
  if (callee.kind == Value::Kind::Module ||
      (callee.kind == Value::Kind::ModuleItem && callee.module_class)) {
    const ModuleClass *cls = callee.module_class;
    if (cpu_probe_)
      probe_module_call(callee, cls, call, args);
    else if (cls && muted_sites_ == 0 && frame_->file && hands_cpu_tensor(args)) {
      std::vector<const Expr *> exprs;
      for_each_argument(call, args, [&](const Expr *e, const Value &) { exprs.push_back(e); });
      check_handed_cpu_tensors(cls, call, call_spelling(call, call->operands[0]), args, exprs);
    } else if (!cls && muted_sites_ == 0) {
      check_cpu_input_of_layer(callee, call, args);
    } else if (!cls && hand_parallel_run_ && muted_sites_ == 1) {
      check_unhooked_layer_call(callee, call, args);
    }
  }
  // An element of a list of modules that hold nothing (`self.class_embed[level](h, text)`):
  // no element is a map entry of its own, so nothing moves what it is handed, and what it
  // computes is made from those values where they are, not a per-element output.
  if (callee.kind == Value::Kind::ModuleItem && callee.module_class &&
      !callee.module_class->has_parameters() && !hand_parallel_run_ && !cpu_probe_)
    if (const FunctionDef *forward = callee.module_class->find_method("forward")) {
      ++muted_sites_;
      Value out = call_function(forward, call, args, true, callee.module_class);
      --muted_sites_;
      return out;
    }
  if (callee.kind == Value::Kind::ModuleItem) {
    if (hand_parallel_run_ && !cpu_probe_)
      check_unhooked_block_call(callee, call, args);
    const Origin *o = make_origin(OriginKind::LayerIteration, callee.path, call->range);
    Origin *element = const_cast<Origin *>(o);
    element->loop = loops_.empty() ? nullptr : loops_.back();
    // One element picked before the loop that calls it: the same module every pass.
    if (running_loop() && picked_before_running_loop(callee.picked_in_loop)) {
      element->loop = nullptr;
      element->set(OriginFact::Settled);
    } else if (callee.picked_in_loop) {
      element->loop = callee.picked_in_loop;
    } else if (!element->loop && comprehension_depth_ == 0) {
      // Called once, outside any loop (`self.embedders[key](x)`): one module's output, whose
      // pieces (`list(x.split(sizes))`) all sit on its device.
      element->set(OriginFact::Settled);
    }
    return tensor(o);
  }
  const ChildDecl *child = callee.child;
  if (child && child->is_loss)
    return loss_site(call, args, "self." + std::string(callee.path));
  // A module of the package that holds nothing has no device of its own: its forward's result is
  // made from the caller's values, as a helper's is (a rotary embedding built on the `device=` it
  // is handed, whatever the CPU origin of the indices it moves there). Its tensor arguments meet
  // on one device (where it is a map entry, its hook moves them there), as the pass-through
  // below assumes: each stands for the first. What it makes is made from the caller's values, so
  // nothing is renamed as its own; its sites are its own, checked with its own inputs.
  // A norm built without its weights (`affine_off`) is no helper: its forward reads weights that
  // are None, so its output is its input's, as an activation's is, below.
  if (child && !child->has_parameters && !child->affine_off && callee.kind == Value::Kind::Module &&
      callee.module_class)
    if (const FunctionDef *forward = callee.module_class->find_method("forward")) {
      const Value first = first_tensor(args);
      Args aligned = args;
      auto align = [&](Value &v) {
        if (v.kind == Value::Kind::Tensor && v.has_origins())
          v = first;
      };
      for (Value &v : aligned.positional)
        align(v);
      for (auto &keyword : aligned.keywords)
        align(keyword.second);
      ++muted_sites_;
      Value out = call_function(forward, call, aligned, true, callee.module_class);
      --muted_sites_;
      // What it computed from the tensors it was handed is where its hook moved them, when a
      // split of this unit makes it a map entry (as for a dropout, below). It is the module's
      // output unless the module may pass its input through (a drop path out of training).
      auto file = file_of_.find(forward);
      const bool passes_through =
          may_return_argument(pkg_, file != file_of_.end() ? file->second : nullptr, forward);
      mark_through_empty_child(out, first.origins, callee.path, passes_through ? nullptr : call);
      return out;
    }
  if (child && !child->has_parameters) {
    // activation/dropout: the output stays with the input, unless a split of this unit makes
    // the child a map entry, whose hook moves the input to the entry's device.
    Value out = first_tensor(args);
    if (callee.kind == Value::Kind::Module)
      mark_through_empty_child(out, out.origins, callee.path);
    return out;
  }
  // Where code is placed explicitly (LibTorch), a child that __init__ moved to a literal device
  // takes its inputs there: nothing moves them for it.
  if (child && !child->placed_device.empty() && callee.kind == Value::Kind::Module &&
      frame_->file && frame_->file->explicit_placement)
    placed_child_call(call, *child, args);
  // A split module has no hook: each element of the tuple it returns, each field of the output
  // object, is where the child that made it left it (a tied decoder beside the embeddings, the
  // next-sentence head on the last GPU, a mask from a weightless masking entry), not where its
  // last part is. Where the module is kept whole, that is its device too.
  if (callee.kind == Value::Kind::Module && callee.module_class && callee.child &&
      !callee.child->is_container && frame_->file && !frame_->file->explicit_placement) {
    const ReturnedChildOutputs &returned = returned_child_outputs(callee.module_class);
    if (!returned.elements.empty()) {
      Value out;
      out.kind = Value::Kind::Tuple;
      out.elements = std::make_shared<std::vector<Value>>();
      for (const std::string &name : returned.elements) {
        std::string_view path =
            name.empty() ? callee.path : intern(std::string(callee.path) + "." + name);
        Value element = tensor(make_origin(OriginKind::Child, path, call->range));
        element.element = true;
        out.elements->push_back(std::move(element));
      }
      return out;
    } else if (!returned.fields.empty()) {
      // An output object: each field named by the child that made it, the rest the module's.
      Value out = tensor(make_origin(OriginKind::Child, callee.path, call->range));
      auto fields = std::make_shared<std::vector<std::pair<std::string_view, Value>>>();
      for (const auto &[field, name] : returned.fields) {
        Value value = tensor(make_origin(
            OriginKind::Child, intern(std::string(callee.path) + "." + name), call->range));
        value.element = true;
        fields->emplace_back(intern(field), std::move(value));
      }
      out.fields = std::move(fields);
      return out;
    }
  }
  Value out = tensor(make_origin(OriginKind::Child, callee.path, call->range));
  if (const Origin *moved = callee.kind == Value::Kind::Module
                                ? caller_moved_child(frame_->unit, callee.path)
                                : nullptr) {
    const_cast<Origin *>(out.origins[0])->moved_by_caller = moved;
    caller_moved_child_call(call, out.origins[0], args);
  }
  return out;
}

const Interpreter::ReturnedChildOutputs &
Interpreter::returned_child_outputs(const ModuleClass *cls) const {
  auto [it, fresh] = returned_child_outputs_.try_emplace(cls);
  if (!fresh)
    return it->second;
  const FunctionDef *forward = cls->find_method("forward");
  if (!forward)
    return it->second;
  std::vector<const Stmt *> returns;
  std::unordered_set<std::string_view> assigned;
  collect_statements(forward->body, returns, assigned);
  if (returns.empty())
    return it->second;
  // `self.child(...)`: the child's name. A child holding nothing is a map entry of its own too
  // where the class is split (hooked to the device being filled when it was reached).
  auto single_child_call = [&](const Expr *e) -> std::string {
    if (!e || e->kind != ExprKind::Call || e->operands.empty())
      return "";
    const Expr *callee = e->operands[0];
    if (callee->kind != ExprKind::Attribute || !is_name(callee->operands[0], "self"))
      return "";
    for (const ChildDecl *child : cls->all_children())
      if (child->name == callee->text)
        return child->kind == ChildKind::Single && !child->is_loss ? child->name : "";
    return "";
  };
  // What one binding statement gives `name`: the child call it comes from (`x = self.c(h)`,
  // `x, mask = self.c(h)`), "None" for a literal None in a tuple assignment
  // (`x, mask = self.c(h), None`), empty otherwise.
  auto binding_child = [&](const Stmt *st, std::string_view name) -> std::string {
    if (st->kind != StmtKind::Assign || st->targets.size() != 1)
      return "";
    const Expr *target = st->targets[0];
    if (target->kind == ExprKind::Name)
      return target->text == name ? single_child_call(st->value) : "";
    if (target->kind != ExprKind::Tuple || !st->value)
      return "";
    for (size_t i = 0; i < target->operands.size(); ++i) {
      if (!is_name(target->operands[i], name))
        continue;
      if (st->value->kind == ExprKind::Call)
        return single_child_call(st->value);
      if (st->value->kind == ExprKind::Tuple &&
          st->value->operands.size() == target->operands.size())
        return st->value->operands[i]->kind == ExprKind::NoneLiteral
                   ? "None"
                   : single_child_call(st->value->operands[i]);
    }
    return "";
  };
  auto child_output = [&](const Expr *e) -> std::string {
    // `encoder_outputs.last_hidden_state`, `encoder_outputs[0]`: a part of the child's output.
    while (e && (e->kind == ExprKind::Attribute || e->kind == ExprKind::Subscript))
      e = e->operands[0];
    if (e && e->kind == ExprKind::Name) {
      // Every binding of the name in forward comes from the same child (or is None). An
      // argument keeps its own value where an `if` skips the binding: it needs one binding, in
      // forward's own body.
      const bool argument = forward->has_parameter(e->text);
      std::string child;
      bool same = true;
      size_t bindings = 0;
      find_statement(forward->body, [&](const Stmt *st) {
        if (!binds_name(st, e->text))
          return false;
        ++bindings;
        std::string from = binding_child(st, e->text);
        if (argument &&
            std::find(forward->body.begin(), forward->body.end(), st) == forward->body.end())
          from.clear();
        if (from == "None" && !argument)
          return false;
        same = same && !from.empty() && from != "None" && (child.empty() || child == from);
        child = from;
        return false;
      });
      return bindings && same && (!argument || bindings == 1) ? child : "";
    }
    return single_child_call(e);
  };
  // Only where two elements come from different children does the split tell them apart.
  auto distinct_children = [](const auto &names) {
    std::unordered_set<std::string> distinct(names.begin(), names.end());
    distinct.erase("");
    return distinct.size();
  };
  std::vector<std::string> children;
  bool tuples = true;
  for (const Stmt *r : returns) {
    const Expr *v = r->value;
    if (!v || v->kind != ExprKind::Tuple || v->operands.size() < 2 ||
        (!children.empty() && children.size() != v->operands.size())) {
      tuples = false;
      break;
    }
    std::vector<std::string> these;
    for (const Expr *element : v->operands)
      these.push_back(child_output(element));
    if (!children.empty() && these != children) {
      tuples = false;
      break;
    }
    children = std::move(these);
  }
  if (tuples && distinct_children(children) >= 2)
    it->second.elements = std::move(children);
  // `return XModelOutput(last_hidden_state=..., mask=mask)`: each field from its child. Only
  // the returns that build such an object count: reading a field needs one (a `return_dict`
  // tuple path is read by index, and keeps the module's origins).
  std::vector<std::pair<std::string, std::string>> fields;
  bool objects = false, consistent = true;
  for (const Stmt *r : returns) {
    const Expr *v = r->value;
    if (!v || v->kind != ExprKind::Call || v->operands.size() != 1 || v->keywords.empty() ||
        (v->operands[0]->kind != ExprKind::Name && v->operands[0]->kind != ExprKind::Attribute))
      continue;
    std::vector<std::pair<std::string, std::string>> these;
    for (const Keyword &k : v->keywords)
      if (!k.name.empty())
        these.emplace_back(std::string(k.name), child_output(k.value));
    consistent = consistent && (!objects || these == fields);
    objects = true;
    fields = std::move(these);
  }
  std::vector<std::string> field_children;
  for (const auto &field : fields)
    field_children.push_back(field.second);
  if (objects && consistent && distinct_children(field_children) >= 2)
    for (auto &field : fields)
      if (!field.second.empty())
        it->second.fields.push_back(std::move(field));
  return it->second;
}

// The origins of `v` among `handed` (the tensors a child holding nothing was handed) now went
// through that child: where a split of the unit makes it a map entry, its hook moved them to its
// device (docs/DEVICE_MODEL.md section 2). What it made itself (a CPU constructor) stays put.
// With `forward_call`, the child's own forward computed them: they are its output, named so,
// while their device is still decided by what it was handed and its hook.
void Interpreter::mark_through_empty_child(Value &v, const OriginSet &handed,
                                           std::string_view child_path, const Expr *forward_call) {
  if (v.kind == Value::Kind::Tuple && v.elements) {
    auto elements = std::make_shared<std::vector<Value>>(*v.elements);
    for (Value &e : *elements)
      mark_through_empty_child(e, handed, child_path, forward_call);
    v.elements = elements;
  }
  for (const Origin *&o : v.origins)
    if (std::find(handed.begin(), handed.end(), o) != handed.end()) {
      Origin &copy = origins_.emplace_back(*o);
      copy.through_empty_child = child_path;
      if (forward_call) {
        copy.made_by_empty_child = child_path;
        copy.empty_child_call = forward_call->range;
        copy.empty_child_file = frame_->file;
      }
      o = &copy;
    }
}

// `layer(x)` with `layer` a module bound in the running function, `loss_fct(logits, labels)`,
// `cls(...)` in a classmethod (building a module: nothing runs forward).
std::optional<Value> Interpreter::local_callable_call(const Expr *call) {
  const Expr *callee = call->operands[0];
  if (callee->kind != ExprKind::Name)
    return std::nullopt;
  std::string_view name = callee->text;
  auto local = frame_->env.find(name);
  if (local == frame_->env.end())
    return std::nullopt;
  // A copy: evaluating the arguments may replace the environment (a comprehension restores its
  // saved copy), which would leave a reference into it dangling.
  const Value v = local->second;
  if (v.kind == Value::Kind::Self && frame_->function && frame_->function->is_classmethod &&
      !frame_->function->parameters.empty() && frame_->function->parameters[0].name == name) {
    eval_args(call);
    return Value::neutral();
  }
  if (v.kind == Value::Kind::Module || v.kind == Value::Kind::ModuleItem)
    return module_call(v, call, eval_args(call));
  if (v.kind == Value::Kind::LossFunction)
    return loss_site(call, eval_args(call), std::string(name) + "(...)");
  return std::nullopt;
}

// `self.mlp.forward(x)` with `self.mlp` a module the constructor was handed: that module's
// output, as `self.mlp(x)` is.
std::optional<Value> Interpreter::handed_module_forward(const Expr *call) {
  const Expr *callee = call->operands[0];
  std::string_view leaf = call->text;
  if ((leaf != "forward" && leaf != "__call__") || !frame_->unit ||
      callee->operands[0]->kind != ExprKind::Attribute ||
      !is_name(callee->operands[0]->operands[0], "self"))
    return std::nullopt;
  std::string_view attr = callee->operands[0]->text;
  if (frame_->unit->find_child(attr) || frame_->env.count(self_key(callee->operands[0])) ||
      !handed_to_constructor(*frame_->unit, attr))
    return std::nullopt;
  return module_call(module_value(attr, nullptr), call, eval_args(call));
}

// A submodule of a class the package does not name (`AutoModel.from_config(...)`): the
// package's one method of that name, when it has one, is the one that runs. One the running
// class has too is a delegation (`get_input_embeddings`), not that method.
std::optional<Value> Interpreter::unnamed_submodule_method(const Expr *call,
                                                           const Value &receiver) {
  std::string_view leaf = call->text;
  if (frame_->unit && frame_->unit->find_method(leaf))
    return std::nullopt;
  const ModuleClass *owner = nullptr;
  const FunctionDef *method = nullptr;
  bool ambiguous = false;
  for (const auto &cls : pkg_.classes)
    if (const FunctionDef *m = cls->find_method(leaf)) {
      ambiguous = ambiguous || (method && method != m);
      if (!method) {
        method = m;
        owner = cls.get();
      }
    }
  if (!method || ambiguous)
    return std::nullopt;
  Value known = receiver;
  known.module_class = owner;
  return submodule_method_call(known, method, call, eval_args(call));
}

// `self.model.get_vision_tower()`, `self.decoder.generate(...)`, `self.encoder.embed(x)`: a
// method called on `self` or on a submodule.
Value Interpreter::module_receiver_call(const Expr *call, const Value &receiver) {
  const Expr *callee = call->operands[0];
  std::string_view leaf = call->text;
  const ModuleClass *cls = receiver.kind == Value::Kind::Module ? receiver.module_class : nullptr;
  // A getter returning a submodule is that submodule.
  if (cls)
    if (const FunctionDef *getter = cls->find_method(leaf))
      if (const ChildDecl *child = returned_child(getter, cls)) {
        eval_args(call);
        return module_value(intern(std::string(receiver.path) + "." + child->name), child);
      }
  // `self.language_model.get_input_embeddings()`: transformers' getter finds the embedding.
  if (cls && leaf == "get_input_embeddings" && call->operands.size() == 1)
    if (auto embeddings = input_embeddings_path(*cls, 0)) {
      eval_args(call);
      return module_value(intern(std::string(receiver.path) + "." + embeddings->first),
                          embeddings->second);
    }
  // `self.lm_head.to(device)`, `.float()`: nn.Module's casts and moves return the module itself.
  if (receiver.kind == Value::Kind::Module && receiver.child && !(cls && cls->find_method(leaf)) &&
      (leaf == "to" || leaf == "cuda" || leaf == "cpu" || leaf == "float" || leaf == "half" ||
       leaf == "double" || leaf == "bfloat16")) {
    eval_args(call);
    return receiver;
  }
  // A method other than `forward` called directly on a submodule: no hook runs, so its result
  // is no output of the submodule.
  const bool direct_method = receiver.kind == Value::Kind::Module && leaf != "forward" &&
                             leaf != "__call__" && !(cls && cls->find_child(leaf));
  if (direct_method && cls)
    if (const FunctionDef *method = cls->find_method(leaf))
      return submodule_method_call(receiver, method, call, eval_args(call));
  if (direct_method && !cls)
    if (std::optional<Value> out = unnamed_submodule_method(call, receiver))
      return *out;
  Value target = eval_attribute(callee);
  const bool module = target.kind == Value::Kind::Module || target.kind == Value::Kind::ModuleItem;
  if (leaf == "generate" && receiver.kind == Value::Kind::Module &&
      !(cls && cls->find_method(leaf))) {
    Args args = eval_args(call);
    Value result = generate_call(call, args, target);
    return module ? generated_ids(call, args, module_call(target, call, args)) : result;
  }
  if (module)
    return module_call(target, call, eval_args(call));
  eval_args(call);
  return target;
}

// `self.bbox_embed[idx](h)` where `__init__` left `self.bbox_embed = None` for the parent to set
// (`self.model.decoder.bbox_embed = self.bbox_embed`): an element of a module list the class
// does not declare, not a pass-through of `h`.
std::optional<Value>
Interpreter::undeclared_list_element_call(const Expr *call, const Value &target, const Args &args) {
  const Expr *callee = call->operands[0];
  if (callee->kind != ExprKind::Subscript || target.kind != Value::Kind::Neutral || !frame_->unit ||
      frame_->script)
    return std::nullopt;
  const Expr *base = callee->operands[0];
  if (base->kind != ExprKind::Attribute || !is_name(base->operands[0], "self") ||
      frame_->env.count(self_key(base)) || frame_->unit->find_child(base->text) ||
      frame_->unit->find_parameter(base->text) || frame_->unit->find_method(base->text))
    return std::nullopt;
  Value item;
  item.kind = Value::Kind::ModuleItem;
  item.path = base->text;
  item.picked_in_loop = picking_loop();
  return module_call(item, call, args);
}

std::optional<Value> Interpreter::call_handed_module(const Expr *call, const Args &args) {
  if (args.positional.empty() || (args.positional[0].kind != Value::Kind::Module &&
                                  args.positional[0].kind != Value::Kind::ModuleItem))
    return std::nullopt;
  Args rest = args;
  rest.positional.erase(rest.positional.begin());
  return module_call(args.positional[0], call, rest);
}

// The method is analysed as a helper with the caller's arguments: what it returns is derived
// from them (`torch.where(mask == -1, ids, mask)` is where `ids` and `mask` are), not the
// submodule's output. What it makes from the submodule's own parameters and children is on the
// submodule's devices, named from the caller (`self.decoder.proj`).
Value Interpreter::submodule_method_call(const Value &receiver, const FunctionDef *method,
                                         const Expr *call, const Args &args) {
  const size_t first_new = origins_.size();
  ++muted_sites_;
  Value out = call_function(method, call, args, true, receiver.module_class);
  --muted_sites_;
  std::unordered_set<const Origin *> made;
  for (size_t i = first_new; i < origins_.size(); ++i)
    made.insert(&origins_[i]);
  // A copy of one of the caller's own values made during the call (`torch.zeros(n,
  // device=input_ids.device)` with the caller's `input_ids`) still travels with that value: only
  // what the submodule's own code made is renamed as seen from the caller.
  std::set<std::tuple<const SyntaxFile *, uint32_t, uint32_t, OriginKind>> handed;
  std::function<void(const Value &)> collect = [&](const Value &v) {
    for (const Origin *o : v.origins)
      handed.emplace(o->file, o->range.begin, o->range.end, o->kind);
    if (v.elements)
      for (const Value &e : *v.elements)
        collect(e);
  };
  for (const Value &v : args.positional)
    collect(v);
  for (const auto &keyword : args.keywords)
    collect(keyword.second);
  auto callers_own = [&](const Origin *o) {
    return handed.count({o->file, o->range.begin, o->range.end, o->kind}) > 0;
  };
  std::function<void(Value &)> rename = [&](Value &v) {
    for (const Origin *&o : v.origins)
      if (made.count(o) && !callers_own(o))
        o = seen_from_caller(o, receiver.path);
    if (v.elements) {
      v.elements = std::make_shared<std::vector<Value>>(*v.elements);
      for (Value &e : *v.elements)
        rename(e);
    }
  };
  rename(out);
  // A getter's submodule (`return self.model.embed_tokens`), named from the caller.
  if ((out.kind == Value::Kind::Module || out.kind == Value::Kind::ModuleItem) && !out.path.empty())
    out.path = intern(std::string(receiver.path) + "." + std::string(out.path));
  return out;
}

const Origin *Interpreter::seen_from_caller(const Origin *o, std::string_view receiver_path) {
  switch (o->kind) {
  case OriginKind::Child:
  case OriginKind::Parameter:
  case OriginKind::LayerIteration:
  case OriginKind::Input: { // `self.device` of the submodule
    Origin &copy = origins_.emplace_back(*o);
    copy.moved_to = {}; // the submodule's own variable means nothing to its caller
    if (o->kind == OriginKind::Input)
      copy.kind = OriginKind::Child;
    copy.label = o->kind == OriginKind::Input
                     ? receiver_path
                     : intern(std::string(receiver_path) + "." + std::string(o->label));
    if (!o->through_empty_child.empty())
      copy.through_empty_child =
          intern(std::string(receiver_path) + "." + std::string(o->through_empty_child));
    if (!o->made_by_empty_child.empty())
      copy.made_by_empty_child =
          intern(std::string(receiver_path) + "." + std::string(o->made_by_empty_child));
    copy.unit = frame_->unit;
    copy.function = frame_->function;
    return &copy;
  }
  default:
    return o; // made on the CPU, on a literal device, or wherever a cache was made
  }
}

} // namespace devlint
