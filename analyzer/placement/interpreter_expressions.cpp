// Expressions: names, attributes of self and of submodules, subscripts, operators.
#include "placement/interpreter.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <unordered_set>

#include "model/text.h"
#include "model/torch_catalog.h"
#include "placement/condition_text.h"

namespace devlint {

// `for name, layer in self.layers.items()`: names and members of a ModuleDict.
std::optional<Value> Interpreter::module_dict_element(const Expr *iterable) {
  if (!iterable || iterable->kind != ExprKind::Call ||
      iterable->operands[0]->kind != ExprKind::Attribute || iterable->operands.size() != 1)
    return std::nullopt;
  std::string_view method = iterable->operands[0]->text;
  if (method != "items" && method != "values" && method != "keys")
    return std::nullopt;
  Value owner = eval(iterable->operands[0]->operands[0]);
  if (owner.kind != Value::Kind::Module || !owner.child ||
      (owner.child->kind == ChildKind::Single && !owner.child->is_container))
    return std::nullopt;
  Value item;
  item.kind = Value::Kind::ModuleItem;
  item.picked_in_loop = picking_loop();
  item.path = owner.path;
  if (method == "keys")
    return Value::neutral();
  if (method == "values")
    return item;
  Value pair;
  pair.kind = Value::Kind::Tuple;
  pair.elements = std::make_shared<std::vector<Value>>(std::vector<Value>{Value::neutral(), item});
  return pair;
}

Value Interpreter::element_of(const Expr *iterable, bool *pieces_of_one_tensor) {
  if (pieces_of_one_tensor)
    *pieces_of_one_tensor = false;
  if (iterable && iterable->kind == ExprKind::Call &&
      iterable->operands[0]->kind == ExprKind::Name) {
    std::string_view fn = iterable->operands[0]->text;
    if (fn == "enumerate" && iterable->operands.size() > 1) {
      Value pair;
      pair.kind = Value::Kind::Tuple;
      pair.elements = std::make_shared<std::vector<Value>>(std::vector<Value>{
          Value::neutral(), element_of(iterable->operands[1], pieces_of_one_tensor)});
      return pair;
    }
    if (fn == "zip") {
      Value tuple;
      tuple.kind = Value::Kind::Tuple;
      tuple.elements = std::make_shared<std::vector<Value>>();
      for (size_t i = 1; i < iterable->operands.size(); ++i)
        tuple.elements->push_back(element_of(iterable->operands[i]));
      return tuple;
    }
    if (fn == "range")
      return Value::neutral();
    if ((fn == "reversed" || fn == "list" || fn == "sorted") && iterable->operands.size() > 1)
      return element_of(iterable->operands[1], pieces_of_one_tensor);
  }
  if (std::optional<Value> item = module_dict_element(iterable))
    return *item;
  Value v = eval(iterable);
  // `for layer_past in past_key_values`: each layer's cache sits on that layer's device
  // (docs/DEVICE_MODEL.md section 3b, `_reorder_cache`).
  for (const Origin *o : v.origins)
    if (o->kind == OriginKind::Skip && frame_->unit &&
        (o->has(OriginFact::LayerCaches) || o->label.substr(0, 4) == "past"))
      return tensor(make_origin(OriginKind::LayerIteration, o->label, iterable->range));
  switch (v.kind) {
  case Value::Kind::Module:
    if (v.child && (v.child->kind != ChildKind::Single || v.child->is_container)) {
      Value item;
      item.kind = Value::Kind::ModuleItem;
      item.picked_in_loop = picking_loop();
      item.path = v.path;
      item.module_class = v.child->resolved; // the elements' class, when one class builds them
      return item;
    }
    return Value::neutral();
  case Value::Kind::Tuple:
    // `for features, frames in ((image_features, 1), (video_features, n))`: the elements joined
    // position by position, so a number stays apart from the tensors beside it.
    if (v.elements && !v.elements->empty() && v.origins.empty()) {
      Value item = v.elements->front();
      for (size_t i = 1; i < v.elements->size(); ++i)
        item = join(item, (*v.elements)[i]);
      if (item.kind == Value::Kind::Tuple)
        return item;
    }
    return as_tensor(v);
  case Value::Kind::Tensor:
    // `for w in weights` over a 1-D CPU tensor: each element is 0-dim (vectors.cpp).
    if (std::optional<Value> element = zero_dim_element(v))
      return *element;
    if (pieces_of_one_tensor)
      *pieces_of_one_tensor = true;
    return v;
  default:
    return Value::neutral();
  }
}

// `[f(x) for x in xs]`: a list whose elements are the body's value on each pass.
Value Interpreter::eval_comprehension(const Expr *e) {
  Conditional conditional(frame_); // parts of it run only sometimes
  if (std::optional<Value> each = comprehension_over_literal(e))
    return *each;
  bool pieces_of_one_tensor = false;
  Value element = element_of(e->operands[1], &pieces_of_one_tensor);
  size_t origins_before = origins_.size();
  Value body;
  ++comprehension_depth_;
  if (environment_too_large()) { // see kMaxJoinedEnvironment
    assign(e->operands[2], element, nullptr);
    body = eval(e->operands[0]);
  } else {
    Env saved = frame_->env;
    assign(e->operands[2], element, nullptr);
    body = eval(e->operands[0]);
    frame_->env = std::move(saved);
  }
  --comprehension_depth_;
  Value v;
  v.kind = Value::Kind::Tuple;
  v.origins = origins_of(body);
  // Outside the comprehension its elements are no longer "this iteration's". Over the pieces of
  // one tensor (`[c * scale for c in x.unbind(-1)]`), what the elements take from values made
  // before it ran is one pass's value in every element: a list of one pass.
  std::unordered_set<const Origin *> made_in_body;
  if (pieces_of_one_tensor)
    for (size_t i = origins_before; i < origins_.size(); ++i)
      made_in_body.insert(&origins_[i]);
  for (const Origin *&o : v.origins)
    if (o->kind == OriginKind::LayerIteration && !o->has(OriginFact::Collected) &&
        !o->has(OriginFact::OnePassList)) {
      bool one_pass = pieces_of_one_tensor && !made_in_body.count(o);
      Origin &copy = origins_.emplace_back(*o);
      copy.set(one_pass ? OriginFact::OnePassList : OriginFact::Collected);
      o = &copy;
    }
  return v;
}

// `tuple(t[~stops] for t in [descriptors, keypoints, indices])`, one `for` over a literal list
// and no filter: one element per listed value, each computed from that value alone, so that
// unpacking it (`descriptors, keypoints, indices = ...`) gives each name its own.
std::optional<Value> Interpreter::comprehension_over_literal(const Expr *e) {
  constexpr size_t kMaxListed = 8;
  const Expr *listed = e->operands.size() == 3 && e->keywords.empty() ? e->operands[1] : nullptr;
  if (!listed || listed->kind != ExprKind::Tuple || listed->operands.size() < 2 ||
      listed->operands.size() > kMaxListed || environment_too_large() ||
      std::any_of(listed->operands.begin(), listed->operands.end(),
                  [](const Expr *item) { return item->kind == ExprKind::Starred; }))
    return std::nullopt;
  Value v;
  v.kind = Value::Kind::Tuple;
  v.elements = std::make_shared<std::vector<Value>>();
  ++comprehension_depth_;
  for (const Expr *item : listed->operands) {
    Value value = eval(item);
    Env saved = frame_->env;
    assign(e->operands[2], value, nullptr);
    Value body = eval(e->operands[0]);
    frame_->env = std::move(saved);
    // Outside the comprehension its layer outputs are no longer "this iteration's".
    for (const Origin *&o : body.origins)
      if (o->kind == OriginKind::LayerIteration && !o->has(OriginFact::Collected) &&
          !o->has(OriginFact::OnePassList)) {
        Origin &copy = origins_.emplace_back(*o);
        copy.set(OriginFact::Collected);
        o = &copy;
      }
    devlint::add_origins(v.origins, origins_of(body), limits_.max_origins);
    v.elements->push_back(std::move(body));
  }
  --comprehension_depth_;
  return v;
}

Value Interpreter::eval(const Expr *e) {
  if (!e)
    return Value::neutral();
  switch (e->kind) {
  case ExprKind::Name: {
    auto it = frame_->env.find(e->text);
    if (it != frame_->env.end())
      return it->second;
    return Value::neutral();
  }
  case ExprKind::Attribute:
    return eval_attribute(e);
  case ExprKind::Subscript:
    return eval_subscript(e);
  case ExprKind::Call:
    return eval_call(e);
  case ExprKind::BinaryOp: {
    Value l = eval(e->operands[0]);
    Value r = eval(e->operands[1]);
    return binary(std::string(e->text), e->operands[0], l, e->operands[1], r, e);
  }
  case ExprKind::Compare: {
    Value l = eval(e->operands[0]);
    Value r = eval(e->operands[1]);
    std::string_view op = e->text;
    if (op == "is" || op == "in" || op == "not" || starts_with(op, "is") || op == "not in")
      return Value::neutral();
    return binary(std::string(op), e->operands[0], l, e->operands[1], r, e);
  }
  case ExprKind::UnaryOp:
    return eval(e->operands[0]);
  case ExprKind::BoolOp: {
    Conditional conditional(frame_); // parts of it run only sometimes
    if (e->text == "not") {
      eval(e->operands[0]);
      return Value::neutral();
    }
    Value out;
    for (const Expr *o : e->operands)
      out = join(out, eval(o));
    return out;
  }
  case ExprKind::Conditional: {
    if (std::optional<bool> always =
            frame_->file ? constant_truth(*frame_->file, e->operands[1]) : std::nullopt)
      return eval(e->operands[*always ? 0 : 2]);
    Conditional conditional(frame_); // parts of it run only sometimes
    Value a = eval(e->operands[0]);
    eval(e->operands[1]);
    Value b = eval(e->operands[2]);
    std::string_view chosen = frame_->file ? frame_->file->source->slice(e->range) : "";
    if (std::optional<Value> device = join_devices(a, b, chosen, e->range))
      return *device;
    return join(a, b);
  }
  case ExprKind::Tuple:
  case ExprKind::Dict: {
    Value v;
    v.kind = Value::Kind::Tuple;
    v.elements = std::make_shared<std::vector<Value>>();
    v.made_in_loop = loops_.empty() ? nullptr : loops_.back();
    for (const Expr *o : e->operands)
      v.elements->push_back(o->kind == ExprKind::Starred ? as_tensor(eval(o->operands[0]))
                                                         : eval(o));
    // `[hidden_states[0]]` after the loop over the layers holds the last layer's output only.
    for (Value &element : *v.elements)
      for (const Origin *&origin : element.origins)
        origin = final_pass_version(origin);
    // `{"inputs_embeds": embeds, "labels": labels}`: reading `d["labels"]` gives that entry.
    if (e->kind == ExprKind::Dict && e->keywords.size() == v.elements->size() &&
        std::all_of(e->keywords.begin(), e->keywords.end(), [](const Keyword &k) {
          return k.value && k.value->kind == ExprKind::String;
        })) {
      auto entries = std::make_shared<std::vector<std::pair<std::string_view, Value>>>();
      for (size_t i = 0; i < v.elements->size(); ++i)
        entries->emplace_back(e->keywords[i].value->text, (*v.elements)[i]);
      v.fields = std::move(entries);
    }
    return v;
  }
  case ExprKind::String: {
    Value v;
    v.kind = Value::Kind::Str;
    v.text = e->text;
    return v;
  }
  case ExprKind::Starred:
    return eval(e->operands[0]);
  case ExprKind::Comprehension:
    return eval_comprehension(e);
  default:
    return Value::neutral();
  }
}

// A member module's parameter (`self.head.weight`): where that module is, also when script code
// moved it apart from its model.
Value Interpreter::member_parameter(std::string_view path, SourceRange range) {
  Value v = tensor(make_origin(OriginKind::Parameter, path, range));
  const_cast<Origin *>(v.origins[0])->moved_by_caller = caller_moved_child(frame_->unit, path);
  return v;
}

std::optional<Value> Interpreter::declared_member(std::string_view attr) {
  const ModuleClass *unit = frame_->unit;
  if (!unit)
    return std::nullopt;
  if (const ChildDecl *child = unit->find_child(attr))
    return module_value(attr, child);
  if (const ParameterDecl *param = unit->find_parameter(attr)) {
    if (param->is_scalar)
      return Value::neutral(); // a 0-dim buffer mixes with any device
    return tensor(make_origin(OriginKind::Parameter, attr, param->range));
  }
  if (const PlainTensorAttribute *plain = unit->find_plain_tensor(attr)) {
    if (plain->created_on_cpu && !unit->is_reassigned(attr))
      return tensor(make_origin(OriginKind::PlainTensor, attr, plain->range));
    return Value::neutral();
  }
  return std::nullopt;
}

namespace {

bool is_tensor_constructor_call(const Expr *e) {
  return e && e->kind == ExprKind::Call && starts_with(dotted_name(e->operands[0]), "torch.") &&
         torch_catalog::is_tensor_constructor(callee_leaf(e));
}

// Whether `body` assigns `self.<attr>` (alone or in a tuple of targets).
// `none_too`: `self.x = None` counts (a placeholder in `__init__` may not).
bool assigns_self_attribute_stmt(const Stmt *s, std::string_view attr, bool none_too = true) {
  auto self_attr = [&](const Expr *t) {
    return t->kind == ExprKind::Attribute && t->text == attr && is_name(t->operands[0], "self");
  };
  if (s->kind != StmtKind::Assign && s->kind != StmtKind::AugAssign)
    return false;
  if (!none_too && s->value && s->value->kind == ExprKind::NoneLiteral)
    return false;
  for (const Expr *t : s->targets)
    if (self_attr(t) || (t->kind == ExprKind::Tuple &&
                         std::any_of(t->operands.begin(), t->operands.end(), self_attr)))
      return true;
  return false;
}

// The offset of the first statement of `body` that assigns `self.<attr>`.
uint32_t first_self_assignment(const std::vector<Stmt *> &body, std::string_view attr) {
  uint32_t first = UINT32_MAX;
  find_statement(body, [&](const Stmt *s) {
    if (assigns_self_attribute_stmt(s, attr))
      first = std::min(first, s->range.begin);
    return false;
  });
  return first;
}

} // namespace

const Origin *Interpreter::allocated_for_every_layer(std::string_view attr, const Expr *read) {
  const ModuleClass *unit = frame_->unit;
  if (!unit)
    return nullptr;
  // Every undeclared `self.x` read asks: the scan of the class and the package runs once.
  auto [found, inserted] =
      setup_allocations_.try_emplace(std::make_tuple(unit, frame_->function, attr));
  SetupAllocation &setup = found->second;
  if (inserted)
    setup = find_setup_allocation(*unit, attr);
  if (!setup.allocation || setup.replaced_by_reader_at < read->range.begin)
    return nullptr;
  const Origin *o = make_origin(OriginKind::HeldState, intern("self." + std::string(attr)),
                                setup.allocation->range);
  const_cast<Origin *>(o)->allocated_by = setup.by;
  return o;
}

// A tensor an override of `nn.Module.train` caches on `self` (`self.ab =
// self.attention_biases[:, idxs]` when leaving training mode) is made when `model.eval()` runs,
// and `from_pretrained` calls it while the weights are still where they were loaded: the CPU,
// before a script's `model.to(device)`, which moves parameters and buffers, not plain attributes.
// Only where no other method (the reader aside) replaces it.
const Origin *Interpreter::set_when_mode_changes(std::string_view attr) {
  const ModuleClass *unit = frame_->unit;
  const FunctionDef *train = unit ? unit->find_method("train") : nullptr;
  if (!train || train == frame_->function)
    return nullptr;
  const Stmt *made = find_statement(
      train->body, [&](const Stmt *s) { return assigns_self_attribute_stmt(s, attr, false); });
  if (!made || made->kind != StmtKind::Assign)
    return nullptr;
  const ClassAttributeWrites &writes = class_attribute_writes(*unit);
  if (auto assigning = writes.assigned_by.find(attr); assigning != writes.assigned_by.end())
    for (const FunctionDef *m : assigning->second)
      if (m != train && m != frame_->function)
        return nullptr;
  const Origin *o = make_origin(OriginKind::PlainTensor, attr, made->range);
  const_cast<Origin *>(o)->set(OriginFact::ModeCache);
  return o;
}

Interpreter::SetupAllocation Interpreter::find_setup_allocation(const ModuleClass &unit,
                                                                std::string_view attr) {
  // Replaced by the class itself besides (`self.conv1d_state = pad(x)` on a prefill path): which
  // tensor a read sees depends on the order of calls. Not `__init__`'s placeholder
  // (`self.recurrent_states = None`), and not the reading method's own write after the read
  // (`k_out = self.key_states[...]; ...; self.key_states = k_out`): the first call after the
  // setup still reads the allocated tensor.
  const FunctionDef *reader = frame_->function;
  const ClassAttributeWrites &writes = class_attribute_writes(unit);
  auto replaced_outside = [&](const FunctionDef *allocating) {
    auto assigning = writes.assigned_by.find(attr);
    return assigning != writes.assigned_by.end() &&
           std::any_of(assigning->second.begin(), assigning->second.end(),
                       [&](const FunctionDef *m) { return m != allocating && m != reader; });
  };
  SetupAllocation found;
  if (auto allocations = writes.self_allocations.find(attr);
      allocations != writes.self_allocations.end())
    for (const auto &[method, allocation] : allocations->second) {
      if (method->name == "__init__" || method == reader)
        continue;
      if (!writes.called_methods.count(method->name) && !replaced_outside(method)) {
        found = {allocation, method->name};
        break;
      }
    }
  if (!found.allocation && !replaced_outside(nullptr))
    for (const ForeignAllocation &other : foreign_allocations(attr))
      if (other.cls != &unit) {
        found = {other.allocation,
                 intern(std::string(other.cls->name) + "." + std::string(other.method->name))};
        break;
      }
  if (found.allocation && reader)
    found.replaced_by_reader_at = first_self_assignment(reader->body, attr);
  return found;
}

const Interpreter::ClassAttributeWrites &
Interpreter::class_attribute_writes(const ModuleClass &unit) {
  auto [entry, inserted] = class_attribute_writes_.try_emplace(&unit);
  ClassAttributeWrites &writes = entry->second;
  if (!inserted)
    return writes;
  // One pass over the class's methods, for every attribute: `self.<attr> = torch.zeros(...,
  // device=device)` with `device` a parameter of the method; any assignment of `self.<attr>`
  // (alone or in a tuple of targets); calls `self.<method>(...)`.
  auto self_attribute = [](const Expr *t) {
    return t->kind == ExprKind::Attribute && is_name(t->operands[0], "self");
  };
  auto note_call = [&](const Expr *x) {
    if (x->kind == ExprKind::Call && x->operands[0]->kind == ExprKind::Attribute &&
        is_name(x->operands[0]->operands[0], "self"))
      writes.called_methods.insert(x->operands[0]->text);
    return false;
  };
  for (const FunctionDef *method : unit.def->methods) {
    bool none_counts = method->name != "__init__";            // see assigns_self_attribute_stmt
    std::unordered_set<std::string_view> allocated, assigned; // the first per method
    auto assigns = [&](std::string_view attr) {
      if (assigned.insert(attr).second)
        writes.assigned_by[attr].push_back(method);
    };
    find_statement(method->body, [&](const Stmt *s) {
      any_subexpression(s->value, note_call, 64, false);
      if ((s->kind == StmtKind::Assign || s->kind == StmtKind::AugAssign) &&
          (none_counts || !s->value || s->value->kind != ExprKind::NoneLiteral))
        for (const Expr *t : s->targets) {
          if (self_attribute(t))
            assigns(t->text);
          else if (t->kind == ExprKind::Tuple)
            for (const Expr *element : t->operands)
              if (self_attribute(element))
                assigns(element->text);
        }
      if (s->kind != StmtKind::Assign || !is_tensor_constructor_call(s->value))
        return false;
      const Keyword *device = s->value->keyword("device");
      if (!device || device->value->kind != ExprKind::Name ||
          !method->has_parameter(device->value->text))
        return false;
      for (const Expr *t : s->targets)
        if (self_attribute(t) && allocated.insert(t->text).second)
          writes.self_allocations[t->text].emplace_back(method, s);
      return false;
    });
  }
  return writes;
}

const std::vector<Interpreter::ForeignAllocation> &
Interpreter::foreign_allocations(std::string_view attr) {
  if (!foreign_allocations_indexed_) {
    // An assignment (in a method or a block nested in it) of a fresh tensor to
    // `<object>.<attr>` with another object than `self` (`layer.attn.attr = torch.zeros(...)`),
    // for every attribute at once: per
    // class and method, its first matching statement for each attribute, in the same order.
    foreign_allocations_indexed_ = true;
    for (const auto &cls : pkg_.classes)
      for (const FunctionDef *method : cls->def->methods) {
        std::unordered_set<std::string_view> seen; // the first statement per attribute
        find_statement(method->body, [&](const Stmt *s) {
          if (s->kind != StmtKind::Assign || !is_tensor_constructor_call(s->value))
            return false;
          for (const Expr *t : s->targets)
            if (t->kind == ExprKind::Attribute && !is_name(t->operands[0], "self") &&
                seen.insert(t->text).second)
              foreign_allocations_[t->text].push_back({cls.get(), method, s});
          return false;
        });
      }
  }
  static const std::vector<ForeignAllocation> none;
  auto it = foreign_allocations_.find(attr);
  return it == foreign_allocations_.end() ? none : it->second;
}

Env Interpreter::join_env(const Env &a, const Env &b) {
  Env out = devlint::join_env(a, b, limits_.max_origins);
  // `if n > len(self.weights): self.weights = nn.Parameter(...)`: the path that skips the
  // assignment still reads the registered parameter.
  auto declared_on_other_path = [&](const Env &assigned, const Env &other) {
    for (const auto &entry : assigned) {
      std::string_view key = entry.first;
      if (!starts_with(key, "self.") || other.count(key))
        continue;
      std::string_view attr = key.substr(5);
      if (attr.find_first_of(".[ ") != std::string_view::npos)
        continue;
      std::optional<Value> declared = declared_member(attr);
      if (declared && declared->kind == Value::Kind::Tensor) {
        Value &joined = out[key];
        joined = join(joined, *declared);
      }
    }
  };
  declared_on_other_path(a, b);
  declared_on_other_path(b, a);
  // `device = torch::kCPU; if (torch::cuda::is_available()) device = torch::kCUDA;`: a device
  // chosen at run time, the variable's own.
  if (places_explicitly())
    for (const auto &[key, value] : a)
      if (auto other = b.find(key); other != b.end() && is_device_value(value))
        if (std::optional<Value> device =
                join_devices(value, other->second,
                             intern(std::string(key) + "@" +
                                    std::string(frame_->function ? frame_->function->name : "")),
                             frame_->statement ? frame_->statement->range : SourceRange{}))
          out[key] =
              named_device(*device, key,
                           (*device).origins.empty() ? SourceRange{} : (*device).origins[0]->range);
  return out;
}

std::string_view Interpreter::self_key(const Expr *e) {
  return frame_->file ? frame_->file->source->slice(e->range) : e->text;
}

Value Interpreter::module_value(std::string_view path, const ChildDecl *child) {
  Value v;
  v.kind = Value::Kind::Module;
  v.path = path;
  v.child = child;
  v.module_class = child ? child->resolved : nullptr;
  return v;
}

// `cache_params` is the argument object itself, as the caller passed it.
bool Interpreter::is_argument_object(const Expr *object, const Value &v) const {
  return object->kind == ExprKind::Name && v.has_origins() &&
         std::all_of(v.origins.begin(), v.origins.end(), [&](const Origin *o) {
           return (o->kind == OriginKind::Input || o->kind == OriginKind::Skip) &&
                  !o->has(OriginFact::LayerCaches) && o->label == object->text;
         });
}

Value Interpreter::eval_attribute(const Expr *e) {
  const Expr *object = e->operands[0];
  std::string_view attr = e->text;
  if (std::optional<Value> dealt = pipeline_attribute(e))
    return *dealt;
  if (is_name(object, "self") ||
      (object->kind == ExprKind::Name && frame_->env.count(object->text) &&
       frame_->env[object->text].kind == Value::Kind::Self)) {
    if (frame_->nesting == 0 && frame_->function &&
        std::find(frame_->members_read.begin(), frame_->members_read.end(), attr) ==
            frame_->members_read.end())
      frame_->members_read.push_back(attr);
    auto assigned = frame_->env.find(self_key(e));
    if (assigned != frame_->env.end())
      return assigned->second;
    const ModuleClass *unit = frame_->unit;
    if (!unit)
      return Value::neutral();
    if (std::optional<Value> declared = declared_member(attr))
      return *declared;
    if (const Origin *allocated = allocated_for_every_layer(attr, e))
      return tensor(allocated);
    if (const Origin *cached = set_when_mode_changes(attr))
      return tensor(cached);
    if (attr == "device")
      return device_of(tensor(make_origin(OriginKind::Input, "self.device", e->range)));
    if (unit->has_builtin_parameters && (attr == "weight" || attr == "bias"))
      return tensor(make_origin(OriginKind::Parameter, attr, e->range));
    return Value::neutral();
  }
  Value base = eval(object);
  if (base.fields)
    for (const auto &[name, value] : *base.fields)
      if (name == attr)
        return value;
  // `layer.__call__` handed to a checkpointing helper is the layer itself.
  if ((base.kind == Value::Kind::Module || base.kind == Value::Kind::ModuleItem) &&
      (attr == "__call__" || attr == "forward"))
    return base;
  switch (base.kind) {
  case Value::Kind::Module: {
    std::string_view path = intern(std::string(base.path) + "." + std::string(attr));
    if (base.module_class) {
      if (const ChildDecl *child = base.module_class->find_child(attr))
        return module_value(path, child);
      // A parameter read directly, not through a call: no hook moves it.
      if (base.module_class->find_parameter(attr) || attr == "weight" || attr == "bias")
        return member_parameter(path, e->range);
    }
    if (attr == "weight" || attr == "bias")
      return member_parameter(path, e->range);
    if (attr == "device")
      return device_of(tensor(make_origin(OriginKind::Child, base.path, e->range)));
    if (attr == "config" || attr == "dtype" || attr == "training")
      return Value::neutral();
    // An unknown attribute of an external module: a submodule or a method, on its device.
    return module_value(path, nullptr);
  }
  case Value::Kind::Tensor:
    if (attr == "device" || attr == "shape" || attr == "dtype")
      note_tensor(base);
    if (attr == "device")
      return device_of(base);
    if (torch_catalog::is_non_tensor_attribute(attr))
      return Value::neutral();
    // `cache_params.ssm_states` inside a module: the state object came in as an argument, its
    // tensors stayed where its builder allocated them.
    if (frame_->unit && held_state_attributes_.count(attr) && is_argument_object(object, base))
      return tensor(make_origin(OriginKind::HeldState,
                                intern(std::string(object->text) + "." + std::string(attr)),
                                e->range));
    return base;
  case Value::Kind::Tuple:
    if (torch_catalog::is_non_tensor_attribute(attr))
      return Value::neutral();
    return as_tensor(base);
  case Value::Kind::Device:
    return Value::neutral(); // device.type, device.index
  default:
    return Value::neutral();
  }
}

const Expr *Interpreter::constant_index(const Expr *e) {
  if (e && (e->kind == ExprKind::Number ||
            (e->kind == ExprKind::UnaryOp && e->operands[0]->kind == ExprKind::Number)))
    return e;
  return nullptr;
}

namespace {

// `v[i]`, `v[idx[k]]`, `v[n - 1]`: an index that may be a Python int, not a slice, `None`, a
// tuple of indices or `...`.
bool reads_one_element(const Expr *index) {
  switch (index->kind) {
  case ExprKind::Name:
  case ExprKind::Number:
  case ExprKind::Attribute:
  case ExprKind::Subscript:
  case ExprKind::BinaryOp:
  case ExprKind::UnaryOp:
  case ExprKind::Call:
    return true;
  default:
    return false;
  }
}

// `v[None]`, `v[..., None]`, `v[(i, j)]`: a result of another rank than the tensor indexed.
bool adds_dimension(const Expr *index) {
  return index->kind == ExprKind::NoneLiteral || index->kind == ExprKind::Tuple ||
         index->kind == ExprKind::Other;
}

} // namespace

Value Interpreter::eval_subscript(const Expr *e) {
  tensor_subscripts_.erase(e);
  Value base = eval(e->operands[0]);
  switch (base.kind) {
  case Value::Kind::Module: {
    // `self.decoder.class_embed[-1]`: a container the submodule's class does not declare (set
    // from outside) still holds modules: calling an element is that element's output.
    const bool undeclared =
        !base.child && !base.module_class && base.path.find('.') != base.path.npos;
    if (!undeclared &&
        (!base.child || (base.child->kind == ChildKind::Single && !base.child->is_container)))
      return Value::neutral();
    const Expr *index = e->operands.size() == 2 ? e->operands[1] : nullptr;
    // `self.layers[1:]`, `self.layers[: config.num_hidden_layers]`: a slice of a ModuleList is a
    // ModuleList of the same members, one per pass of a loop over it, not one module.
    if (index && index->kind == ExprKind::Slice) {
      for (const Expr *bound : index->operands)
        eval(bound);
      return base;
    }
    if (const Expr *k = constant_index(index)) {
      std::string text =
          std::string(base.path) + "." +
          std::string(frame_->file ? frame_->file->source->slice(k->range) : std::string_view("0"));
      Value v = module_value(intern(text), nullptr);
      v.module_class = base.child ? base.child->resolved : nullptr;
      // A list `__init__` filled by appends of different classes: the one appended there.
      if (base.child && base.child->appended_resolved.size() > 1) {
        const auto &appended = base.child->appended_resolved;
        const long count = static_cast<long>(appended.size());
        long position =
            std::strtol(std::string(text.substr(base.path.size() + 1)).c_str(), nullptr, 10);
        if (position < 0)
          position += count;
        if (position >= 0 && position < count && appended[static_cast<size_t>(position)])
          v.module_class = appended[static_cast<size_t>(position)];
      }
      return v;
    }
    for (size_t i = 1; i < e->operands.size(); ++i)
      eval(e->operands[i]);
    Value item;
    item.kind = Value::Kind::ModuleItem;
    item.picked_in_loop = picking_loop();
    item.path = base.path;
    item.module_class = base.child ? base.child->resolved : nullptr;
    return item;
  }
  case Value::Kind::Tuple: {
    const Expr *index = e->operands.size() == 2 ? e->operands[1] : nullptr;
    if (base.fields && index && index->kind == ExprKind::String)
      for (const auto &[key, value] : *base.fields)
        if (key == index->text)
          return value;
    if (base.elements && index && index->kind == ExprKind::Number) {
      size_t i =
          static_cast<size_t>(std::atoi(std::string(index->range.end - index->range.begin
                                                        ? frame_->file->source->slice(index->range)
                                                        : "0")
                                            .c_str()));
      if (i < base.elements->size())
        return (*base.elements)[i];
    }
    if (index && index->kind == ExprKind::Slice)
      return base;
    return as_tensor(base);
  }
  case Value::Kind::Tensor: {
    // `offsets[i]` with a Python int of a 1-D CPU tensor: a 0-dim element (vectors.cpp).
    std::vector<Value> indices;
    for (size_t i = 1; i < e->operands.size(); ++i)
      indices.push_back(eval(e->operands[i]));
    if (indices.size() == 1 && reads_one_element(e->operands[1]) &&
        (indices[0].kind != Value::Kind::Tensor || maybe_number(e->operands[1], indices[0])))
      if (std::optional<Value> element = zero_dim_element(base))
        return *element;
    Site site;
    site.kind = SiteKind::Indexing;
    site.expr = e;
    site.operation = "indexing";
    site.operands.push_back({e->operands[0], base.origins, OperandRole::Anchor});
    for (size_t i = 1; i < e->operands.size(); ++i) {
      const Value &idx = indices[i - 1];
      if (idx.kind == Value::Kind::Tensor && !maybe_number(e->operands[i], idx))
        site.operands.push_back({e->operands[i], idx.origins, OperandRole::Index});
    }
    if (site.operands.size() > 1)
      tensor_subscripts_.insert(e);
    const OriginSet *reported = site.operands.size() > 1 ? emit(site) : nullptr;
    Value out = base;
    // Held state moved to its index's device (find_mismatch): what is read sits there.
    if (reported && *reported != base.origins)
      out.origins = *reported;
    out.element = e->operands.size() == 2 && constant_index(e->operands[1]);
    // `v[None]`, `v[:, None]`, `v[i, j]`: another rank than the 1-D tensor indexed.
    if (e->operands.size() > 2 || adds_dimension(e->operands[1]))
      out = maybe_reshaped(out, nullptr);
    return out;
  }
  default:
    for (size_t i = 1; i < e->operands.size(); ++i)
      eval(e->operands[i]);
    return Value::neutral();
  }
}

Value Interpreter::binary(const std::string &op, const Expr *left_expr, const Value &l,
                          const Expr *right_expr, const Value &r, const Expr *whole) {
  // `outputs + cross_attention_outputs[1:]`: module outputs are tuples by transformers'
  // naming convention, and `+` on them concatenates.
  // The name is only a guess: a number (`past_key_values_length`) or one element taken out of
  // an output (`attn_outputs, _ = self.attn(x)`) is no tuple.
  auto named_container = [&](const Expr *expr, const Value &v) {
    return v.kind != Value::Kind::Neutral && names_outputs(expr, v.element);
  };
  bool outputs_concat =
      op == "+" && (named_container(left_expr, l) || named_container(right_expr, r));
  bool l_container = l.kind == Value::Kind::Tuple || outputs_concat;
  bool r_container = r.kind == Value::Kind::Tuple || outputs_concat;
  if (l_container || r_container) {
    // Tuple/list concatenation or repetition: no tensor operation happens.
    if (l_container && r_container) {
      Value out;
      out.kind = Value::Kind::Tuple;
      if (l.elements && r.elements) {
        out.elements = std::make_shared<std::vector<Value>>(*l.elements);
        out.elements->insert(out.elements->end(), r.elements->begin(), r.elements->end());
      } else {
        out.origins = origins_of(l);
        add_origins(out.origins, origins_of(r));
      }
      return out;
    }
    return l_container ? l : r;
  }
  bool l_tensor = l.kind == Value::Kind::Tensor && l.has_origins();
  bool r_tensor = r.kind == Value::Kind::Tensor && r.has_origins();
  if (l.kind == Value::Kind::Str || r.kind == Value::Kind::Str)
    return Value::neutral();
  const OriginSet *reported = nullptr;
  if (l_tensor && r_tensor && whole) {
    Site site;
    site.kind = op == "@" ? SiteKind::Matmul : SiteKind::Arithmetic;
    site.expr = whole;
    site.operation = op;
    site.operands.push_back({left_expr, l.origins});
    site.operands.push_back({right_expr, r.origins});
    site.operands[0].branches = l.paths;
    site.operands[1].branches = r.paths;
    reported = emit(site);
  } else if (l_tensor && r_tensor && !whole) {
    // augmented assignment: the statement is the site
    Site site;
    site.kind = SiteKind::Arithmetic;
    site.expr = left_expr;
    site.operation = op + "=";
    site.operands.push_back({left_expr, l.origins, OperandRole::Anchor});
    site.operands.push_back({right_expr, r.origins});
    site.operands[0].branches = l.paths;
    site.operands[1].branches = r.paths;
    reported = emit_statement_site(site);
  }
  if (!l_tensor)
    return r_tensor ? r : Value::neutral();
  if (!r_tensor)
    return l;
  // `arange(n) * -scale`, `scale` an unannotated argument: the CPU table stays on the CPU (were
  // `scale` a tensor on a GPU, this very site fails and is checked above). Keeping the argument
  // as an origin would make the CPU table look like a tensor from the caller.
  std::vector<OriginSet> operands{l.origins, r.origins};
  drop_numbers_beside_cpu(operands);
  Value out = operands[0].empty() ? r : l;
  out.origins = operands[0];
  add_origins(out.origins, operands[1]);
  out.paths = nullptr; // both operands' origins on every path: not one side's paths any more
  return anchored_result(reported, out);
}

bool Interpreter::names_outputs(const Expr *e, bool element) {
  while (e && e->kind == ExprKind::Subscript)
    e = e->operands[0];
  if (!e || (e->kind != ExprKind::Name && e->kind != ExprKind::Attribute))
    return false;
  std::string_view name = e->text;
  // Caches are tuples too: `present_key_value + cross_attn_present_key_value`.
  // A cache taken out of an output is still a tuple of tensors.
  return (!element && name.size() >= 7 && name.substr(name.size() - 7) == "outputs") ||
         name.find("key_value") != std::string_view::npos || name.substr(0, 7) == "present";
}

} // namespace devlint
