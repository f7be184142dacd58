// Executing statements: assignments, if/for/while/with/try, def, return, break and continue.
#include "simulation/evaluator.h"

#include <cctype>
#include <sstream>

namespace devlint::simulation {

void Evaluator::dict_set(const Value &dict, const Value &key, const Value &v) {
  for (auto &[k, x] : *dict.dict) {
    auto eq = equal(k, key);
    if (eq && *eq) {
      x = v;
      return;
    }
  }
  dict.dict->emplace_back(key, v);
}

Value Evaluator::dict_from_pairs(const Value &pairs) {
  Value built = Value::dict_of({});
  if (!pairs.is(Kind::List))
    return Value::unknown("dict() of an unknown value");
  for (const Value &pair : *pairs.list) {
    if (!pair.is(Kind::List) || pair.list->size() != 2)
      return Value::unknown("dict() of items that are not pairs");
    dict_set(built, (*pair.list)[0], (*pair.list)[1]);
  }
  return built;
}

void Evaluator::assign(const Expr *target, const Value &v, Frame &frame,
                       std::vector<std::pair<std::string, std::optional<Value>>> *saved) {
  switch (target->kind) {
  case ExprKind::Name: {
    std::string name(target->text);
    if (saved && std::none_of(saved->begin(), saved->end(),
                              [&](const auto &s) { return s.first == name; })) {
      auto it = frame.locals.find(name);
      saved->emplace_back(name, it == frame.locals.end() ? std::nullopt
                                                         : std::optional<Value>(it->second));
    }
    frame.locals[name] = v;
    return;
  }
  case ExprKind::Tuple: {
    for (size_t i = 0; i < target->operands.size(); ++i) {
      Value part =
          v.is(Kind::List) && i < v.list->size() ? (*v.list)[i] : Value::unknown("unpacking");
      assign(target->operands[i], part, frame, saved);
    }
    return;
  }
  case ExprKind::Attribute: {
    Value obj = eval(target->operands[0], frame);
    std::string name(target->text);
    if (obj.is(Kind::Module)) {
      // An instance of a class devlint cannot see (a kernel library's layer) may be a module
      // holding parameters: listed, never counted as nothing (a torch.nn one is, at its call).
      if (v.is(Kind::Unknown) && starts_with(v.text, "class `") &&
          !starts_with(v.text, "class `nn.") && !starts_with(v.text, "class `torch.nn.") &&
          ends_with_str(v.text, "is not in the package"))
        report_unknown_value(frame, target, v, "module attribute");
      set_module_attr(*obj.module, name, v);
    } else if (obj.is(Kind::Object)) {
      // PretrainedConfig.__setattr__ writes an attribute_map alias to the attribute it names
      // (`self.layer_types = ...` sets layers_block_type).
      if (obj.object->class_def)
        if (std::optional<ClassRef> cls = find_class(obj.object->class_def->name);
            cls && is_transformers_config(*cls)) {
          Value map = class_attribute(*cls, "attribute_map");
          if (map.is(Kind::Dict))
            for (const auto &[alias, real] : *map.dict)
              if (alias.is(Kind::Str) && real.is(Kind::Str) && alias.text == name) {
                name = real.text;
                break;
              }
        }
      obj.object->attrs[name] = v;
    }
    return;
  }
  case ExprKind::Subscript: {
    // `module._modules[name] = child`: torch's dict of a module's children.
    const Expr *holder = target->operands[0];
    if (holder->kind == ExprKind::Attribute && holder->text == "_modules" &&
        !holder->operands.empty() && target->operands.size() >= 2) {
      Value module = eval(holder->operands[0], frame);
      Value key = eval(target->operands[1], frame);
      if (module.is(Kind::Module) && key.is(Kind::Str) && v.is(Kind::Module)) {
        set_module_attr(*module.module, key.text, v);
        return;
      }
    }
    Value obj = eval(target->operands[0], frame);
    if (target->operands.size() < 2)
      return;
    Value key = eval(target->operands[1], frame);
    if (obj.is(Kind::Dict)) {
      if (key.is(Kind::Unknown))
        report_unknown_value(frame, target->operands[1], key, "dict key");
      else
        dict_set(obj, key, v);
    } else if (is_configuration_mapping(obj) && key.is(Kind::Str)) {
      // A dict read from a configuration (`bias_kwargs = deepcopy(config.relative_bias_args[0])`)
      // is kept as its attributes: `bias_kwargs["num_heads"] = n` sets one.
      obj.object->attrs[key.text] = v;
    } else if (obj.is(Kind::List) && key.is(Kind::Int) && key.integer >= 0 &&
               static_cast<size_t>(key.integer) < obj.list->size()) {
      (*obj.list)[static_cast<size_t>(key.integer)] = v;
    } else if (obj.is(Kind::Module) && v.is(Kind::Module)) {
      std::string name = key.is(Kind::Int)   ? std::to_string(key.integer)
                         : key.is(Kind::Str) ? key.text
                                             : "";
      if (!name.empty())
        set_module_attr(*obj.module, name, v);
    }
    return;
  }
  default:
    return;
  }
}

std::string_view Evaluator::statement_keyword(const Stmt *s, const Frame &frame) const {
  if (!frame.file || !frame.file->source)
    return {};
  std::string_view t = frame.file->source->slice(s->range);
  size_t end = t.find_first_of(" \t\n(:;");
  return t.substr(0, end);
}

// Whether `block` only passes, reports or fills tensors: calls of a logger's methods
// (`logging.get_logger(...)` or `logging.getLogger(...)`: they return None and change no object),
// `warnings.warn` and `print`, in-place operations on tensors, and if statements whose branches
// that may run are such blocks (elif).
bool Evaluator::builds_nothing(const std::vector<Stmt *> &block, Frame &frame) {
  for (const Stmt *s : block) {
    if (s->kind == StmtKind::Other && statement_keyword(s, frame) == "pass")
      continue;
    if (s->kind == StmtKind::If) {
      // A nested condition that is known runs one branch (`if self.use_mambapy:`, false, keeps a
      // `raise` in the other out of it).
      std::optional<bool> taken = truthy(eval(s->value, frame));
      if (taken ? builds_nothing(*taken ? s->body : s->orelse, frame)
                : builds_nothing(s->body, frame) && builds_nothing(s->orelse, frame))
        continue;
      return false;
    }
    // A `try` that only does such things, logging what it catches (a kernel load that may fail).
    if (s->kind == StmtKind::Try) {
      if (builds_nothing(s->body, frame) && builds_nothing(s->orelse, frame) &&
          builds_nothing(s->finalbody, frame) &&
          std::all_of(s->handlers.begin(), s->handlers.end(),
                      [&](const auto &handler) { return builds_nothing(handler, frame); }))
        continue;
      return false;
    }
    if (s->kind != StmtKind::Expr || !s->value || s->value->kind != ExprKind::Call ||
        s->value->operands.empty())
      return false;
    // A function of the file handed nothing of `self` (`load_cuda_kernels()`): whatever it does,
    // it cannot register anything on the module being built.
    auto mentions_self = [](const Expr *a) {
      return any_subexpression(
          a, [](const Expr *x) { return is_name(x, "self"); }, 64, true);
    };
    if (s->value->operands[0]->kind == ExprKind::Name &&
        std::none_of(s->value->operands.begin() + 1, s->value->operands.end(), mentions_self) &&
        std::none_of(s->value->keywords.begin(), s->value->keywords.end(),
                     [&](const Keyword &k) { return mentions_self(k.value); })) {
      Value callee = eval(s->value->operands[0], frame);
      if (callee.is(Kind::Function) && !callee.bound_self && !callee.class_def)
        continue;
    }
    // An in-place operation fills a tensor without resizing it (`w.copy_(other)`).
    const Expr *callee_expr = s->value->operands[0];
    if (callee_expr->kind == ExprKind::Attribute && !callee_expr->operands.empty() &&
        ends_with_str(callee_expr->text, "_") && !starts_with(callee_expr->text, "_") &&
        callee_expr->text != "resize_" && callee_expr->text != "set_" &&
        callee_expr->text != "resize_as_" && eval(callee_expr->operands[0], frame).is(Kind::Tensor))
      continue;
    Value callee = eval(s->value->operands[0], frame);
    if (!callee.is(Kind::Namespace) ||
        !(starts_with(callee.text, "logging.Logger.") || callee.text == "warnings.warn" ||
          callee.text == "builtins.print"))
      return false;
  }
  return true;
}

namespace {

// The exception class a `raise` statement raises, from its text (`raise ImportError(...)`,
// `raise errors.X from e`); "" for a bare `raise`.
std::string raised_exception_name(std::string_view statement) {
  size_t at = statement.find_first_not_of(" \t", 5); // after "raise"
  size_t end = at;
  while (end < statement.size() && (std::isalnum(static_cast<unsigned char>(statement[end])) ||
                                    statement[end] == '_' || statement[end] == '.'))
    ++end;
  std::string_view name = at == std::string_view::npos ? "" : statement.substr(at, end - at);
  return std::string(
      name.substr(name.rfind('.') == std::string_view::npos ? 0 : name.rfind('.') + 1));
}

// Whether `except TYPES:` catches `name`: a bare `except`, `Exception` or `BaseException`, the
// class itself, or ImportError for ModuleNotFoundError (the one subclass raised by imports).
bool catches(std::string_view types, const std::string &name) {
  if (types.empty())
    return true;
  std::string text(types);
  for (char &c : text)
    if (c == '(' || c == ')' || c == ',' || c == '\n' || c == '\t')
      c = ' ';
  std::istringstream items(text);
  for (std::string item; items >> item;) {
    std::string leaf = item.substr(item.rfind('.') + 1);
    if (leaf == "Exception" || leaf == "BaseException" ||
        (!name.empty() &&
         (leaf == name || (leaf == "ImportError" && name == "ModuleNotFoundError"))))
      return true;
  }
  return false;
}

} // namespace

void Evaluator::exec_block(const std::vector<Stmt *> &body, Frame &frame) {
  for (const Stmt *s : body) {
    if (frame.returned || frame.broke || frame.continued || unwinding_)
      return;
    exec(s, frame);
  }
}

void Evaluator::exec(const Stmt *s, Frame &frame) {
  if (++statements_ > kStatementBudget) {
    if (statements_ == kStatementBudget + 1)
      report(frame, s->range, "evaluation budget exhausted");
    frame.returned = true;
    return;
  }
  switch (s->kind) {
  case StmtKind::Expr:
    eval(s->value, frame);
    return;
  case StmtKind::Assign: {
    if (!s->value)
      return;
    std::string outer_target = std::move(assignment_target_);
    assignment_target_.clear();
    if (s->targets.size() == 1 && s->targets[0]->kind == ExprKind::Attribute)
      assignment_target_ = std::string(s->targets[0]->text);
    Value v = eval(s->value, frame);
    assignment_target_ = std::move(outer_target);
    for (const Expr *t : s->targets)
      assign(t, v, frame);
    return;
  }
  case StmtKind::AugAssign: {
    if (s->targets.empty())
      return;
    Value current = eval(s->targets[0], frame);
    Value v = binary(std::string(s->text), current, eval(s->value, frame));
    assign(s->targets[0], v, frame);
    return;
  }
  case StmtKind::If: {
    Value cond = eval(s->value, frame);
    auto t = truthy(cond);
    if (!t) {
      // Whichever branch runs, it only logs: nothing the model builds depends on the condition.
      if (builds_nothing(s->body, frame) && builds_nothing(s->orelse, frame))
        return;
      report_unknown_value(frame, s->value, cond, "condition (taken as true)");
      t = true;
    }
    exec_block(*t ? s->body : s->orelse, frame);
    return;
  }
  case StmtKind::For: {
    Value iterable = eval(s->value, frame);
    iterable = iteration_items(iterable, kMaxLoop);
    if (iterable.is(Kind::Module)) {
      ValueList children;
      for (const auto &[n, c] : iterable.module->children)
        children.push_back(Value::module_value(c));
      iterable = Value::list_of(std::move(children));
    }
    if (iterable.is(Kind::Dict)) {
      ValueList keys;
      for (const auto &[k, v] : *iterable.dict)
        keys.push_back(k);
      iterable = Value::list_of(std::move(keys));
    }
    if (!iterable.is(Kind::List)) {
      report_unknown_value(frame, s->value, iterable, "loop over");
      return;
    }
    ValueList items = *iterable.list;
    bool broke = false;
    for (const Value &item : items) {
      if (!s->targets.empty())
        assign(s->targets[0], item, frame);
      exec_block(s->body, frame);
      frame.continued = false;
      if (frame.broke) {
        frame.broke = false;
        broke = true;
        break;
      }
      if (frame.returned || unwinding_)
        return;
    }
    if (!broke)
      exec_block(s->orelse, frame);
    return;
  }
  case StmtKind::While: {
    for (size_t i = 0;; ++i) {
      auto t = truthy(eval(s->value, frame));
      if (!t || i >= kMaxLoop) {
        report(frame, s->range, "`while` loop with an unknown end");
        return;
      }
      if (!*t)
        break;
      exec_block(s->body, frame);
      frame.continued = false;
      if (frame.broke) {
        frame.broke = false;
        break;
      }
      if (frame.returned || unwinding_)
        return;
    }
    return;
  }
  case StmtKind::With:
    exec_block(s->body, frame);
    return;
  case StmtKind::Try: {
    catching_.push_back(&s->handler_types);
    exec_block(s->body, frame);
    catching_.pop_back();
    if (unwinding_) {
      // A `raise` one of these handlers catches: run the first that does.
      unwinding_ = false;
      for (size_t i = 0; i < s->handlers.size(); ++i)
        if (catches(s->handler_types[i], raised_name_)) {
          exec_block(s->handlers[i], frame);
          break;
        }
    } else {
      exec_block(s->orelse, frame);
    }
    exec_block(s->finalbody, frame);
    return;
  }
  case StmtKind::Return:
    frame.return_value = s->value ? eval(s->value, frame) : Value::none();
    frame.returned = true;
    return;
  case StmtKind::Raise: {
    // Caught by an enclosing `try` (in this function or a caller): the model builds on from its
    // handler, as Python does; not a part left unevaluated.
    raised_name_ = raised_exception_name(text_of(frame.file, s->range));
    if (std::any_of(catching_.begin(), catching_.end(), [&](const auto *types) {
          return std::any_of(types->begin(), types->end(),
                             [&](std::string_view t) { return catches(t, raised_name_); });
        })) {
      unwinding_ = true;
      frame.returned = true;
      frame.return_value = Value::unknown("raised");
      return;
    }
    report(frame, s->range, "reached `" + text_of(frame.file, s->range) + "`");
    frame.returned = true;
    frame.return_value = Value::unknown("raised");
    return;
  }
  case StmtKind::FunctionDef: {
    Value fn;
    fn.kind = Kind::Function;
    fn.function = s->function;
    fn.file = frame.file;
    fn.class_def = frame.current_class;
    fn.closure = std::make_shared<std::unordered_map<std::string, Value>>(frame.locals);
    frame.locals[std::string(s->function->name)] = fn;
    return;
  }
  case StmtKind::Other: {
    std::string_view kw = statement_keyword(s, frame);
    if (kw == "break")
      frame.broke = true;
    else if (kw == "continue")
      frame.continued = true;
    return;
  }
  default:
    return;
  }
}

} // namespace devlint::simulation
