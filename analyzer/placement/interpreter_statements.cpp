// Statements: assignments, branches (joined), loops (two passes, so values carried across
// iterations meet the next layer), try/with/return.
#include "placement/interpreter.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <unordered_map>

#include "model/text.h"
#include "model/torch_catalog.h"
#include "placement/condition_text.h"

namespace devlint {
namespace {

// A test of names, attributes and literals (`task == "generate"`, `not self.do_cfg`): it calls
// nothing, so it comes out the same while its names hold the same values.
bool plain_test(const Expr *e, std::vector<std::string_view> &names, int depth = 0) {
  if (!e || depth > 8)
    return false;
  switch (e->kind) {
  case ExprKind::Name:
    names.push_back(e->text);
    return true;
  case ExprKind::Attribute:
    return plain_test(e->operands[0], names, depth + 1);
  case ExprKind::Compare:
  case ExprKind::BoolOp:
  case ExprKind::UnaryOp:
    return std::all_of(e->operands.begin(), e->operands.end(),
                       [&](const Expr *o) { return plain_test(o, names, depth + 1); });
  case ExprKind::String:
  case ExprKind::Number:
  case ExprKind::NoneLiteral:
  case ExprKind::Bool:
    return true;
  default:
    return false;
  }
}

bool same_value(const Value &a, const Value &b) {
  return a.kind == b.kind && a.origins == b.origins && a.text == b.text && a.path == b.path;
}

constexpr size_t kMaxDecidedPaths = 8; // per frame: tests repeated far apart are rare

} // namespace

void Interpreter::record_decided_path(const Expr *test, const Env &before, const Env &then_env,
                                      const Env &else_env, const Env &merged) {
  std::vector<std::string_view> names;
  if (!frame_->file || !plain_test(test, names))
    return;
  Frame::DecidedPath path;
  path.test = frame_->file->source->slice(test->range);
  // (A branch that sets a name the test reads, `if loss is None: loss = mlm_loss`, changes what
  // the same test says afterwards.)
  for (std::string_view name : names) {
    auto at_test = before.find(name), after = merged.find(name);
    Value value = at_test == before.end() ? Value::neutral() : at_test->second;
    if (!same_value(value, after == merged.end() ? Value::neutral() : after->second))
      return;
    path.test_names.emplace_back(name, std::move(value));
  }
  for (const auto &[name, joined] : merged) {
    auto t = then_env.find(name), e = else_env.find(name);
    if (t == then_env.end() || e == else_env.end() || same_value(t->second, e->second) ||
        (!t->second.has_origins() && !e->second.has_origins()))
      continue;
    path.values.push_back({name, joined, t->second, e->second});
  }
  if (path.values.empty())
    return;
  if (frame_->decided_paths.size() == kMaxDecidedPaths)
    frame_->decided_paths.erase(frame_->decided_paths.begin());
  frame_->decided_paths.push_back(std::move(path));
}

const Interpreter::Frame::DecidedPath *Interpreter::decided_path(const Expr *test) const {
  std::vector<std::string_view> names;
  if (!frame_->file || frame_->decided_paths.empty() || !plain_test(test, names))
    return nullptr;
  std::string_view text = frame_->file->source->slice(test->range);
  for (auto it = frame_->decided_paths.rbegin(); it != frame_->decided_paths.rend(); ++it) {
    if (it->test != text)
      continue;
    bool unchanged = std::all_of(it->test_names.begin(), it->test_names.end(), [&](const auto &n) {
      auto now = frame_->env.find(n.first);
      return same_value(now == frame_->env.end() ? Value::neutral() : now->second, n.second);
    });
    return unchanged ? &*it : nullptr;
  }
  return nullptr;
}

void Interpreter::take_path(Env &env, const Frame::DecidedPath &path, bool then_branch) {
  for (const Frame::DecidedPath::Set &set : path.values) {
    auto it = env.find(set.name);
    if (it != env.end() && same_value(it->second, set.joined))
      it->second = then_branch ? set.then_value : set.else_value;
  }
}

void Interpreter::exec_block(const std::vector<Stmt *> &body) {
  // What an early return assumed (exec_if) holds to the end of its block.
  const size_t assumed = frame_->assumed.size();
  for (const Stmt *s : body) {
    if (frame_->terminated)
      break;
    exec(s);
  }
  if (frame_->assumed.size() > assumed)
    frame_->assumed.resize(assumed);
}

bool Interpreter::mentions_device(const Expr *e, int depth) {
  if (!e || depth > 16)
    return false;
  if (e->kind == ExprKind::Attribute && e->text == "device")
    return true;
  for (const Expr *o : e->operands)
    if (mentions_device(o, depth + 1))
      return true;
  return false;
}

bool Interpreter::within(const Origin *o, const Stmt *loop) const {
  return o->file == frame_->file && o->range.begin >= loop->range.begin &&
         o->range.end <= loop->range.end;
}

void Interpreter::age_iterations(Env &env, const Stmt *loop) {
  std::unordered_map<const Origin *, const Origin *> aged;
  auto age = [&](OriginSet &set) {
    for (const Origin *&o : set) {
      if (o->kind != OriginKind::LayerIteration || o->has(OriginFact::EarlierIteration) ||
          !within(o, loop))
        continue;
      auto it = aged.find(o);
      if (it == aged.end()) {
        Origin &copy = origins_.emplace_back(*o);
        copy.set(OriginFact::EarlierIteration);
        it = aged.emplace(o, &copy).first;
      }
      o = it->second;
    }
  };
  std::function<void(Value &)> visit = [&](Value &v) {
    age(v.origins);
    if (v.elements) {
      auto copy = std::make_shared<std::vector<Value>>(*v.elements);
      for (Value &e : *copy)
        visit(e);
      v.elements = copy;
    }
  };
  for (auto &[k, v] : env)
    visit(v);
}

void Interpreter::exec_try(const Stmt *s) {
  // The rest of a try body may not run; handlers run only sometimes.
  Conditional conditional(frame_);
  if (environment_too_large()) {
    exec_block(s->body);
    for (const auto &handler : s->handlers)
      exec_block(handler);
    frame_->terminated = false;
    exec_block(s->orelse);
    exec_block(s->finalbody);
    return;
  }
  Env before = frame_->env;
  exec_block(s->body);
  bool body_terminated = frame_->terminated;
  Env merged = frame_->env;
  for (const auto &handler : s->handlers) {
    frame_->env = join_env(before, merged);
    frame_->terminated = false;
    exec_block(handler);
    if (!frame_->terminated)
      merged = join_env(merged, frame_->env);
  }
  frame_->env = merged;
  frame_->terminated = body_terminated && !s->handlers.empty() ? false : body_terminated;
  exec_block(s->orelse);
  exec_block(s->finalbody);
}

void Interpreter::exec(const Stmt *s) {
  ++statements_run_;
  const Stmt *saved_statement = frame_->statement;
  frame_->statement = s;
  switch (s->kind) {
  case StmtKind::Expr:
    if (!moves_script_object_in_place(s))
      eval(s->value);
    break;
  case StmtKind::Assign: {
    if (assign_generator_items(s))
      break;
    Value v = s->value ? eval(s->value) : Value::neutral();
    for (const Expr *t : s->targets)
      assign(t, v, s->value);
    break;
  }
  case StmtKind::AugAssign: {
    const Expr *t = s->targets[0];
    Value current = eval(t);
    Value rhs = eval(s->value);
    Value result = binary(std::string(s->text), t, current, s->value, rhs, nullptr);
    assign(t, result, nullptr);
    break;
  }
  case StmtKind::If: {
    Conditional conditional(frame_);
    exec_if(s);
    break;
  }
  case StmtKind::For:
  case StmtKind::While: {
    Conditional conditional(frame_);
    exec_loop(s);
    break;
  }
  case StmtKind::With:
    for (const Expr *item : s->items)
      eval(item);
    for (const Expr *t : s->targets)
      assign(t, Value::neutral(), nullptr);
    exec_block(s->body);
    break;
  case StmtKind::Try:
    exec_try(s);
    break;
  case StmtKind::Return:
    if (s->value) {
      Value v = eval(s->value);
      check_generation_inputs(s->value, v);
      std::optional<Value> device;
      if (frame_->has_return && frame_->function) // a device on each path: chosen at run time
        device = join_devices(frame_->returns, v,
                              intern(std::string(frame_->function->name) + "()"), s->range);
      frame_->returns = device ? *device
                        : frame_->has_return
                            ? join_returned(frame_->returns, v, limits_.max_origins)
                            : v;
    }
    frame_->has_return = true;
    frame_->terminated = true;
    break;
  case StmtKind::Raise:
    frame_->terminated = true;
    break;
  case StmtKind::FunctionDef:
    frame_->local_functions[s->function->name] = s->function;
    break;
  default:
    break;
  }
  frame_->statement = saved_statement;
}

// `a, b = (f(t) for t in [x, y])`: Python unpacks the generator item by item, so `a` is f(x)
// and `b` is f(y), each with its own item's origins, not every item's.
bool Interpreter::assign_generator_items(const Stmt *s) {
  if (s->targets.size() != 1 || !s->value || s->value->kind != ExprKind::Comprehension ||
      s->value->operands.size() != 3 || s->value->text == "dict")
    return false;
  const Expr *targets = s->targets[0];
  const Expr *items = s->value->operands[1];
  if (targets->kind != ExprKind::Tuple || items->kind != ExprKind::Tuple ||
      targets->operands.size() != items->operands.size() || targets->operands.empty())
    return false;
  for (const Expr *e : targets->operands)
    if (e->kind == ExprKind::Starred)
      return false;
  for (const Expr *e : items->operands)
    if (e->kind == ExprKind::Starred)
      return false;
  std::vector<Value> values;
  for (const Expr *item : items->operands) {
    Value element = eval(item);
    Env saved = frame_->env; // the comprehension's variable is its own
    assign(s->value->operands[2], element, nullptr);
    ++comprehension_depth_;
    values.push_back(eval(s->value->operands[0]));
    --comprehension_depth_;
    frame_->env = std::move(saved);
  }
  for (size_t i = 0; i < values.size(); ++i)
    assign(targets->operands[i], values[i], nullptr);
  return true;
}

std::optional<bool> Interpreter::flag_truth(const Expr *e, int depth) const {
  if (!e || depth > 8 || !frame_->function || constant_flags_.empty())
    return std::nullopt;
  if (e->kind == ExprKind::BoolOp && e->text == "not" && e->operands.size() == 1) {
    std::optional<bool> inner = flag_truth(e->operands[0], depth + 1);
    return inner ? std::optional<bool>(!*inner) : std::nullopt;
  }
  if (e->kind != ExprKind::Name)
    return std::nullopt;
  for (const Parameter &p : frame_->function->parameters) {
    if (p.name != e->text)
      continue;
    auto flag = constant_flags_.find(&p);
    if (flag == constant_flags_.end())
      return std::nullopt;
    // Rebound in the body: not the value the callers passed everywhere.
    if (assigns_to(*frame_->function, p.name))
      return std::nullopt;
    return flag->second;
  }
  return std::nullopt;
}

bool Interpreter::is_tracing_guard(const Expr *e) {
  // `is_torch_fx_proxy(ids) or torch.jit.is_tracing()`: true only while tracing.
  if (e && e->kind == ExprKind::BoolOp && e->text == "or" && !e->operands.empty())
    return std::all_of(e->operands.begin(), e->operands.end(),
                       [](const Expr *operand) { return is_tracing_guard(operand); });
  if (!e || e->kind != ExprKind::Call)
    return false;
  std::string_view leaf = callee_leaf(e);
  return leaf == "is_torch_fx_proxy" || leaf == "is_tracing" || leaf == "is_scripting" ||
         leaf == "is_torchdynamo_compiling" || leaf == "is_compiling";
}

bool Interpreter::is_model_parallel_flag(const Expr *e) {
  return e && e->kind == ExprKind::Attribute && e->text == "model_parallel" &&
         is_name(e->operands[0], "self");
}

bool Interpreter::reads_model_parallel_flag(const FunctionDef &fn) {
  bool reads = false;
  std::function<void(const std::vector<Stmt *> &)> scan = [&](const std::vector<Stmt *> &body) {
    for (const Stmt *st : body) {
      if (reads)
        return;
      if (st->kind == StmtKind::If && is_model_parallel_flag(st->value))
        reads = true;
      scan(st->body);
      scan(st->orelse);
    }
  };
  scan(fn.body);
  return reads;
}

bool Interpreter::tests_none_default_argument(const Expr *condition) const {
  // `a and x is not None and b` needs it too.
  if (condition && condition->kind == ExprKind::BoolOp && condition->text == "and")
    return std::any_of(condition->operands.begin(), condition->operands.end(),
                       [&](const Expr *e) { return tests_none_default_argument(e); });
  if (!condition || !frame_->function || comparison_operator(condition) != "is not" ||
      condition->operands[0]->kind != ExprKind::Name ||
      condition->operands[1]->kind != ExprKind::NoneLiteral)
    return false;
  // The first argument (after `self`) is the input every call passes, whatever its default
  // (`input_ids=None`).
  const auto &parameters = frame_->function->parameters;
  size_t first = !parameters.empty() && parameters[0].name == "self" ? 1 : 0;
  for (size_t i = first + 1; i < parameters.size(); ++i)
    if (parameters[i].name == condition->operands[0]->text)
      return parameters[i].default_value &&
             parameters[i].default_value->kind == ExprKind::NoneLiteral &&
             !package_handed_arguments_.count(&parameters[i]);
  return false;
}

void Interpreter::exec_if(const Stmt *s) {
  if (is_tracing_guard(s->value)) {
    exec_block(s->orelse);
    return;
  }
  // `if self.model_parallel:` runs only after `parallelize()` (see hand_parallel_run_).
  if (is_model_parallel_flag(s->value)) {
    exec_block(hand_parallel_run_ ? s->body : s->orelse);
    return;
  }
  // `if self.training and False:` (a branch switched off by hand) never runs.
  if (std::optional<bool> always =
          frame_->file ? constant_truth(*frame_->file, s->value) : std::nullopt) {
    exec_block(*always ? s->body : s->orelse);
    return;
  }
  // `if not reverse:` where every caller passes `reverse=True`.
  if (std::optional<bool> always = flag_truth(s->value)) {
    exec_block(*always ? s->body : s->orelse);
    return;
  }
  // `if query_states is not None:` where every call leaves it None; `if self.z_steps > 1:`
  // where `__init__` set it to 0 for good.
  if (std::optional<bool> always =
          frame_->function ? decided_condition(s->value, *frame_->function, frame_->unit)
                           : std::nullopt) {
    exec_block(*always ? s->body : s->orelse);
    return;
  }
  eval(s->value);
  if (environment_too_large()) {
    exec_block(s->body);
    bool then_terminated = frame_->terminated;
    frame_->terminated = false;
    exec_block(s->orelse);
    frame_->terminated = then_terminated && frame_->terminated;
    return;
  }
  std::optional<Frame::DecidedPath> earlier;
  if (const Frame::DecidedPath *path = decided_path(s->value))
    earlier = *path;
  Env before = frame_->env;
  frame_->assumed.emplace_back(s->value, true);
  if (earlier)
    take_path(frame_->env, *earlier, true);
  exec_block(s->body);
  frame_->assumed.back().second = false;
  Env then_env = std::move(frame_->env);
  bool then_terminated = frame_->terminated;
  frame_->env = before;
  frame_->terminated = false;
  if (earlier)
    take_path(frame_->env, *earlier, false);
  exec_block(s->orelse);
  frame_->assumed.pop_back();
  // `if mask is not None: mask = mask.to(x.device)`: where the test fails `mask` is None, so the
  // tensor it held before the test reaches nothing after it (and `is None` the other way round).
  if (std::string op = comparison_operator(s->value);
      (op == "is not" || op == "is") && s->value->operands[0]->kind == ExprKind::Name &&
      s->value->operands[1]->kind == ExprKind::NoneLiteral) {
    std::string_view name = s->value->operands[0]->text;
    Env &none_path = op == "is not" ? frame_->env : then_env;
    auto held = before.find(name), now = none_path.find(name);
    if (held != before.end() && now != none_path.end() &&
        held->second.origins == now->second.origins)
      now->second = Value::neutral();
  }
  bool else_terminated = frame_->terminated;
  if (then_terminated && else_terminated) {
    frame_->terminated = true;
    return;
  }
  frame_->terminated = false;
  // Only one path continues: what follows in this block runs only where the test went its way
  // (`if not self.quant_mode: return x`, then the quantized path).
  if (then_terminated) {
    frame_->assumed.emplace_back(s->value, false);
    return;
  }
  if (else_terminated) {
    frame_->assumed.emplace_back(s->value, true);
    frame_->env = std::move(then_env);
    return;
  }
  // `if encoder_hidden_states is not None:` on an optional argument that only a user fills: the
  // path a call with the defaults runs (the else branch, or what held before the `if`) names the
  // joined values (`key = self.key(hidden_states)`, not the cross-attention line). One a model of
  // the package fills (a decoder handed the encoder's output) runs the branch there.
  Env merged = tests_none_default_argument(s->value) ? join_env(frame_->env, then_env)
                                                     : join_env(then_env, frame_->env);
  // `if a.device != b.device: b = b.to(a.device)`: after the guard, b is where a is.
  if (mentions_device(s->value) && s->orelse.empty()) {
    for (const auto &[k, v] : then_env) {
      auto old = before.find(k);
      if (old == before.end() || old->second.origins != v.origins)
        merged[k] = v;
    }
  }
  record_decided_path(s->value, before, then_env, frame_->env, merged);
  frame_->env = std::move(merged);
}

void Interpreter::exec_loop(const Stmt *s) {
  // Two passes find values carried across iterations; deep nests and huge bodies get one, so
  // the work stays linear in the code.
  int passes = loop_depth_ < kMaxDoublePassNesting && !over_budget() ? 2 : 1;
  ++loop_depth_;
  loops_.push_back(s);
  Value element;
  bool pieces_of_one_tensor = false;
  if (s->kind == StmtKind::For)
    element = element_of(s->value, &pieces_of_one_tensor);
  else
    eval(s->value);
  // Rows of one tensor (`for height, width in spatial_shapes`) sit where it does on every pass:
  // they do not make what the loop appends differ per pass (final_pass_version).
  loop_elements_.push_back(pieces_of_one_tensor ? OriginSet{} : origins_of(element));
  if (environment_too_large()) {
    if (s->kind == StmtKind::For)
      assign(s->targets[0], element, nullptr);
    exec_block(s->body);
    frame_->terminated = false;
    --loop_depth_;
    loops_.pop_back();
    loop_elements_.pop_back();
    exec_block(s->orelse);
    return;
  }
  Env before = frame_->env;
  Env after_first;
  for (int pass = 0; pass < passes; ++pass) {
    if (s->kind == StmtKind::For)
      assign(s->targets[0], element, nullptr);
    const bool first_of_two = pass == 0 && passes == 2;
    first_passes_ += first_of_two ? 1 : 0;
    exec_block(s->body);
    first_passes_ -= first_of_two ? 1 : 0;
    frame_->terminated = false;
    if (pass == 0 && passes == 2) {
      after_first = frame_->env;
      frame_->env = join_env(before, after_first);
      age_iterations(frame_->env, s);
    }
  }
  // A loop over a model's ModuleList runs at least once: what comes after it is what its last
  // pass left, not the value from before it (`queries = point_embeddings` then the layers).
  auto picks_module = [](const Value &v) { return v.kind == Value::Kind::ModuleItem; };
  const bool runs_once =
      s->kind == StmtKind::For &&
      (picks_module(element) ||
       (element.kind == Value::Kind::Tuple && element.elements &&
        std::any_of(element.elements->begin(), element.elements->end(), picks_module)));
  Env after = runs_once     ? (passes == 2 ? join_env(after_first, frame_->env) : frame_->env)
              : passes == 2 ? join_env(join_env(before, after_first), frame_->env)
                            : join_env(before, frame_->env);
  frame_->env = std::move(after);
  --loop_depth_;
  loops_.pop_back();
  loop_elements_.pop_back();
  exec_block(s->orelse);
}

bool Interpreter::over_budget() const { return statements_run_ > kStatementBudget; }

bool Interpreter::environment_too_large() const {
  return frame_->env.size() > kMaxJoinedEnvironment;
}

void Interpreter::assign(const Expr *target, const Value &v, const Expr *value_expr) {
  if (!target)
    return;
  if (collecting_caller_moves_)
    note_caller_move(target, v, value_expr);
  switch (target->kind) {
  case ExprKind::Name:
    frame_->env[target->text] = named_device(v, target->text, target->range);
    break;
  case ExprKind::Attribute: {
    const Expr *object = target->operands[0];
    if (is_name(object, "self") || object->kind == ExprKind::Name)
      frame_->env[frame_->file ? frame_->file->source->slice(target->range) : target->text] = v;
    // `outputs.pooler_output = ...` on a local object: the object now carries the value, through
    // a `return` too.
    if (object->kind == ExprKind::Name && !is_name(object, "self"))
      if (auto it = frame_->env.find(object->text);
          it != frame_->env.end() &&
          (it->second.kind == Value::Kind::Tensor || it->second.kind == Value::Kind::Tuple ||
           it->second.kind == Value::Kind::Neutral)) {
        auto fields = std::make_shared<std::vector<std::pair<std::string_view, Value>>>();
        fields->emplace_back(target->text, v);
        if (it->second.fields)
          for (const auto &field : *it->second.fields)
            if (field.first != target->text)
              fields->push_back(field);
        it->second.fields = std::move(fields);
      }
    break;
  }
  case ExprKind::Tuple: {
    const auto &targets = target->operands;
    if (v.kind == Value::Kind::Tuple && v.elements && v.elements->size() == targets.size()) {
      for (size_t i = 0; i < targets.size(); ++i)
        assign(targets[i], (*v.elements)[i], nullptr);
    } else {
      Value each = v.kind == Value::Kind::Tuple ? as_tensor(v) : v;
      each.element = each.kind == Value::Kind::Tensor;
      for (const Expr *t : targets)
        assign(t, each, nullptr);
    }
    break;
  }
  case ExprKind::Starred:
    assign(target->operands[0], v, nullptr);
    break;
  case ExprKind::Subscript: {
    // a[idx] = b with a tensor index is index_put_: the value must be on a's device, the index
    // need not be, since index_put_ moves it there (make_info in ATen's
    // TensorAdvancedIndexing.cpp; only reads check an index's device).
    Value base = eval(target->operands[0]);
    // `kwargs["decoder_input_ids"] = ids`: what a later `**kwargs` passes under that keyword
    // (see keyword_entry).
    if (base.kind == Value::Kind::Tuple && target->operands[0]->kind == ExprKind::Name &&
        target->operands.size() == 2 && target->operands[1]->kind == ExprKind::String) {
      frame_->env[keyword_entry(target->operands[0]->text, target->operands[1]->text)] = v;
      break;
    }
    if (base.kind != Value::Kind::Tensor || !value_expr)
      break;
    Site site;
    site.kind = SiteKind::IndexPut;
    site.expr = target;
    site.operation = "indexed assignment";
    site.operands.push_back({target->operands[0], base.origins, OperandRole::Anchor});
    site.operands.back().branches = base.paths;
    if (v.has_origins() && v.kind != Value::Kind::Tuple) {
      site.operands.push_back({value_expr, v.origins});
      site.operands.back().branches = v.paths;
    }
    bool tensor_index = false;
    for (size_t i = 1; i < target->operands.size(); ++i) {
      Value idx = eval(target->operands[i]);
      if (idx.kind == Value::Kind::Tensor && !maybe_number(target->operands[i], idx))
        tensor_index = true;
    }
    // With slices or numbers, `a[...] = b` is a copy_, which accepts any device.
    if (tensor_index)
      emit(site);
    break;
  }
  default:
    break;
  }
}

} // namespace devlint
