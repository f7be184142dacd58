#include "placement/placement_analysis.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace devlint {
namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view x) {
  return s.size() >= x.size() && s.substr(s.size() - x.size()) == x;
}

// ---- abstract values ----

struct Value {
  enum class Kind : uint8_t {
    Neutral,    // numbers, shapes, None, strings, config: mixes with anything
    Tensor,     // a tensor (or an object holding tensors) with origins
    Device,     // x.device
    Tuple,      // tuple/list/dict of values
    Module,     // self.<child path>
    ModuleItem, // one element of a ModuleList/ModuleDict: differs per iteration
    Self,
    LossFunction, // CrossEntropyLoss() instance
    Str,          // a string literal (device names)
  };
  Kind kind = Kind::Neutral;
  OriginSet origins;
  std::shared_ptr<std::vector<Value>> elements; // Tuple with known elements
  std::string_view path;                        // Module / ModuleItem
  const ModuleClass *module_class = nullptr;    // Module: class of path when known
  const ChildDecl *child = nullptr;             // Module: declaration of the last segment
  std::string_view text;                        // Str

  bool has_origins() const { return !origins.empty(); }
  static Value neutral() { return {}; }
};

using Env = std::unordered_map<std::string_view, Value>;

const std::unordered_set<std::string_view> &concat_functions() {
  static const std::unordered_set<std::string_view> s = {
      "cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack"};
  return s;
}
const std::unordered_set<std::string_view> &binary_functions() {
  static const std::unordered_set<std::string_view> s = {"add",
                                                         "sub",
                                                         "subtract",
                                                         "mul",
                                                         "multiply",
                                                         "div",
                                                         "divide",
                                                         "true_divide",
                                                         "maximum",
                                                         "minimum",
                                                         "where",
                                                         "lerp",
                                                         "eq",
                                                         "ne",
                                                         "lt",
                                                         "gt",
                                                         "le",
                                                         "ge",
                                                         "fmod",
                                                         "remainder",
                                                         "pow",
                                                         "logical_and",
                                                         "logical_or",
                                                         "bitwise_and",
                                                         "bitwise_or",
                                                         "addcmul",
                                                         "addcdiv",
                                                         "isin",
                                                         "bucketize",
                                                         "searchsorted",
                                                         "max_elementwise",
                                                         "atan2",
                                                         "hypot",
                                                         "add_",
                                                         "sub_",
                                                         "mul_",
                                                         "div_",
                                                         "copysign",
                                                         "floor_divide",
                                                         "clamp",
                                                         "clip"};
  return s;
}
const std::unordered_set<std::string_view> &matmul_functions() {
  static const std::unordered_set<std::string_view> s = {"matmul",   "bmm",
                                                         "mm",       "einsum",
                                                         "baddbmm",  "addmm",
                                                         "addbmm",   "outer",
                                                         "dot",      "kron",
                                                         "cdist",    "linear",
                                                         "bilinear", "scaled_dot_product_attention",
                                                         "mv",       "tensordot",
                                                         "inner"};
  return s;
}
const std::unordered_set<std::string_view> &index_functions() {
  static const std::unordered_set<std::string_view> s = {
      "gather",       "index_select",    "take_along_dim", "masked_select", "scatter",
      "scatter_add",  "scatter_reduce",  "index_add",      "index_put",     "index_copy",
      "index_fill",   "masked_fill",     "masked_scatter", "embedding",     "take",
      "masked_fill_", "masked_scatter_", "scatter_",       "scatter_add_",  "index_put_",
      "index_add_",   "index_copy_",     "index_fill_",    "put_"};
  return s;
}
const std::unordered_set<std::string_view> &loss_functions() {
  static const std::unordered_set<std::string_view> s = {"cross_entropy",
                                                         "nll_loss",
                                                         "mse_loss",
                                                         "l1_loss",
                                                         "smooth_l1_loss",
                                                         "huber_loss",
                                                         "binary_cross_entropy",
                                                         "binary_cross_entropy_with_logits",
                                                         "kl_div",
                                                         "soft_margin_loss",
                                                         "multilabel_soft_margin_loss",
                                                         "margin_ranking_loss",
                                                         "cosine_embedding_loss",
                                                         "hinge_embedding_loss",
                                                         "poisson_nll_loss",
                                                         "gaussian_nll_loss",
                                                         "multi_margin_loss",
                                                         "multilabel_margin_loss",
                                                         "triplet_margin_loss",
                                                         "sigmoid_focal_loss"};
  return s;
}
// Tensor methods whose result is not a tensor on the receiver's device.
const std::unordered_set<std::string_view> &neutral_methods() {
  static const std::unordered_set<std::string_view> s = {"size",
                                                         "dim",
                                                         "numel",
                                                         "item",
                                                         "tolist",
                                                         "numpy",
                                                         "data_ptr",
                                                         "stride",
                                                         "is_contiguous",
                                                         "element_size",
                                                         "get_device",
                                                         "nelement",
                                                         "ndimension",
                                                         "is_floating_point",
                                                         "keys",
                                                         "is_complex",
                                                         "storage_offset",
                                                         "format",
                                                         "startswith",
                                                         "endswith",
                                                         "split_string",
                                                         "lower",
                                                         "upper",
                                                         "strip",
                                                         "join",
                                                         "replace",
                                                         "get_seq_length",
                                                         "get_max_length",
                                                         "get_usable_length",
                                                         "get_max_cache_shape",
                                                         "index"};
  return s;
}
const std::unordered_set<std::string_view> &neutral_tensor_attributes() {
  static const std::unordered_set<std::string_view> s = {
      "shape",    "dtype",  "ndim",    "is_cuda",   "requires_grad", "is_leaf", "layout",
      "itemsize", "nbytes", "is_meta", "is_sparse", "training",      "config",  "name"};
  return s;
}
const std::unordered_set<std::string_view> &neutral_builtins() {
  static const std::unordered_set<std::string_view> s = {
      "len",        "int",     "float",     "bool",   "str",   "range", "isinstance",
      "hasattr",    "getattr", "print",     "type",   "super", "repr",  "hash",
      "id",         "round",   "abs",       "divmod", "ord",   "chr",   "callable",
      "issubclass", "setattr", "math",      "ceil",   "floor", "warn",  "warning_once",
      "logger",     "set",     "frozenset", "vars",   "dir",   "open",  "format",
      "all",        "any"};
  return s;
}

bool tensorish_annotation(std::string_view annotation) {
  for (std::string_view word :
       {"Tensor", "Cache", "Any", "Module", "Output", "Parameter", "torch."})
    if (annotation.find(word) != std::string_view::npos)
      return true;
  return false;
}

// ---- the interpreter ----

class Interpreter {
public:
  Interpreter(const Package &pkg, const PlacementModel &placement, SiteSink &sink,
              const AnalysisLimits &limits)
      : pkg_(pkg), placement_(placement), sink_(sink), limits_(limits) {
    for (const SyntaxFile *file : pkg.files) {
      for (const FunctionDef *f : file->functions)
        file_of_[f] = file;
      for (const ClassDef *c : file->classes)
        for (const FunctionDef *m : c->methods)
          file_of_[m] = file;
    }
  }

  // Construction and weight initialization run before dispatch, on one device.
  static bool is_setup_method(std::string_view name) {
    return name == "__init__" || name == "_init_weights" || name == "init_weights" ||
           name == "_initialize_weights" || name == "reset_parameters" || name == "post_init" ||
           name == "_set_gradient_checkpointing" || name == "_reset_parameters" ||
           name == "__repr__" || name == "extra_repr";
  }

  void run() {
    for (const auto &cls : pkg_.classes) {
      if (!cls->is_module)
        continue;
      std::unordered_set<std::string_view> seen;
      for (const FunctionDef *m : cls->def->methods) {
        seen.insert(m->name);
        if (!is_setup_method(m->name))
          analyze_entry(m, cls.get());
      }
      // Mixin methods (from package bases that are not modules) run with this class's members.
      for (const ModuleClass *base : cls->bases) {
        if (base->is_module)
          continue;
        for (const FunctionDef *m : base->def->methods)
          if (!is_setup_method(m->name) && seen.insert(m->name).second)
            analyze_entry(m, cls.get());
      }
    }
    for (const SyntaxFile *file : pkg_.files) {
      for (const FunctionDef *f : file->functions)
        analyze_entry(f, nullptr);
      analyze_script(file);
    }
  }

private:
  struct Frame {
    Env env;
    const ModuleClass *unit = nullptr;
    const FunctionDef *function = nullptr;
    const SyntaxFile *file = nullptr;
    const Stmt *statement = nullptr;
    Value returns;
    bool has_return = false;
    bool terminated = false;
    std::unordered_map<std::string_view, const FunctionDef *> local_functions;
    int depth = 0;
    bool script = false;
  };

  const Package &pkg_;
  const PlacementModel &placement_;
  SiteSink &sink_;
  AnalysisLimits limits_;
  std::unordered_map<const FunctionDef *, const SyntaxFile *> file_of_;
  std::deque<Origin> origins_;
  std::deque<std::string> strings_;
  std::vector<const FunctionDef *> call_stack_;
  Frame *frame_ = nullptr;
  // Bounds on the work per entry (statements executed, inlined ones included): beyond them the
  // analysis stops inlining and double-passing loops instead of growing without bound.
  static constexpr size_t kStatementBudget = 20000;
  static constexpr int kMaxDoublePassNesting = 3;
  size_t statements_run_ = 0;
  int loop_depth_ = 0;
  std::deque<OriginSet> anchored_; // anchors of reported sites, pointed to by emit()'s result
  std::unordered_map<const Stmt *, Expr> statement_exprs_; // see emit_statement_site

  std::string_view intern(std::string s) { return strings_.emplace_back(std::move(s)); }

  const Origin *make_origin(OriginKind kind, std::string_view label, SourceRange range) {
    Origin &o = origins_.emplace_back();
    o.kind = kind;
    o.label = label;
    o.range = range;
    o.file = frame_->file;
    o.in_helper = frame_->depth > 0;
    return &o;
  }

  Value tensor(const Origin *o) {
    Value v;
    v.kind = Value::Kind::Tensor;
    v.origins.push_back(o);
    return v;
  }

  static bool same_origin(const Origin *a, const Origin *b) {
    return a == b || (a->kind == b->kind && a->earlier_iteration == b->earlier_iteration &&
                      a->label == b->label && a->kind != OriginKind::Fresh);
  }

  void add_origins(OriginSet &into, const OriginSet &from) const {
    for (const Origin *o : from) {
      if (into.size() >= limits_.max_origins)
        return;
      bool present = false;
      for (const Origin *p : into)
        present |= same_origin(o, p);
      if (!present)
        into.push_back(o);
    }
  }

  Value join(const Value &a, const Value &b) const {
    if (a.kind == Value::Kind::Neutral && !a.has_origins())
      return b;
    if (b.kind == Value::Kind::Neutral && !b.has_origins())
      return a;
    if (a.kind == b.kind && (a.kind == Value::Kind::Module || a.kind == Value::Kind::ModuleItem) &&
        a.path == b.path)
      return a;
    if (a.kind == Value::Kind::Tuple && b.kind == Value::Kind::Tuple && a.elements && b.elements &&
        a.elements->size() == b.elements->size()) {
      Value out = a;
      out.elements = std::make_shared<std::vector<Value>>();
      for (size_t i = 0; i < a.elements->size(); ++i)
        out.elements->push_back(join((*a.elements)[i], (*b.elements)[i]));
      add_origins(out.origins, b.origins);
      return out;
    }
    if (a.kind == Value::Kind::Module || a.kind == Value::Kind::ModuleItem)
      return a;
    if (b.kind == Value::Kind::Module || b.kind == Value::Kind::ModuleItem)
      return b;
    Value out;
    out.kind = a.kind == b.kind ? a.kind : Value::Kind::Tensor;
    if (a.kind == Value::Kind::Device || b.kind == Value::Kind::Device)
      out.kind = a.kind == b.kind ? Value::Kind::Device : Value::Kind::Tensor;
    out.origins = a.origins;
    add_origins(out.origins, b.origins);
    if (out.kind == Value::Kind::Str)
      out.kind = Value::Kind::Neutral;
    return out;
  }

  Env join_env(const Env &a, const Env &b) const {
    Env out = a;
    for (const auto &[k, v] : b) {
      auto it = out.find(k);
      if (it == out.end())
        out.emplace(k, v);
      else
        it->second = join(it->second, v);
    }
    return out;
  }

  // Union of the tensor origins in a value (tuples included).
  OriginSet origins_of(const Value &v) const {
    if (v.kind == Value::Kind::Tuple && v.elements) {
      OriginSet out = v.origins;
      for (const Value &e : *v.elements)
        add_origins(out, origins_of(e));
      return out;
    }
    return v.origins;
  }
  Value as_tensor(const Value &v) const {
    Value out;
    out.origins = origins_of(v);
    out.kind = out.origins.empty() ? Value::Kind::Neutral : Value::Kind::Tensor;
    return out;
  }

  // ---- entries ----

  Value input_for(const Parameter &p) {
    if (p.default_value) {
      ExprKind k = p.default_value->kind;
      if (k == ExprKind::Number || k == ExprKind::Bool || k == ExprKind::String)
        return Value::neutral();
    }
    if (!p.annotation.empty() && !tensorish_annotation(p.annotation))
      return Value::neutral();
    const auto &skip = frame_->unit ? frame_->unit->scope->skip_key_set : pkg_.skip_key_set;
    bool skipped =
        skip.count(std::string(p.name)) != 0 || (skip.empty() && p.name == "past_key_values");
    // A free function's arguments may come from anywhere, the CPU included: only its callers,
    // which inline it with real origins, can tell.
    bool unknown = frame_->unit == nullptr;
    const Origin *origin =
        make_origin(skipped || unknown ? OriginKind::Skip : OriginKind::Input, p.name, p.range);
    const_cast<Origin *>(origin)->maybe_not_tensor =
        p.annotation.find("Tensor") == std::string_view::npos;
    Value v = tensor(origin);
    if (p.variadic)
      v.kind = Value::Kind::Tuple;
    return v;
  }

  void analyze_entry(const FunctionDef *fn, const ModuleClass *unit) {
    statements_run_ = 0;
    loop_depth_ = 0;
    Frame frame;
    frame.unit = unit;
    frame.function = fn;
    frame.file = file_of_.count(fn) ? file_of_[fn] : nullptr;
    Frame *saved = frame_;
    frame_ = &frame;
    bool method = unit && !fn->is_staticmethod;
    for (size_t i = 0; i < fn->parameters.size(); ++i) {
      const Parameter &p = fn->parameters[i];
      if (i == 0 && method) {
        Value self;
        self.kind = Value::Kind::Self;
        frame.env[p.name] = self;
        continue;
      }
      frame.env[p.name] = input_for(p);
    }
    call_stack_.push_back(fn);
    exec_block(fn->body);
    call_stack_.pop_back();
    frame_ = saved;
  }

  void analyze_script(const SyntaxFile *file) {
    statements_run_ = 0;
    loop_depth_ = 0;
    Frame frame;
    frame.file = file;
    frame.script = true;
    Frame *saved = frame_;
    frame_ = &frame;
    for (const Stmt *s : file->body)
      if (s->kind != StmtKind::FunctionDef && s->kind != StmtKind::ClassDef)
        exec(s);
    frame_ = saved;
  }

  // ---- statements ----

  void exec_block(const std::vector<Stmt *> &body) {
    for (const Stmt *s : body) {
      if (frame_->terminated)
        return;
      exec(s);
    }
  }

  static bool mentions_device(const Expr *e, int depth = 0) {
    if (!e || depth > 16)
      return false;
    if (e->kind == ExprKind::Attribute && e->text == "device")
      return true;
    for (const Expr *o : e->operands)
      if (mentions_device(o, depth + 1))
        return true;
    return false;
  }

  bool within(const Origin *o, const Stmt *loop) const {
    return o->file == frame_->file && o->range.begin >= loop->range.begin &&
           o->range.end <= loop->range.end;
  }

  // Values made by ModuleList elements in this pass become "earlier iteration" values for the
  // next pass: one tensor carried across iterations may come from layers on different devices.
  void age_iterations(Env &env, const Stmt *loop) {
    std::unordered_map<const Origin *, const Origin *> aged;
    auto age = [&](OriginSet &set) {
      for (const Origin *&o : set) {
        if (o->kind != OriginKind::LayerIteration || o->earlier_iteration || !within(o, loop))
          continue;
        auto it = aged.find(o);
        if (it == aged.end()) {
          Origin &copy = origins_.emplace_back(*o);
          copy.earlier_iteration = true;
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

  void exec(const Stmt *s) {
    ++statements_run_;
    const Stmt *saved_statement = frame_->statement;
    frame_->statement = s;
    switch (s->kind) {
    case StmtKind::Expr:
      eval(s->value);
      break;
    case StmtKind::Assign: {
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
    case StmtKind::If:
      exec_if(s);
      break;
    case StmtKind::For:
    case StmtKind::While:
      exec_loop(s);
      break;
    case StmtKind::With:
      for (const Expr *item : s->items)
        eval(item);
      for (const Expr *t : s->targets)
        assign(t, Value::neutral(), nullptr);
      exec_block(s->body);
      break;
    case StmtKind::Try: {
      if (environment_too_large()) {
        exec_block(s->body);
        for (const auto &handler : s->handlers)
          exec_block(handler);
        frame_->terminated = false;
        exec_block(s->orelse);
        exec_block(s->finalbody);
        break;
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
      break;
    }
    case StmtKind::Return:
      if (s->value) {
        Value v = eval(s->value);
        frame_->returns = frame_->has_return ? join(frame_->returns, v) : v;
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

  // `if is_torch_fx_proxy(x):` / `if torch.jit.is_tracing():` branches run while tracing on the
  // CPU, not under a device map.
  static bool is_tracing_guard(const Expr *e) {
    if (!e || e->kind != ExprKind::Call)
      return false;
    std::string_view leaf = callee_leaf(e);
    return leaf == "is_torch_fx_proxy" || leaf == "is_tracing" || leaf == "is_scripting" ||
           leaf == "is_torchdynamo_compiling" || leaf == "is_compiling";
  }

  void exec_if(const Stmt *s) {
    if (is_tracing_guard(s->value)) {
      exec_block(s->orelse);
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
    Env before = frame_->env;
    exec_block(s->body);
    Env then_env = std::move(frame_->env);
    bool then_terminated = frame_->terminated;
    frame_->env = before;
    frame_->terminated = false;
    exec_block(s->orelse);
    bool else_terminated = frame_->terminated;
    if (then_terminated && else_terminated) {
      frame_->terminated = true;
      return;
    }
    frame_->terminated = false;
    if (then_terminated)
      return; // only the else path continues
    if (else_terminated) {
      frame_->env = std::move(then_env);
      return;
    }
    Env merged = join_env(then_env, frame_->env);
    // `if a.device != b.device: b = b.to(a.device)`: after the guard, b is where a is.
    if (mentions_device(s->value) && s->orelse.empty()) {
      for (const auto &[k, v] : then_env) {
        auto old = before.find(k);
        if (old == before.end() || old->second.origins != v.origins)
          merged[k] = v;
      }
    }
    frame_->env = std::move(merged);
  }

  void exec_loop(const Stmt *s) {
    // Two passes find values carried across iterations; deep nests and huge bodies get one, so
    // the work stays linear in the code.
    int passes = loop_depth_ < kMaxDoublePassNesting && !over_budget() ? 2 : 1;
    ++loop_depth_;
    Value element;
    if (s->kind == StmtKind::For)
      element = element_of(s->value);
    else
      eval(s->value);
    if (environment_too_large()) {
      if (s->kind == StmtKind::For)
        assign(s->targets[0], element, nullptr);
      exec_block(s->body);
      frame_->terminated = false;
      --loop_depth_;
      exec_block(s->orelse);
      return;
    }
    Env before = frame_->env;
    Env after_first;
    for (int pass = 0; pass < passes; ++pass) {
      if (s->kind == StmtKind::For)
        assign(s->targets[0], element, nullptr);
      exec_block(s->body);
      frame_->terminated = false;
      if (pass == 0 && passes == 2) {
        after_first = frame_->env;
        frame_->env = join_env(before, after_first);
        age_iterations(frame_->env, s);
      }
    }
    Env after = passes == 2 ? join_env(join_env(before, after_first), frame_->env)
                            : join_env(before, frame_->env);
    frame_->env = std::move(after);
    --loop_depth_;
    exec_block(s->orelse);
  }

  bool over_budget() const { return statements_run_ > kStatementBudget; }

  // Branches, loops, try and comprehensions copy and join the environment, which costs its size:
  // in a function with tens of thousands of locals (generated code) the analysis would be
  // quadratic in the function's length. Past this many names they run in sequence on one
  // environment instead (loops once): coarser, but linear, and no hand-written model gets here.
  static constexpr size_t kMaxJoinedEnvironment = 1024;
  bool environment_too_large() const { return frame_->env.size() > kMaxJoinedEnvironment; }

  void assign(const Expr *target, const Value &v, const Expr *value_expr) {
    if (!target)
      return;
    switch (target->kind) {
    case ExprKind::Name:
      frame_->env[target->text] = v;
      break;
    case ExprKind::Attribute:
      if (is_name(target->operands[0], "self") || target->operands[0]->kind == ExprKind::Name)
        frame_->env[frame_->file ? frame_->file->source->slice(target->range) : target->text] = v;
      break;
    case ExprKind::Tuple: {
      const auto &targets = target->operands;
      if (v.kind == Value::Kind::Tuple && v.elements && v.elements->size() == targets.size()) {
        for (size_t i = 0; i < targets.size(); ++i)
          assign(targets[i], (*v.elements)[i], nullptr);
      } else {
        Value each = v.kind == Value::Kind::Tuple ? as_tensor(v) : v;
        for (const Expr *t : targets)
          assign(t, each, nullptr);
      }
      break;
    }
    case ExprKind::Starred:
      assign(target->operands[0], v, nullptr);
      break;
    case ExprKind::Subscript: {
      // a[idx] = b: the stored tensor and a tensor index must be on a's device.
      Value base = eval(target->operands[0]);
      if (base.kind != Value::Kind::Tensor || !value_expr)
        break;
      Site site;
      site.kind = SiteKind::IndexPut;
      site.expr = target;
      site.operation = "indexed assignment";
      site.operands.push_back({target->operands[0], base.origins, false, false, true});
      if (v.has_origins() && v.kind != Value::Kind::Tuple)
        site.operands.push_back({value_expr, v.origins});
      bool tensor_index = false;
      for (size_t i = 1; i < target->operands.size(); ++i) {
        Value idx = eval(target->operands[i]);
        if (idx.kind == Value::Kind::Tensor) {
          site.operands.push_back({target->operands[i], idx.origins, true});
          tensor_index = true;
        }
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

  // ---- expressions ----

  Value element_of(const Expr *iterable) {
    if (iterable && iterable->kind == ExprKind::Call &&
        iterable->operands[0]->kind == ExprKind::Name) {
      std::string_view fn = iterable->operands[0]->text;
      if (fn == "enumerate" && iterable->operands.size() > 1) {
        Value pair;
        pair.kind = Value::Kind::Tuple;
        pair.elements = std::make_shared<std::vector<Value>>(
            std::vector<Value>{Value::neutral(), element_of(iterable->operands[1])});
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
        return element_of(iterable->operands[1]);
    }
    Value v = eval(iterable);
    // `for layer_past in past_key_values`: each layer's cache sits on that layer's device
    // (DEVICE_MODEL.md section 3b, `_reorder_cache`).
    for (const Origin *o : v.origins)
      if (o->kind == OriginKind::Skip && frame_->unit && o->label.substr(0, 4) == "past")
        return tensor(make_origin(OriginKind::LayerIteration, o->label, iterable->range));
    switch (v.kind) {
    case Value::Kind::Module:
      if (v.child && (v.child->kind != ChildKind::Single || v.child->is_container)) {
        Value item;
        item.kind = Value::Kind::ModuleItem;
        item.path = v.path;
        return item;
      }
      return Value::neutral();
    case Value::Kind::Tuple:
      return as_tensor(v);
    case Value::Kind::Tensor:
      return v;
    default:
      return Value::neutral();
    }
  }

  Value eval(const Expr *e) {
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
      Value a = eval(e->operands[0]);
      eval(e->operands[1]);
      Value b = eval(e->operands[2]);
      return join(a, b);
    }
    case ExprKind::Tuple:
    case ExprKind::Dict: {
      Value v;
      v.kind = Value::Kind::Tuple;
      v.elements = std::make_shared<std::vector<Value>>();
      for (const Expr *o : e->operands)
        v.elements->push_back(o->kind == ExprKind::Starred ? as_tensor(eval(o->operands[0]))
                                                           : eval(o));
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
    case ExprKind::Comprehension: {
      Value element = element_of(e->operands[1]);
      Value body;
      if (environment_too_large()) { // see kMaxJoinedEnvironment
        assign(e->operands[2], element, nullptr);
        body = eval(e->operands[0]);
      } else {
        Env saved = frame_->env;
        assign(e->operands[2], element, nullptr);
        body = eval(e->operands[0]);
        frame_->env = std::move(saved);
      }
      Value v;
      v.kind = Value::Kind::Tuple;
      v.origins = origins_of(body);
      return v;
    }
    default:
      return Value::neutral();
    }
  }

  std::string_view self_key(const Expr *e) {
    return frame_->file ? frame_->file->source->slice(e->range) : e->text;
  }

  Value module_value(std::string_view path, const ChildDecl *child) {
    Value v;
    v.kind = Value::Kind::Module;
    v.path = path;
    v.child = child;
    v.module_class = child ? child->resolved : nullptr;
    return v;
  }

  Value eval_attribute(const Expr *e) {
    const Expr *object = e->operands[0];
    std::string_view attr = e->text;
    if (is_name(object, "self") ||
        (object->kind == ExprKind::Name && frame_->env.count(object->text) &&
         frame_->env[object->text].kind == Value::Kind::Self)) {
      auto assigned = frame_->env.find(self_key(e));
      if (assigned != frame_->env.end())
        return assigned->second;
      const ModuleClass *unit = frame_->unit;
      if (!unit)
        return Value::neutral();
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
      if (attr == "device")
        return device_of(tensor(make_origin(OriginKind::Input, "self.device", e->range)));
      if (unit->has_builtin_parameters && (attr == "weight" || attr == "bias"))
        return tensor(make_origin(OriginKind::Parameter, attr, e->range));
      return Value::neutral();
    }
    Value base = eval(object);
    switch (base.kind) {
    case Value::Kind::Module: {
      std::string_view path = intern(std::string(base.path) + "." + std::string(attr));
      if (base.module_class) {
        if (const ChildDecl *child = base.module_class->find_child(attr))
          return module_value(path, child);
        // A parameter read directly, not through a call: no hook moves it.
        if (base.module_class->find_parameter(attr) || attr == "weight" || attr == "bias")
          return tensor(make_origin(OriginKind::Parameter, path, e->range));
      }
      if (attr == "weight" || attr == "bias")
        return tensor(make_origin(OriginKind::Parameter, path, e->range));
      if (attr == "device")
        return device_of(tensor(make_origin(OriginKind::Child, base.path, e->range)));
      if (attr == "config" || attr == "dtype" || attr == "training")
        return Value::neutral();
      // An unknown attribute of an external module: a submodule or a method, on its device.
      return module_value(path, nullptr);
    }
    case Value::Kind::Tensor:
      if (attr == "device" || attr == "shape" || attr == "dtype")
        mark_tensor(base);
      if (attr == "device")
        return device_of(base);
      if (neutral_tensor_attributes().count(attr))
        return Value::neutral();
      return base;
    case Value::Kind::Tuple:
      if (neutral_tensor_attributes().count(attr))
        return Value::neutral();
      return as_tensor(base);
    case Value::Kind::Device:
      return Value::neutral(); // device.type, device.index
    default:
      return Value::neutral();
    }
  }

  Value device_of(const Value &v) {
    Value d = v;
    d.kind = v.has_origins() ? Value::Kind::Device : Value::Kind::Neutral;
    return d;
  }

  static const Expr *constant_index(const Expr *e) {
    if (e && (e->kind == ExprKind::Number ||
              (e->kind == ExprKind::UnaryOp && e->operands[0]->kind == ExprKind::Number)))
      return e;
    return nullptr;
  }

  Value eval_subscript(const Expr *e) {
    Value base = eval(e->operands[0]);
    switch (base.kind) {
    case Value::Kind::Module: {
      if (!base.child || (base.child->kind == ChildKind::Single && !base.child->is_container))
        return Value::neutral();
      const Expr *index = e->operands.size() == 2 ? e->operands[1] : nullptr;
      if (const Expr *k = constant_index(index)) {
        std::string text = std::string(base.path) + "." +
                           std::string(frame_->file ? frame_->file->source->slice(k->range)
                                                    : std::string_view("0"));
        Value v = module_value(intern(text), nullptr);
        v.module_class = base.child->resolved;
        return v;
      }
      for (size_t i = 1; i < e->operands.size(); ++i)
        eval(e->operands[i]);
      Value item;
      item.kind = Value::Kind::ModuleItem;
      item.path = base.path;
      return item;
    }
    case Value::Kind::Tuple: {
      const Expr *index = e->operands.size() == 2 ? e->operands[1] : nullptr;
      if (base.elements && index && index->kind == ExprKind::Number) {
        size_t i = static_cast<size_t>(
            std::atoi(std::string(index->range.end - index->range.begin
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
      Site site;
      site.kind = SiteKind::Indexing;
      site.expr = e;
      site.operation = "indexing";
      site.operands.push_back({e->operands[0], base.origins, false, false, true});
      for (size_t i = 1; i < e->operands.size(); ++i) {
        Value idx = eval(e->operands[i]);
        if (idx.kind == Value::Kind::Tensor)
          site.operands.push_back({e->operands[i], idx.origins, true});
      }
      if (site.operands.size() > 1)
        emit(site);
      return base;
    }
    default:
      for (size_t i = 1; i < e->operands.size(); ++i)
        eval(e->operands[i]);
      return Value::neutral();
    }
  }

  Value binary(const std::string &op, const Expr *left_expr, const Value &l, const Expr *right_expr,
               const Value &r, const Expr *whole) {
    // `outputs + cross_attention_outputs[1:]`: module outputs are tuples by transformers'
    // naming convention, and `+` on them concatenates.
    bool outputs_concat = op == "+" && (names_outputs(left_expr) || names_outputs(right_expr));
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
      reported = emit(site);
    } else if (l_tensor && r_tensor && !whole) {
      // augmented assignment: the statement is the site
      Site site;
      site.kind = SiteKind::Arithmetic;
      site.expr = left_expr;
      site.operation = op + "=";
      site.operands.push_back({left_expr, l.origins, false, false, true});
      site.operands.push_back({right_expr, r.origins});
      reported = emit_statement_site(site);
    }
    if (!l_tensor)
      return r_tensor ? r : Value::neutral();
    if (!r_tensor)
      return l;
    Value out = l;
    add_origins(out.origins, r.origins);
    return anchored_result(reported, out);
  }

  static bool names_outputs(const Expr *e) {
    while (e && e->kind == ExprKind::Subscript)
      e = e->operands[0];
    if (!e || (e->kind != ExprKind::Name && e->kind != ExprKind::Attribute))
      return false;
    std::string_view name = e->text;
    // Caches are tuples too: `present_key_value + cross_attn_present_key_value`.
    return (name.size() >= 7 && name.substr(name.size() - 7) == "outputs") ||
           name.find("key_value") != std::string_view::npos || name.substr(0, 7) == "present";
  }

  // `x += y` is reported on the whole statement: one stand-in expression per statement, owned by
  // the interpreter, so revisits (loop passes, inlining) find the same site.
  const OriginSet *emit_statement_site(Site &site) {
    if (frame_->statement && frame_->statement->kind == StmtKind::AugAssign) {
      Expr &whole = statement_exprs_[frame_->statement];
      whole.range = frame_->statement->range;
      site.expr = &whole;
    }
    return emit(site);
  }

  // Reports a site; returns the anchor's origins when it was reported, else null.
  const OriginSet *emit(Site &site) {
    if (frame_->script && site.kind != SiteKind::ModelCall)
      return nullptr; // script code is checked for literal placements only
    site.unit = frame_->unit;
    site.function = call_stack_.empty() ? nullptr : call_stack_.back();
    site.file = frame_->file;
    site.statement = frame_->statement;
    int anchor = sink_.on_site(site);
    if (anchor < 0)
      return nullptr;
    anchored_.push_back(site.operands[static_cast<size_t>(anchor)].origins);
    return &anchored_.back();
  }

  // A reported site's result sits with its anchor (as it will once fixed).
  static Value anchored_result(const OriginSet *anchor, Value fallback) {
    if (!anchor || anchor->empty())
      return fallback;
    Value out;
    out.kind = Value::Kind::Tensor;
    out.origins = *anchor;
    return out;
  }

  void hardcoded(const Expr *e, std::string device) {
    if (frame_->script || !frame_->unit)
      return;
    HardcodedDevice ev;
    ev.expr = e;
    ev.device = std::move(device);
    ev.unit = frame_->unit;
    ev.file = frame_->file;
    sink_.on_hardcoded_device(ev);
  }

  static bool is_device_literal(std::string_view s) {
    return starts_with(s, "cuda") || s == "cpu" || starts_with(s, "mps") || starts_with(s, "xpu") ||
           starts_with(s, "npu");
  }

  // What a device argument says: Device/Tensor origins, a literal, or nothing known.
  Value device_argument(const Expr *arg, const Value &v, bool report_literal) {
    if (v.kind == Value::Kind::Str && is_device_literal(v.text)) {
      if (report_literal && v.text != "cpu")
        hardcoded(arg, std::string(v.text));
      if (v.text == "cpu")
        return tensor(make_origin(OriginKind::Fresh, "cpu", arg->range));
      return tensor(make_origin(OriginKind::LiteralDevice, v.text, arg->range));
    }
    if (v.has_origins()) {
      Value out;
      out.kind = Value::Kind::Tensor;
      out.origins = origins_of(v);
      return out;
    }
    return Value::neutral();
  }

  struct Args {
    std::vector<Value> positional;
    std::vector<std::pair<std::string_view, Value>> keywords;
    const Value *keyword(std::string_view name) const {
      for (const auto &[k, v] : keywords)
        if (k == name)
          return &v;
      return nullptr;
    }
  };

  Args eval_args(const Expr *call) {
    Args a;
    for (size_t i = 1; i < call->operands.size(); ++i)
      a.positional.push_back(eval(call->operands[i]));
    for (const Keyword &k : call->keywords)
      a.keywords.emplace_back(k.name, eval(k.value));
    return a;
  }

  static OriginSet tensor_union(const Args &args) {
    OriginSet out;
    for (const Value &v : args.positional)
      if (v.kind == Value::Kind::Tensor)
        for (const Origin *o : v.origins)
          if (std::find(out.begin(), out.end(), o) == out.end())
            out.push_back(o);
    return out;
  }

  Value first_tensor(const Args &args) {
    for (const Value &v : args.positional)
      if (v.kind == Value::Kind::Tensor && v.has_origins())
        return v;
    for (const auto &[k, v] : args.keywords)
      if (v.kind == Value::Kind::Tensor && v.has_origins())
        return v;
    return Value::neutral();
  }

  Value module_call(const Value &callee, const Expr *call, const Args &args) {
    if (callee.kind == Value::Kind::ModuleItem)
      return tensor(make_origin(OriginKind::LayerIteration, callee.path, call->range));
    const ChildDecl *child = callee.child;
    if (child && child->is_loss)
      return loss_site(call, args, "self." + std::string(callee.path));
    if (child && !child->has_parameters)
      return first_tensor(args); // activation/dropout: output stays with the input
    Value out = tensor(make_origin(OriginKind::Child, callee.path, call->range));
    return out;
  }

  Value loss_site(const Expr *call, const Args &args, std::string name) {
    Site site;
    site.kind = SiteKind::Loss;
    site.expr = call;
    site.operation = std::move(name);
    size_t taken = 0;
    for (size_t i = 0; i < args.positional.size() && taken < 2; ++i) {
      const Value &v = args.positional[i];
      if (v.kind == Value::Kind::Tensor) {
        SiteOperand op{call->operands[i + 1], v.origins};
        op.is_target = taken == 1;
        site.operands.push_back(op);
        ++taken;
      }
    }
    for (const Keyword &k : call->keywords) {
      if (taken >= 2)
        break;
      for (const auto &[name_, v] : args.keywords)
        if (name_ == k.name && v.kind == Value::Kind::Tensor &&
            (k.name == "input" || k.name == "target" || k.name == "labels" || k.name == "logits")) {
          SiteOperand op{k.value, v.origins};
          op.is_target = k.name == "target" || k.name == "labels";
          site.operands.push_back(op);
          ++taken;
        }
    }
    if (site.operands.size() == 2)
      emit(site);
    return first_tensor(args);
  }

  Value operation_site(SiteKind kind, const Expr *call, const Args &args, std::string name,
                       const Value *receiver) {
    Site site;
    site.kind = kind;
    site.expr = call;
    site.operation = std::move(name);
    if (receiver && receiver->kind == Value::Kind::Tensor)
      site.operands.push_back(
          {call->operands[0]->operands[0], receiver->origins, false, false, true});
    // Unlike `a[idx]`, these functions want their index and mask on the tensor's own device.
    for (size_t i = 0; i < args.positional.size(); ++i) {
      const Value &v = args.positional[i];
      if (v.kind != Value::Kind::Tensor || !v.has_origins())
        continue;
      site.operands.push_back({call->operands[i + 1], v.origins});
    }
    for (size_t k = 0; k < call->keywords.size(); ++k) {
      const auto &[name_, v] = args.keywords[k];
      if (v.kind == Value::Kind::Tensor && v.has_origins() &&
          (name_ == "attn_mask" || name_ == "other" || name_ == "index" || name_ == "mask" ||
           name_ == "src" || name_ == "input" || name_ == "weight" || name_ == "bias"))
        site.operands.push_back({call->keywords[k].value, v.origins});
    }
    const OriginSet *reported = site.operands.size() > 1 ? emit(site) : nullptr;
    if (receiver && receiver->kind == Value::Kind::Tensor)
      return *receiver;
    Value out;
    out.origins = tensor_union(args);
    out.kind = out.origins.empty() ? Value::Kind::Neutral : Value::Kind::Tensor;
    return anchored_result(reported, out);
  }

  // torch.* / F.* / nn.functional.*
  Value torch_call(const Expr *call, std::string_view leaf, const std::string &dotted) {
    if (leaf == "device" && call->operands.size() > 1) {
      Value v = eval(call->operands[1]);
      if (v.kind == Value::Kind::Str)
        return v;
      return Value::neutral();
    }
    Args args = eval_args(call);
    if (concat_functions().count(leaf)) {
      Site site;
      site.kind = SiteKind::Concat;
      site.expr = call;
      site.operation = dotted;
      const Expr *list = call->operands.size() > 1 ? call->operands[1] : nullptr;
      const Value *list_value = args.positional.empty() ? nullptr : &args.positional[0];
      if (list && list_value && list->kind == ExprKind::Tuple && list_value->elements) {
        for (size_t i = 0; i < list->operands.size() && i < list_value->elements->size(); ++i) {
          const Value &v = (*list_value->elements)[i];
          if (v.has_origins() && v.kind != Value::Kind::Tuple)
            site.operands.push_back({list->operands[i], v.origins});
          else if (v.kind == Value::Kind::Tuple)
            site.operands.push_back({list->operands[i], origins_of(v)});
        }
      } else if (list && list_value) {
        // A list built elsewhere: its elements' origins must agree with each other.
        OriginSet all = origins_of(*list_value);
        for (const Origin *o : all)
          site.operands.push_back({list, OriginSet{o}});
      }
      const OriginSet *reported = site.operands.size() > 1 ? emit(site) : nullptr;
      Value out;
      if (list_value)
        out.origins = origins_of(*list_value);
      out.kind = out.origins.empty() ? Value::Kind::Neutral : Value::Kind::Tensor;
      return anchored_result(reported, out);
    }
    if (is_tensor_constructor(leaf) || ends_with(leaf, "_like")) {
      if (const Value *device = args.keyword("device")) {
        const Keyword *k = call->keyword("device");
        return device_argument(k->value, *device, true);
      }
      if (ends_with(leaf, "_like"))
        return first_tensor(args);
      if ((leaf == "tensor" || leaf == "as_tensor") && !call->operands.empty() &&
          call->operands.size() > 1) {
        const Expr *data = call->operands[1];
        // A 0-dim CPU tensor mixes with tensors on any device.
        if (data->kind != ExprKind::Tuple && data->kind != ExprKind::Comprehension &&
            !args.positional[0].has_origins())
          return Value::neutral();
        // torch.tensor(x.tolist()), torch.as_tensor(index.batch_shape()): new CPU data.
        if (args.positional[0].has_origins() && data->kind != ExprKind::Call)
          return args.positional[0];
      }
      if (leaf == "from_numpy" || leaf == "tensor" || leaf == "as_tensor" || leaf == "zeros" ||
          leaf == "ones" || leaf == "arange" || leaf == "full" || leaf == "empty" ||
          leaf == "rand" || leaf == "randn" || leaf == "randint" || leaf == "eye" ||
          leaf == "linspace" || leaf == "randperm" || leaf == "range" || leaf == "logspace" ||
          leaf == "tril_indices" || leaf == "triu_indices" || leaf == "LongTensor" ||
          leaf == "FloatTensor" || leaf == "BoolTensor" || leaf == "IntTensor")
        return tensor(make_origin(OriginKind::Fresh, intern(dotted), call->range));
      return first_tensor(args);
    }
    if (loss_functions().count(leaf))
      return loss_site(call, args, dotted);
    if (ends_with(leaf, "Loss") && !leaf.empty() && leaf[0] >= 'A' && leaf[0] <= 'Z') {
      Value v;
      v.kind = Value::Kind::LossFunction;
      return v;
    }
    if (leaf == "checkpoint" && !args.positional.empty()) {
      const Value &fn = args.positional[0];
      if (fn.kind == Value::Kind::Module || fn.kind == Value::Kind::ModuleItem) {
        Args rest = args;
        rest.positional.erase(rest.positional.begin());
        return module_call(fn, call, rest);
      }
      return first_tensor(args);
    }
    if (matmul_functions().count(leaf))
      return operation_site(SiteKind::Matmul, call, args, dotted, nullptr);
    if (binary_functions().count(leaf) && tensor_union(args).size() > 1)
      return operation_site(SiteKind::Arithmetic, call, args, dotted, nullptr);
    if (index_functions().count(leaf))
      return operation_site(SiteKind::Indexing, call, args, dotted, nullptr);
    if (leaf == "finfo" || leaf == "iinfo" || leaf == "is_tensor" || leaf == "numel" ||
        leaf == "is_floating_point" || leaf == "get_default_dtype" || leaf == "no_grad" ||
        starts_with(dotted, "torch.cuda") || starts_with(dotted, "torch.jit") ||
        starts_with(dotted, "torch.distributed") || leaf == "is_autocast_enabled")
      return Value::neutral();
    Value out;
    out.origins = tensor_union(args);
    out.kind = out.origins.empty() ? Value::Kind::Neutral : Value::Kind::Tensor;
    return out;
  }

  // Used like a tensor: an argument that was only maybe a tensor is one.
  static void mark_tensor(const Value &v) {
    for (const Origin *o : v.origins)
      if (o->maybe_not_tensor)
        const_cast<Origin *>(o)->maybe_not_tensor = false;
  }

  Value tensor_method(const Expr *call, std::string_view method, const Value &receiver) {
    mark_tensor(receiver);
    Args args = eval_args(call);
    if (method == "to" || method == "type_as" || method == "type") {
      const Expr *device_expr = nullptr;
      const Value *device_value = nullptr;
      if (const Value *kw = args.keyword("device")) {
        device_value = kw;
        device_expr = call->keyword("device")->value;
      } else if (!args.positional.empty()) {
        device_value = &args.positional[0];
        device_expr = call->operands[1];
      } else if (const Value *other = args.keyword("other")) {
        device_value = other;
        device_expr = call->keyword("other")->value;
      }
      if (device_value && (device_value->kind == Value::Kind::Str || device_value->has_origins())) {
        Value d = device_argument(device_expr, *device_value, true);
        if (d.has_origins())
          return d;
      }
      return receiver;
    }
    if (method == "cuda") {
      std::string device = "cuda";
      if (!args.positional.empty() && call->operands[1]->kind == ExprKind::Number)
        device = "cuda:" + std::string(frame_->file->source->slice(call->operands[1]->range));
      hardcoded(call, device);
      return tensor(make_origin(OriginKind::LiteralDevice, intern(device), call->range));
    }
    if (method == "cpu")
      return tensor(make_origin(OriginKind::Fresh, "cpu", call->range));
    if (neutral_methods().count(method))
      return Value::neutral();
    if (method == "to_tuple" || method == "values" || method == "items") {
      Value container;
      container.kind = Value::Kind::Tuple;
      container.origins = receiver.origins;
      return container;
    }
    if (starts_with(method, "new_"))
      return receiver;
    if (method == "copy_" || method == "expand_as" || method == "view_as" ||
        method == "reshape_as" || method == "update" || method == "get")
      return receiver;
    if (index_functions().count(method))
      return operation_site(SiteKind::Indexing, call, args, "." + std::string(method), &receiver);
    if (matmul_functions().count(method))
      return operation_site(SiteKind::Matmul, call, args, "." + std::string(method), &receiver);
    if (binary_functions().count(method))
      return operation_site(SiteKind::Arithmetic, call, args, "." + std::string(method), &receiver);
    return receiver;
  }

  Value call_function(const FunctionDef *fn, const Expr *call, const Args &args, bool bound_self,
                      const ModuleClass *unit) {
    if (frame_->depth >= limits_.max_inline_depth || over_budget() ||
        std::find(call_stack_.begin(), call_stack_.end(), fn) != call_stack_.end())
      return first_tensor(args);
    Frame frame;
    frame.unit = unit;
    frame.function = fn;
    frame.file = file_of_.count(fn) ? file_of_[fn] : frame_->file;
    frame.depth = frame_->depth + 1;
    frame.script = frame_->script;
    size_t first = bound_self && !fn->is_staticmethod ? 1 : 0;
    if (first == 1 && !fn->parameters.empty()) {
      Value self;
      self.kind = Value::Kind::Self;
      frame.env[fn->parameters[0].name] = self;
    }
    size_t next = 0;
    for (size_t i = first; i < fn->parameters.size(); ++i) {
      const Parameter &p = fn->parameters[i];
      Value v;
      bool bound = false;
      if (p.variadic) {
        Value rest;
        rest.kind = Value::Kind::Tuple;
        rest.elements = std::make_shared<std::vector<Value>>();
        while (next < args.positional.size())
          rest.elements->push_back(args.positional[next++]);
        v = rest;
        bound = true;
      } else if (next < args.positional.size()) {
        v = args.positional[next++];
        bound = true;
      } else if (const Value *kw = args.keyword(p.name)) {
        v = *kw;
        bound = true;
      }
      if (!bound && p.default_value) {
        Frame *caller = frame_;
        frame_ = &frame;
        v = eval(p.default_value);
        frame_ = caller;
      }
      frame.env[p.name] = v;
    }
    (void)call;
    Frame *caller = frame_;
    frame_ = &frame;
    call_stack_.push_back(fn);
    exec_block(fn->body);
    call_stack_.pop_back();
    frame_ = caller;
    return frame.returns;
  }

  static const ChildDecl *returned_child(const FunctionDef *fn, const ModuleClass *cls) {
    for (const Stmt *st : fn->body)
      if (st->kind == StmtKind::Return && st->value && st->value->kind == ExprKind::Attribute &&
          is_name(st->value->operands[0], "self"))
        return cls->find_child(st->value->text);
    return nullptr;
  }

  static bool has_literal(const Value &v) {
    for (const Origin *o : v.origins)
      if (o->kind == OriginKind::LiteralDevice)
        return true;
    return false;
  }

  // Script code: `model(...)` / `model.generate(...)` on a model placed on a literal device, with
  // tensors placed on literal devices (shared/seeds/003).
  Value script_model_call(const Expr *call, const Expr *model_expr, const Value &model,
                          const Args &args) {
    Site site;
    site.kind = SiteKind::ModelCall;
    site.expr = call;
    site.operation = std::string(frame_->file->source->slice(model_expr->range)) + "(...)";
    SiteOperand anchor{model_expr, model.origins};
    anchor.keeps_device = true;
    site.operands.push_back(anchor);
    for (size_t i = 0; i < args.positional.size(); ++i)
      if (has_literal(args.positional[i]))
        site.operands.push_back({call->operands[i + 1], args.positional[i].origins});
    for (size_t k = 0; k < args.keywords.size() && k < call->keywords.size(); ++k)
      if (has_literal(args.keywords[k].second))
        site.operands.push_back({call->keywords[k].value, args.keywords[k].second.origins});
    if (site.operands.size() > 1)
      emit(site);
    return first_tensor(args);
  }

  Value eval_call(const Expr *call) {
    const Expr *callee = call->operands[0];
    std::string_view leaf = call->text;
    // self.method(...) / self.child(...)
    if (callee->kind == ExprKind::Attribute && is_name(callee->operands[0], "self") &&
        frame_->unit) {
      const ModuleClass *unit = frame_->unit;
      if (!unit->find_child(leaf) && !frame_->env.count(self_key(callee))) {
        Args args = eval_args(call);
        if (const FunctionDef *m = unit->find_method(leaf))
          return call_function(m, call, args, true, unit);
        if (leaf == "get_input_embeddings" || leaf == "get_output_embeddings")
          return module_value(leaf, nullptr);
        // transformers' own loss functions move labels to the logits' device themselves.
        return first_tensor(args);
      }
    }
    if (callee->kind == ExprKind::Name) {
      std::string_view name = callee->text;
      auto local = frame_->env.find(name);
      const bool is_local = local != frame_->env.end();
      if (is_local) {
        // A copy: evaluating the arguments may replace the environment (a comprehension
        // restores its saved copy), which would leave a reference into it dangling.
        const Value v = local->second;
        if (v.kind == Value::Kind::Module || v.kind == Value::Kind::ModuleItem)
          return module_call(v, call, eval_args(call));
        if (v.kind == Value::Kind::LossFunction)
          return loss_site(call, eval_args(call), std::string(name) + "(...)");
      }
      auto nested = frame_->local_functions.find(name);
      const FunctionDef *fn =
          nested != frame_->local_functions.end() ? nested->second : pkg_.find_function(name);
      if (fn && !is_local) {
        Args args = eval_args(call);
        return call_function(fn, call, args, false, frame_->unit);
      }
      if (name == "list" || name == "tuple" || name == "sorted" || name == "reversed" ||
          name == "sum" || name == "max" || name == "min" || name == "next" || name == "iter") {
        Args args = eval_args(call);
        if (name == "max" || name == "min")
          return Value::neutral();
        if (args.positional.empty())
          return Value::neutral();
        if (name == "list" || name == "tuple") {
          // A container: `tuple(a) + tuple(b)` concatenates, whatever the elements.
          Value container;
          container.kind = Value::Kind::Tuple;
          container.origins = origins_of(args.positional[0]);
          return container;
        }
        return args.positional[0];
      }
      if (name == "zip" || name == "enumerate") {
        eval_args(call);
        return Value::neutral();
      }
      if (neutral_builtins().count(name)) {
        eval_args(call);
        return Value::neutral();
      }
      if (ends_with(name, "Loss")) {
        eval_args(call);
        Value v;
        v.kind = Value::Kind::LossFunction;
        return v;
      }
    }
    std::string dotted = dotted_name(callee);
    if (callee->kind == ExprKind::Attribute) {
      if (starts_with(dotted, "torch.") || starts_with(dotted, "F.") ||
          starts_with(dotted, "nn.") || starts_with(dotted, "functional."))
        return torch_call(call, leaf, dotted);
      Value receiver = eval(callee->operands[0]);
      if (receiver.kind == Value::Kind::Neutral && (leaf == "to" || leaf == "cuda"))
        return tensor_method(call, leaf, receiver); // model.to("cuda:0"): a placed object
      switch (receiver.kind) {
      case Value::Kind::Tensor:
        if (frame_->script && has_literal(receiver) && leaf != "to" && leaf != "cuda") {
          Args args = eval_args(call);
          return script_model_call(call, callee->operands[0], receiver, args);
        }
        return tensor_method(call, leaf, receiver);
      case Value::Kind::Self:
      case Value::Kind::Module: {
        // `self.model.get_vision_tower()`: a getter returning a submodule is that submodule.
        if (receiver.kind == Value::Kind::Module && receiver.module_class)
          if (const FunctionDef *getter = receiver.module_class->find_method(leaf))
            if (const ChildDecl *child = returned_child(getter, receiver.module_class)) {
              eval_args(call);
              return module_value(intern(std::string(receiver.path) + "." + child->name), child);
            }
        Value target = eval_attribute(callee);
        if (target.kind == Value::Kind::Module || target.kind == Value::Kind::ModuleItem)
          return module_call(target, call, eval_args(call));
        eval_args(call);
        return target;
      }
      case Value::Kind::ModuleItem:
        // layer.forward(...), layer.__call__(...)
        return module_call(receiver, call, eval_args(call));
      case Value::Kind::Tuple: {
        Args args = eval_args(call);
        if (leaf == "append" || leaf == "extend" || leaf == "insert") {
          // Lists that collect tensors: remember what went in.
          if (callee->operands[0]->kind == ExprKind::Name && !args.positional.empty()) {
            Value &list = frame_->env[callee->operands[0]->text];
            Value added = leaf == "insert" && args.positional.size() > 1 ? args.positional[1]
                                                                         : args.positional[0];
            Value updated;
            updated.kind = Value::Kind::Tuple;
            updated.origins = origins_of(list);
            add_origins(updated.origins, origins_of(added));
            list = updated;
          }
          return Value::neutral();
        }
        if (leaf == "pop" || leaf == "get" || leaf == "values" || leaf == "items")
          return as_tensor(receiver);
        return Value::neutral();
      }
      case Value::Kind::Str:
      case Value::Kind::Device:
        eval_args(call);
        return Value::neutral();
      default:
        break;
      }
      Args args = eval_args(call);
      if (leaf == "checkpoint" || leaf == "_gradient_checkpointing_func") {
        if (!args.positional.empty() && (args.positional[0].kind == Value::Kind::Module ||
                                         args.positional[0].kind == Value::Kind::ModuleItem)) {
          Args rest = args;
          rest.positional.erase(rest.positional.begin());
          return module_call(args.positional[0], call, rest);
        }
      }
      if (ends_with(leaf, "Loss")) {
        Value v;
        v.kind = Value::Kind::LossFunction;
        return v;
      }
      return first_tensor(args);
    }
    Value target = eval(callee);
    Args args = eval_args(call);
    if (frame_->script && has_literal(target))
      return script_model_call(call, callee, target, args);
    if (target.kind == Value::Kind::Module || target.kind == Value::Kind::ModuleItem)
      return module_call(target, call, args);
    if (target.kind == Value::Kind::LossFunction)
      return loss_site(call, args, "loss function");
    if (!args.positional.empty() && (args.positional[0].kind == Value::Kind::Module ||
                                     args.positional[0].kind == Value::Kind::ModuleItem)) {
      Args rest = args;
      rest.positional.erase(rest.positional.begin());
      return module_call(args.positional[0], call, rest);
    }
    return first_tensor(args);
  }
};

} // namespace

void analyze_package(const Package &package, const PlacementModel &placement, SiteSink &sink,
                     const AnalysisLimits &limits) {
  Interpreter interpreter(package, placement, sink, limits);
  interpreter.run();
}

} // namespace devlint
