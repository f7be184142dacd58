// Calls: submodules (hooked: their output sits on their device), package functions and methods
// (inlined), PyTorch functions and tensor methods (model/torch_catalog.h).
#include "placement/interpreter.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>

#include "model/text.h"
#include "model/torch_catalog.h"
#include "model/torch_layers.h"

namespace devlint {

bool Interpreter::is_device_literal(std::string_view s) {
  return starts_with(s, "cuda") || s == "cpu" || starts_with(s, "mps") || starts_with(s, "xpu") ||
         starts_with(s, "npu");
}

// Moved to (or made on) another value's device: an explanation says so rather than only where
// that value came from.
Value Interpreter::placed_by(Value v, const Expr *device_expr, const Expr *at, bool made) {
  if (!v.has_origins())
    return v;
  std::string_view target = intern(std::string(frame_->file->source->slice(device_expr->range)));
  for (const Origin *&o : v.origins) {
    // A fresh tensor is only ever the same as itself: what is made on its device must stay that
    // one origin.
    if (made && o->kind == OriginKind::Fresh)
      continue;
    Origin &placed = origins_.emplace_back(*o);
    placed.moved_to = target;
    placed.made_there = made;
    placed.moved_at = at->range;
    o = &placed;
  }
  return v;
}

Value Interpreter::device_argument(const Expr *arg, const Value &v, bool report_literal) {
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
// may move it even when nothing else says so (an unannotated argument).
void Interpreter::note_index_tensor(std::string_view operation, const Args &args, size_t shift) {
  static const std::unordered_set<std::string_view> index_second = {
      "index_select", "gather",       "index_add",      "index_add_",     "index_copy",
      "index_copy_",  "index_fill",   "index_fill_",    "scatter",        "scatter_",
      "scatter_add",  "scatter_add_", "scatter_reduce", "scatter_reduce_"};
  size_t position = operation == "take_along_dim" ? 0 : 1;
  if (operation != "take_along_dim" && !index_second.count(operation))
    return;
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

namespace {

// Every value an argument list holds, with the expression it came from.
template <typename Arguments, typename Visit>
void for_each_argument(const Expr *call, const Arguments &args, Visit visit) {
  for (size_t i = 0; i < args.positional.size() && i + 1 < call->operands.size(); ++i)
    visit(call->operands[i + 1], args.positional[i]);
  for (size_t k = 0; k < args.keywords.size() && k < call->keywords.size(); ++k)
    visit(call->keywords[k].value, args.keywords[k].second);
}

bool made_on_cpu_only(const Value &v) {
  return v.kind == Value::Kind::Tensor && v.has_origins() &&
         std::all_of(v.origins.begin(), v.origins.end(), made_on_cpu);
}

// Some argument holds a tensor made on the CPU (on one of its paths at least): only then is a
// submodule's forward worth following for it (check_handed_cpu_tensors decides the rest).
template <typename Arguments> bool hands_cpu_tensor(const Arguments &args) {
  auto cpu = [](const Value &v) {
    return v.kind == Value::Kind::Tensor &&
           std::any_of(v.origins.begin(), v.origins.end(), made_on_cpu);
  };
  return std::any_of(args.positional.begin(), args.positional.end(), cpu) ||
         std::any_of(args.keywords.begin(), args.keywords.end(),
                     [&](const auto &kv) { return cpu(kv.second); });
}

} // namespace

Value Interpreter::module_call(const Value &callee, const Expr *call, const Args &args) {
  // The first argument of a layer, a norm or a projection is its input tensor.
  if (!args.positional.empty() && (!callee.child || callee.child->has_parameters))
    note_tensor(args.positional[0]);
  if (callee.kind == Value::Kind::Module) {
    const ModuleClass *cls = callee.module_class;
    if (cpu_probe_)
      probe_module_call(callee, cls, call, args);
    else if (cls && muted_sites_ == 0 && frame_->file && hands_cpu_tensor(args)) {
      std::vector<const Expr *> exprs;
      for_each_argument(call, args, [&](const Expr *e, const Value &) { exprs.push_back(e); });
      check_handed_cpu_tensors(cls, call, call_spelling(call, call->operands[0]), args, exprs);
    } else if (!cls && muted_sites_ == 0)
      check_cpu_input_of_layer(callee, call, args);
  }
  if (callee.kind == Value::Kind::ModuleItem) {
    const Origin *o = make_origin(OriginKind::LayerIteration, callee.path, call->range);
    Origin *element = const_cast<Origin *>(o);
    element->loop = loops_.empty() ? nullptr : loops_.back();
    // One element picked before the loop that calls it: the same module every pass.
    if (running_loop() && picked_before_running_loop(callee.picked_in_loop)) {
      element->loop = nullptr;
      element->settled = true;
    } else if (callee.picked_in_loop) {
      element->loop = callee.picked_in_loop;
    }
    return tensor(o);
  }
  const ChildDecl *child = callee.child;
  if (child && child->is_loss)
    return loss_site(call, args, "self." + std::string(callee.path));
  if (child && !child->has_parameters)
    return first_tensor(args); // activation/dropout: output stays with the input
  // Where code is placed explicitly (LibTorch), a child that __init__ moved to a literal device
  // takes its inputs there: nothing moves them for it.
  if (child && !child->placed_device.empty() && callee.kind == Value::Kind::Module &&
      frame_->file && frame_->file->explicit_placement)
    placed_child_call(call, *child, args);
  Value out = tensor(make_origin(OriginKind::Child, callee.path, call->range));
  return out;
}

// One GPU has no hooks: a tensor made on the CPU and handed to a submodule reaches its forward
// as it is. When that forward combines it with the model's tensors (or feeds it to a layer with
// weights), the call is where it fails; the fix moves it to another argument's device.
// `exprs`: the expression of each argument, positional ones first.
void Interpreter::check_handed_cpu_tensors(const ModuleClass *cls, const Expr *site_expr,
                                           std::string operation, const Args &args,
                                           const std::vector<const Expr *> &exprs) {
  const FunctionDef *forward = cls->find_method("forward");
  if (!forward || !frame_->file)
    return;
  OriginSet cpu;
  std::vector<SiteOperand> handed;
  const Expr *anchor_expr = nullptr;
  OriginSet anchor_origins;
  size_t next = 0;
  auto consider = [&](const Value &v) {
    const Expr *e = next < exprs.size() ? exprs[next] : nullptr;
    ++next;
    if (!e)
      return;
    // Made on the CPU, on every path or on the one that does not take the argument as it came
    // (`if isinstance(spout, list): spout = torch.tensor(spout)`). Not beside a value moved or
    // made somewhere (`if mask is not None: mask = mask.to(x.device)` leaves None unmoved).
    OriginSet made_here;
    bool else_as_given = true;
    bool unproven = false;
    if (v.kind == Value::Kind::Tensor)
      for (const Origin *o : v.origins) {
        if (made_on_cpu(o))
          made_here.push_back(o);
        else
          else_as_given = else_as_given && o->kind == OriginKind::Input && o->moved_to.empty() &&
                          !o->made_there;
        unproven = unproven || (!made_on_cpu(o) && (o->maybe_not_tensor || o->defaults_to_none));
      }
    if (!made_here.empty() && else_as_given) {
      add_origins(cpu, made_here);
      handed.push_back({e, made_here});
      handed.back().unproven_elsewhere = unproven;
    } else if (!anchor_expr && v.kind == Value::Kind::Tensor && v.has_origins() &&
               std::none_of(v.origins.begin(), v.origins.end(), [](const Origin *o) {
                 return o->maybe_not_tensor || o->defaults_to_none ||
                        o->kind == OriginKind::Fresh || o->kind == OriginKind::PlainTensor;
               })) {
      anchor_expr = e;
      anchor_origins = v.origins;
    }
  };
  for (const Value &v : args.positional)
    consider(v);
  for (const auto &kv : args.keywords)
    consider(kv.second);
  if (cpu.empty() || !anchor_expr)
    return;
  cpu_probe_ = &cpu;
  cpu_probe_hit_ = false;
  ++muted_sites_;
  call_function(forward, site_expr, args, true, cls);
  --muted_sites_;
  cpu_probe_ = nullptr;
  if (!cpu_probe_hit_)
    return;
  Site site;
  site.kind = SiteKind::Arithmetic;
  site.expr = site_expr;
  site.operation = std::move(operation);
  site.handed_use = cpu_probe_use_;
  SiteOperand anchor{anchor_expr, anchor_origins};
  anchor.keeps_device = true;
  site.operands.push_back(anchor);
  for (SiteOperand &operand : handed)
    site.operands.push_back(std::move(operand));
  emit(site);
}

// `prepare_inputs_for_generation` returns the keyword arguments `generate` passes to the model's
// own `forward`, with no hook on one GPU: a tensor it makes on the CPU
// (`spout = torch.tensor(spout)`) is handed to that forward as it is.
void Interpreter::check_generation_inputs(const Expr *returned, const Value &v) {
  const FunctionDef *running = frame_->function;
  if (!running || running->name != "prepare_inputs_for_generation" || !frame_->unit ||
      muted_sites_ > 0 || returned->kind != ExprKind::Dict || !v.elements ||
      v.elements->size() != returned->operands.size())
    return;
  Args args;
  std::vector<const Expr *> exprs;
  for (size_t i = 0; i < returned->operands.size(); ++i) {
    const Expr *key = returned->keywords[i].value;
    if (!key || key->kind != ExprKind::String)
      return;
    args.keywords.emplace_back(key->text, (*v.elements)[i]);
    exprs.push_back(returned->operands[i]);
  }
  check_handed_cpu_tensors(frame_->unit, returned, "forward(...)", args, exprs);
}

namespace {

// `nn.Embedding`, `nn.Linear`, `nn.Conv1d`...: a torch layer with weights.
bool is_torch_layer_with_weights(const ChildDecl *child) {
  if (!child || !child->has_parameters || child->resolved)
    return false;
  return torch_layer_shape(child->class_name,
                           [](size_t, std::string_view) {
                             LayerArgument missing;
                             missing.kind = LayerArgument::Kind::Missing;
                             return missing;
                           })
      .known_layer;
}

} // namespace

// `self.position_embedding(position_ids)` with ids made on the CPU: the layer's weights are on a
// GPU, and on one GPU no hook moves its input.
void Interpreter::check_cpu_input_of_layer(const Value &callee, const Expr *call,
                                           const Args &args) {
  const Expr *layer = call->operands[0];
  if (args.positional.empty() || call->operands.size() < 2 ||
      !made_on_cpu_only(args.positional[0]) || !frame_->file ||
      frame_->file->source->language != Language::Python || layer->kind != ExprKind::Attribute ||
      !callee.child || layer->text != callee.child->name ||
      !is_torch_layer_with_weights(callee.child))
    return;
  Site site;
  site.kind = SiteKind::Matmul;
  site.expr = call;
  site.operation = std::string(frame_->file->source->slice(layer->range)) + "(...)";
  const Origin *weight_origin = make_origin(
      OriginKind::Parameter, intern(std::string(callee.path) + ".weight"), layer->range);
  const_cast<Origin *>(weight_origin)->layer_weights = true;
  SiteOperand weights{layer, {weight_origin}};
  weights.keeps_device = true;
  weights.layer_weights = true;
  site.operands.push_back(weights);
  site.operands.push_back({call->operands[1], args.positional[0].origins});
  emit(site);
}

// Inside such a probe: the handed tensor reaches a layer with weights, or another package
// module whose forward is followed in turn.
void Interpreter::probe_module_call(const Value &callee, const ModuleClass *cls, const Expr *call,
                                    const Args &args) {
  bool carries = false;
  for_each_argument(call, args, [&](const Expr *, const Value &v) {
    for (const Origin *o : v.origins)
      carries =
          carries || std::find(cpu_probe_->begin(), cpu_probe_->end(), o) != cpu_probe_->end();
  });
  if (!carries)
    return;
  if (cls) {
    if (const FunctionDef *forward = cls->find_method("forward"))
      call_function(forward, call, args, true, cls);
    return;
  }
  // A torch layer with weights fails on it at once, and so does an `nn.Sequential` of layers
  // with weights (its first one with weights gets it, an activation before that keeps it).
  const ChildDecl *child = callee.child;
  if (is_torch_layer_with_weights(child) ||
      (child && !child->resolved && child->is_container && child->has_parameters &&
       child->class_name == "Sequential"))
    note_probe_hit(call);
}

std::optional<Value> Interpreter::call_handed_module(const Expr *call, const Args &args) {
  if (args.positional.empty() || (args.positional[0].kind != Value::Kind::Module &&
                                  args.positional[0].kind != Value::Kind::ModuleItem))
    return std::nullopt;
  Args rest = args;
  rest.positional.erase(rest.positional.begin());
  return module_call(args.positional[0], call, rest);
}

namespace {

// Reductions that return a 0-dim tensor when given no dimension.
bool is_full_reduction(std::string_view name) {
  static const std::unordered_set<std::string_view> s = {
      "sum", "mean", "prod", "max", "min",    "amax",      "amin",         "norm",
      "all", "any",  "std",  "var", "median", "logsumexp", "count_nonzero"};
  return s.count(name) > 0;
}

bool has_dim_argument(const Expr *call, size_t first_dim_position) {
  return call->operands.size() > first_dim_position || call->keyword("dim") ||
         call->keyword("axis");
}

// A 0-dim tensor made from CPU tensors alone mixes with tensors on any device.
bool all_on_cpu(const Value &v) {
  if (!v.has_origins())
    return false;
  for (const Origin *o : v.origins)
    if (o->kind != OriginKind::Fresh && o->kind != OriginKind::PlainTensor)
      return false;
  return true;
}

// `x.device`, `device`, `self.device`, `target_device`: an argument of `.to()` naming a device.
bool names_device(const Expr *e) {
  if (!e)
    return false;
  if (e->kind == ExprKind::Attribute || e->kind == ExprKind::Name)
    return e->text.find("device") != std::string_view::npos;
  return e->kind == ExprKind::Call && callee_leaf(e) == "device";
}

// `[[token_id]] * batch_size`, `[bos] + ids`: a list repeated or joined is still a list.
bool builds_list(const Expr *e) {
  if (!e || e->kind != ExprKind::BinaryOp || e->operands.size() != 2)
    return false;
  auto list = [](const Expr *operand) {
    return operand->kind == ExprKind::Tuple || operand->kind == ExprKind::Comprehension ||
           builds_list(operand);
  };
  return (e->text == "*" || e->text == "+") && (list(e->operands[0]) || list(e->operands[1]));
}

// `self.shared_embedding = shared_patch_embedding` in `__init__`, straight from one of its
// parameters: an object the parent handed in.
bool assigned_from_parameter(const std::vector<Stmt *> &body, const FunctionDef &init,
                             std::string_view attr) {
  for (const Stmt *s : body) {
    if (s->kind == StmtKind::Assign && s->value && s->value->kind == ExprKind::Name)
      for (const Expr *t : s->targets)
        if (t->kind == ExprKind::Attribute && t->text == attr && is_name(t->operands[0], "self") &&
            init.has_parameter(s->value->text))
          return true;
    if (s->kind == StmtKind::If && (assigned_from_parameter(s->body, init, attr) ||
                                    assigned_from_parameter(s->orelse, init, attr)))
      return true;
  }
  return false;
}

// `self.<attr>` holds a module the class's constructor was handed.
bool handed_to_constructor(const ModuleClass &unit, std::string_view attr) {
  const FunctionDef *init = unit.find_method("__init__");
  return init && assigned_from_parameter(init->body, *init, attr);
}

// A function the file imports by an absolute import from a package other than torch and
// transformers (mamba_ssm, flash_attn, causal_conv1d, torchvision): compiled code, not a helper
// that only reads a tensor's shape or dtype (`_prepare_4d_causal_attention_mask`).
bool imports_kernel(const SyntaxFile &file, const Expr *callee) {
  std::optional<ImportedClass> imported = imported_class(file, callee);
  if (!imported)
    return false;
  std::string_view module = imported->module;
  std::string_view top = module.substr(0, module.find('.'));
  return top != "torch" && top != "transformers" && top != "typing" && top != "functools";
}

// `helper(self.feed_forward_chunk, ...)`: one of the running object's methods (not a child)
// handed to a function as its first argument.
const FunctionDef *handed_method(const Expr *call, const ModuleClass *unit) {
  if (!unit || call->operands.size() < 2)
    return nullptr;
  const Expr *first = call->operands[1];
  if (first->kind != ExprKind::Attribute || !is_name(first->operands[0], "self") ||
      unit->find_child(first->text))
    return nullptr;
  const FunctionDef *method = unit->find_method(first->text);
  return method && !method->is_staticmethod ? method : nullptr;
}

} // namespace

// The same ModuleList output from this pass or from an earlier one.
const Origin *Interpreter::iteration_version(const Origin *o, bool earlier) {
  if (o->earlier_iteration == earlier)
    return o;
  Origin &copy = origins_.emplace_back(*o);
  copy.earlier_iteration = earlier;
  return &copy;
}

// `F.linear(x, weight, bias)`, `F.embedding(ids, weight)`: the weight stays where it is (moving
// a vocabulary matrix on every step is wrong even when it works); the input moves to it.
Value Interpreter::weighted_site(const Expr *call, const Args &args, const std::string &name,
                                 SiteKind kind) {
  Site site;
  site.kind = kind;
  site.expr = call;
  site.operation = name;
  auto add = [&](const Expr *expr, const Value &v, bool weight) {
    if (v.kind != Value::Kind::Tensor || !v.has_origins())
      return;
    SiteOperand operand{expr, v.origins};
    operand.keeps_device = weight;
    site.operands.push_back(operand);
  };
  // `F.linear(x, self.weight, self.bias)`: the bias is the weight's module's own parameter and
  // sits with it; only the input may come from elsewhere (and is what a fix moves).
  auto own_attribute = [](const Expr *e) {
    return e && e->kind == ExprKind::Attribute && is_name(e->operands[0], "self");
  };
  const Expr *weight_expr = call->operands.size() > 2 ? call->operands[2] : nullptr;
  if (const Keyword *k = call->keyword("weight"))
    weight_expr = k->value;
  auto rides_with_weight = [&](const Expr *bias) {
    return own_attribute(weight_expr) && own_attribute(bias);
  };
  for (size_t i = 0; i < args.positional.size(); ++i)
    if (!(i == 2 && rides_with_weight(call->operands[i + 1])))
      add(call->operands[i + 1], args.positional[i], i == 1);
  for (size_t k = 0; k < call->keywords.size(); ++k) {
    std::string_view keyword = call->keywords[k].name;
    if (keyword == "bias" && rides_with_weight(call->keywords[k].value))
      continue;
    if (keyword == "weight" || keyword == "input" || keyword == "bias")
      add(call->keywords[k].value, args.keywords[k].second, keyword == "weight");
  }
  const OriginSet *reported = site.operands.size() > 1 ? emit(site) : nullptr;
  Value out = args.positional.size() > 1 && kind == SiteKind::Indexing ? args.positional[1]
                                                                       : first_tensor(args);
  return anchored_result(reported, out);
}

Value Interpreter::torch_call(const Expr *call, std::string_view leaf, const std::string &dotted) {
  if (leaf == "device" && call->operands.size() > 1)
    return device_construction(call);
  // `torch::data::make_data_loader(dataset, ...)`: its batches are CPU tensors until moved.
  if (leaf == "make_data_loader" && places_explicitly()) {
    eval_args(call);
    Value loader;
    loader.kind = Value::Kind::Tuple;
    loader.origins.push_back(make_origin(OriginKind::Fresh, intern(dotted), call->range));
    return loader;
  }
  Args args = eval_args(call);
  if (torch_catalog::is_concat_function(leaf)) {
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
    } else if (list && list_value && list_value->elements && !list_value->elements->empty()) {
      // A list of known elements built elsewhere: each element is one operand.
      for (const Value &v : *list_value->elements)
        if (v.has_origins() || v.kind == Value::Kind::Tuple)
          site.operands.push_back({list, origins_of(v)});
    } else if (list && list_value) {
      // A list built elsewhere, one element per pass of a loop: the elements are built the
      // same way, so origins that are alternatives of one path (passed in or computed) sit
      // together. Only elements made by different members of a ModuleList may differ.
      for (const Origin *o : origins_of(*list_value))
        if (o->kind == OriginKind::LayerIteration && !o->settled &&
            !starts_with(o->label, "past")) {
          site.operands.push_back({list, OriginSet{iteration_version(o, false)}});
          site.operands.push_back({list, OriginSet{iteration_version(o, true)}});
          break;
        }
    }
    if (list_value && list_value->elements)
      for (const Value &element : *list_value->elements)
        note_tensor(element); // torch.cat takes tensors
    const OriginSet *reported = site.operands.size() > 1 ? emit(site) : nullptr;
    Value out;
    if (list_value)
      out.origins = origins_of(*list_value);
    out.kind = out.origins.empty() ? Value::Kind::Neutral : Value::Kind::Tensor;
    return anchored_result(reported, out);
  }
  // A torch.distributions distribution samples where its parameters are: one built from Python
  // numbers (`Gumbel(0, 1)`) samples on the CPU. Its `sample`/`rsample` give that value.
  if (torch_catalog::is_distribution_class(dotted)) {
    Value parameters = first_tensor(args);
    if (parameters.has_origins())
      return parameters;
    return tensor(make_origin(OriginKind::Fresh, intern(dotted), call->range));
  }
  bool constructor = torch_catalog::is_tensor_constructor(leaf);
  bool sampling = torch_catalog::is_random_sampling(leaf);
  bool like = torch_catalog::is_like_constructor(leaf);
  if (constructor || sampling || like) {
    if (const Value *device = args.keyword("device")) {
      const Keyword *k = call->keyword("device");
      Value made = device_argument(k->value, *device, true);
      return device->kind == Value::Kind::Str ? made : placed_by(made, k->value, call, true);
    }
    if (like)
      return first_tensor(args);
    if ((leaf == "tensor" || leaf == "as_tensor") && !call->operands.empty() &&
        call->operands.size() > 1) {
      const Expr *data = call->operands[1];
      // A 0-dim CPU tensor mixes with tensors on any device; `[[token_id]] * batch_size` is
      // a list, so its tensor has dimensions.
      if (data->kind != ExprKind::Tuple && data->kind != ExprKind::Comprehension &&
          !builds_list(data) && !args.positional[0].has_origins())
        return Value::neutral();
      // torch.tensor(x.tolist()), torch.as_tensor(index.batch_shape()): new CPU data.
      if (args.positional[0].has_origins() && data->kind != ExprKind::Call)
        return args.positional[0];
    }
    // torch.normal(mean, std) samples where mean is; torch.normal(0, 1, size) on the CPU.
    if (sampling) {
      Value source = first_tensor(args);
      if (source.has_origins())
        return source;
    }
    return tensor(make_origin(OriginKind::Fresh, intern(dotted), call->range));
  }
  if (torch_catalog::is_loss_function(leaf))
    return loss_site(call, args, dotted);
  if (torch_catalog::is_loss_class(leaf)) {
    Value v;
    v.kind = Value::Kind::LossFunction;
    return v;
  }
  if (is_full_reduction(leaf) && args.positional.size() == 1 && !has_dim_argument(call, 2) &&
      all_on_cpu(args.positional[0]))
    return Value::neutral();
  if (leaf == "checkpoint" && !args.positional.empty()) {
    if (std::optional<Value> out = call_handed_module(call, args))
      return *out;
    return first_tensor(args);
  }
  if (leaf == "linear" || leaf == "embedding")
    return weighted_site(call, args, dotted,
                         leaf == "linear" ? SiteKind::Matmul : SiteKind::Indexing);
  if (torch_catalog::is_matmul_function(leaf))
    return operation_site(SiteKind::Matmul, call, args, dotted, nullptr);
  if (torch_catalog::is_elementwise_function(leaf) && tensor_union(args).size() > 1)
    return operation_site(SiteKind::Arithmetic, call, args, dotted, nullptr);
  if (torch_catalog::is_indexing_function(leaf)) {
    note_index_tensor(leaf, args, 1); // torch.index_select(x, dim, index)
    return operation_site(SiteKind::Indexing, call, args, dotted, nullptr);
  }
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

Value Interpreter::tensor_method(const Expr *call, std::string_view method, const Value &receiver) {
  note_tensor(receiver);
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
      if (device_value->kind != Value::Kind::Str)
        d = placed_by(d, device_expr, call, false);
      if (d.has_origins())
        return d;
    }
    // `.to(x.device)` with an `x` the analysis cannot place: the value now travels with `x`,
    // wherever that is, so it meets nothing on another device that `x` would not.
    if (device_value && !device_value->has_origins() && names_device(device_expr))
      return tensor(make_origin(OriginKind::Skip, "moved", call->range));
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
  if (torch_catalog::is_non_tensor_method(method))
    return Value::neutral();
  if (is_full_reduction(method) && !has_dim_argument(call, 1) && all_on_cpu(receiver))
    return Value::neutral();
  if (method == "to_tuple" || method == "values" || method == "items") {
    Value container;
    container.kind = Value::Kind::Tuple;
    container.origins = receiver.origins;
    return container;
  }
  if (starts_with(method, "new_"))
    return receiver;
  if (method == "copy_" || method == "expand_as" || method == "view_as" || method == "reshape_as" ||
      method == "update" || method == "get")
    return receiver;
  if (torch_catalog::is_indexing_function(method)) {
    note_index_tensor(method, args, 0);
    return operation_site(SiteKind::Indexing, call, args, "." + std::string(method), &receiver);
  }
  if (torch_catalog::is_matmul_function(method))
    return operation_site(SiteKind::Matmul, call, args, "." + std::string(method), &receiver);
  if (torch_catalog::is_elementwise_function(method))
    return operation_site(SiteKind::Arithmetic, call, args, "." + std::string(method), &receiver);
  return receiver;
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
  std::function<void(Value &)> rename = [&](Value &v) {
    for (const Origin *&o : v.origins)
      if (made.count(o))
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
    copy.unit = frame_->unit;
    copy.function = frame_->function;
    return &copy;
  }
  default:
    return o; // made on the CPU, on a literal device, or wherever a cache was made
  }
}

// `generate` (transformers' GenerationMixin, outside the package) runs no hook: it makes its own
// tensors (start tokens, stopping criteria, the growing sequence) on the device of its main input
// and concatenates and compares the ids it is given with them. A tensor passed to it that was
// made on the CPU meets that device, wherever the model put the main input.
Value Interpreter::generate_call(const Expr *call, const Args &args,
                                 const std::optional<Value> &result) {
  auto fresh_only = [](const Value &v) {
    OriginSet out;
    if (v.kind == Value::Kind::Tensor)
      for (const Origin *o : v.origins)
        if (o->kind == OriginKind::Fresh && !o->maybe_not_tensor)
          out.push_back(o);
    return out;
  };
  // The main input is a tensor, but an argument that may be a number or None keeps that doubt
  // for the fix: `generate(input_ids=None, inputs_embeds=...)` has no `input_ids.device`.
  auto placed = [&](const Value &v) {
    OriginSet out;
    if (v.kind == Value::Kind::Tensor)
      for (const Origin *o : v.origins) {
        if (o->kind == OriginKind::Fresh)
          continue;
        if (o->maybe_not_tensor || o->defaults_to_none) {
          Origin &tensor_input = origins_.emplace_back(*o);
          tensor_input.maybe_not_tensor = false;
          tensor_input.may_be_none = true;
          o = &tensor_input;
        }
        out.push_back(o);
      }
    return out;
  };
  Site site;
  site.kind = SiteKind::Concat;
  site.expr = call;
  site.operation = frame_->file ? std::string(frame_->file->source->slice(call->operands[0]->range))
                                : std::string("generate");
  std::vector<SiteOperand> fresh;
  // Ids that may have been made on the CPU (`input_ids = torch.LongTensor(input_ids)` on one
  // path) are checked, not trusted as the device the rest is compared with: that is another
  // argument's (the encoder states), and on one GPU no hook moves the ids there.
  auto consider = [&](const Expr *expr, const Value &v) {
    if (site.operands.empty() && fresh_only(v).empty())
      if (OriginSet main = placed(v); !main.empty()) {
        SiteOperand anchor{expr, main};
        anchor.keeps_device = true;
        site.operands.push_back(anchor);
        return;
      }
    if (OriginSet cpu = fresh_only(v); !cpu.empty()) {
      fresh.push_back({expr, cpu});
      fresh.back().unproven_elsewhere =
          std::any_of(v.origins.begin(), v.origins.end(), [](const Origin *o) {
            return o->kind != OriginKind::Fresh && (o->maybe_not_tensor || o->defaults_to_none);
          });
    }
  };
  for (size_t i = 0; i < args.positional.size(); ++i)
    consider(call->operands[i + 1], args.positional[i]);
  // The ids are what generate concatenates and compares; attention masks and encoder states
  // go on to the model's forward, whose hooks move them. A `**kwargs` dict may hold the ids.
  for (size_t k = 0; k < args.keywords.size(); ++k) {
    std::string_view name = call->keywords[k].name;
    const Value &v = args.keywords[k].second;
    if (name.empty()) {
      const Expr *dict = call->keywords[k].value;
      if (site.operands.empty() || dict->kind != ExprKind::Name)
        continue;
      for (std::string_view ids : {"inputs", "input_ids", "decoder_input_ids"}) {
        auto stored = frame_->env.find(keyword_entry(dict->text, ids));
        if (stored == frame_->env.end())
          continue;
        if (OriginSet cpu = fresh_only(stored->second); !cpu.empty())
          fresh.push_back({dict, cpu});
      }
    } else if (name == "inputs" || name == "input_ids" || name == "decoder_input_ids") {
      consider(call->keywords[k].value, v);
    } else if (site.operands.empty() && !placed(v).empty()) {
      consider(call->keywords[k].value, v); // the main input, by another name (inputs_embeds)
    }
  }
  if (site.operands.empty() || fresh.empty())
    return result ? *result : first_tensor(args);
  // An argument that may be None (`attention_mask=None`) is a poor anchor when another one is
  // surely there (`encoder_hidden_states=image_embeds`).
  auto may_be_none = [](const OriginSet &origins) {
    return std::any_of(origins.begin(), origins.end(),
                       [](const Origin *o) { return o->may_be_none; });
  };
  if (may_be_none(site.operands[0].origins))
    for (size_t k = 0; k < args.keywords.size() && k < call->keywords.size(); ++k) {
      const Value &v = args.keywords[k].second;
      OriginSet main = placed(v);
      if (!main.empty() && !may_be_none(main) && fresh_only(v).empty()) {
        site.operands[0].expr = call->keywords[k].value;
        site.operands[0].origins = main;
        break;
      }
    }
  site.operands.insert(site.operands.end(), fresh.begin(), fresh.end());
  emit(site);
  return result ? *result : first_tensor(args);
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

Value Interpreter::eval_call(const Expr *call) {
  const Expr *callee = call->operands[0];
  std::string_view leaf = call->text;
  // super().method(...): the method of the next package base that defines it, on this self.
  if (callee->kind == ExprKind::Attribute && frame_->unit && frame_->function &&
      callee->operands[0]->kind == ExprKind::Call &&
      is_name(callee->operands[0]->operands[0], "super")) {
    if (const FunctionDef *m = base_method(frame_->unit, frame_->function, leaf))
      return call_function(m, call, eval_args(call), true, frame_->unit);
    if (leaf == "generate")
      return generate_call(call, eval_args(call), std::nullopt);
  }
  // self.method(...) / self.child(...)
  if (callee->kind == ExprKind::Attribute && is_name(callee->operands[0], "self") && frame_->unit) {
    const ModuleClass *unit = frame_->unit;
    if (!unit->find_child(leaf) && !frame_->env.count(self_key(callee))) {
      Args args = eval_args(call);
      if (const FunctionDef *m = unit->find_method(leaf))
        return call_function(m, call, args, true, unit);
      if (leaf == "generate")
        return generate_call(call, args, std::nullopt);
      if (leaf == "_gradient_checkpointing_func")
        if (std::optional<Value> out = call_handed_module(call, args))
          return *out;
      // A buffer registered while running (`self.register_buffer("inv_freq", inv_freq)`) is
      // that value from now on: dispatch moved the one it replaced, not this one.
      if ((leaf == "register_buffer" || leaf == "register_parameter") &&
          call->operands.size() > 2 && call->operands[1]->kind == ExprKind::String &&
          args.positional.size() > 1) {
        frame_->env[intern("self." + std::string(call->operands[1]->text))] = args.positional[1];
        return Value::neutral();
      }
      if (leaf == "get_input_embeddings" || leaf == "get_output_embeddings")
        return module_value(leaf, nullptr);
      // A module the parent passed to the constructor and called here (SAM's shared positional
      // embedding): its output is that module's, not a pass-through of the argument.
      if (handed_to_constructor(*unit, leaf))
        return module_call(module_value(leaf, nullptr), call, args);
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
      // `cls(w_bit, group_size, ...)` in a classmethod builds a module: nothing runs forward.
      if (v.kind == Value::Kind::Self && frame_->function && frame_->function->is_classmethod &&
          !frame_->function->parameters.empty() && frame_->function->parameters[0].name == name) {
        eval_args(call);
        return Value::neutral();
      }
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
      // `sum([emb(x) for emb in self.embed_tokens]) + h` adds up the elements: a tensor, not
      // the list. Not with a container to start from (`sum(caches, ())` concatenates).
      if (name == "sum" && args.positional[0].kind == Value::Kind::Tuple &&
          (args.positional.size() < 2 || args.positional[1].kind != Value::Kind::Tuple))
        return as_tensor(args.positional[0]);
      return args.positional[0];
    }
    // `IndexMap(indices, num_segments)`: an instance of a plain class of the package is an
    // object holding tensors, not a tensor: its methods (`index.batch_shape()`) are its own.
    if (const ModuleClass *cls = pkg_.find_class(name, frame_->file);
        cls && !cls->is_module && !is_local) {
      Args args = eval_args(call);
      Value object;
      object.kind = Value::Kind::Tuple;
      for (const Value &v : args.positional)
        add_origins(object.origins, origins_of(v));
      for (const auto &kv : args.keywords)
        add_origins(object.origins, origins_of(kv.second));
      return object;
    }
    if (name == "zip" || name == "enumerate") {
      eval_args(call);
      return Value::neutral();
    }
    if (torch_catalog::is_non_tensor_builtin(name)) {
      eval_args(call);
      return Value::neutral();
    }
    if (torch_catalog::is_loss_class(name)) {
      eval_args(call);
      Value v;
      v.kind = Value::Kind::LossFunction;
      return v;
    }
  }
  std::string dotted = dotted_name(callee);
  if (callee->kind == ExprKind::Attribute) {
    if (starts_with(dotted, "torch.") || starts_with(dotted, "F.") || starts_with(dotted, "nn.") ||
        starts_with(dotted, "functional."))
      return torch_call(call, leaf, dotted);
    // `self.mlp.forward(x)` with `self.mlp` a module the constructor was handed: that module's
    // output, as `self.mlp(x)` is.
    if ((leaf == "forward" || leaf == "__call__") && frame_->unit &&
        callee->operands[0]->kind == ExprKind::Attribute &&
        is_name(callee->operands[0]->operands[0], "self") &&
        !frame_->unit->find_child(callee->operands[0]->text) &&
        !frame_->env.count(self_key(callee->operands[0])) &&
        handed_to_constructor(*frame_->unit, callee->operands[0]->text))
      return module_call(module_value(callee->operands[0]->text, nullptr), call, eval_args(call));
    Value receiver = eval(callee->operands[0]);
    if (receiver.kind == Value::Kind::Neutral && (leaf == "to" || leaf == "cuda"))
      return tensor_method(call, leaf, receiver); // model.to("cuda:0"): a placed object
    switch (receiver.kind) {
    case Value::Kind::Tensor:
      // LibTorch code calls a model (or `forward`) directly: its methods are tensor methods.
      if (frame_->script && has_literal(receiver) && leaf != "to" && leaf != "cuda" &&
          !(frame_->file && frame_->file->explicit_placement)) {
        Args args = eval_args(call);
        return script_model_call(call, callee->operands[0], receiver, args);
      }
      // `cache_params.update_conv_state(...)` of a transformers cache: it returns the state
      // the cache holds, where its builder allocated it.
      if (frame_->unit && held_state_methods_.count(leaf) &&
          is_argument_object(callee->operands[0], receiver)) {
        eval_args(call);
        return tensor(make_origin(
            OriginKind::HeldState,
            intern(std::string(callee->operands[0]->text) + "." + std::string(leaf) + "(...)"),
            call->range));
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
      // A method other than `forward` called directly on a submodule: no hook runs, so its
      // result is no output of the submodule.
      const bool direct_method =
          receiver.kind == Value::Kind::Module && leaf != "forward" && leaf != "__call__" &&
          !(receiver.module_class && receiver.module_class->find_child(leaf));
      if (direct_method && receiver.module_class)
        if (const FunctionDef *method = receiver.module_class->find_method(leaf))
          return submodule_method_call(receiver, method, call, eval_args(call));
      // A submodule of a class the package does not name (`AutoModel.from_config(...)`): the
      // package's one method of that name, when it has one, is the one that runs. One the
      // running class has too is a delegation (`get_input_embeddings`), not that method.
      if (direct_method && !receiver.module_class &&
          !(frame_->unit && frame_->unit->find_method(leaf))) {
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
        if (method && !ambiguous) {
          Value known = receiver;
          known.module_class = owner;
          return submodule_method_call(known, method, call, eval_args(call));
        }
      }
      Value target = eval_attribute(callee);
      if (leaf == "generate" && receiver.kind == Value::Kind::Module &&
          !(receiver.module_class && receiver.module_class->find_method(leaf))) {
        Args args = eval_args(call);
        Value result = generate_call(call, args, target);
        bool module = target.kind == Value::Kind::Module || target.kind == Value::Kind::ModuleItem;
        return module ? module_call(target, call, args) : result;
      }
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
          OriginSet appended = origins_of(added);
          // Inside a loop, a ModuleList output of a loop that has already finished (`anchors`
          // made on `source_flatten.device` at every level) is one value at every append: the
          // elements do not differ by it. What a loop variable takes from a list of such
          // outputs (`for source in sources`) differs per pass.
          auto per_pass = [this](const Origin *o) {
            for (const OriginSet &element : loop_elements_)
              for (const Origin *e : element)
                if (same_origin(e, o))
                  return true;
            return false;
          };
          for (const Origin *&o : appended)
            if (o->kind == OriginKind::LayerIteration && !o->settled && o->loop &&
                !loops_.empty() &&
                std::find(loops_.begin(), loops_.end(), o->loop) == loops_.end() && !per_pass(o)) {
              Origin &copy = origins_.emplace_back(*o);
              copy.settled = true;
              o = &copy;
            }
          add_origins(updated.origins, appended);
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
    if (leaf == "checkpoint" || leaf == "_gradient_checkpointing_func")
      if (std::optional<Value> out = call_handed_module(call, args))
        return *out;
    if (torch_catalog::is_loss_class(leaf)) {
      Value v;
      v.kind = Value::Kind::LossFunction;
      return v;
    }
    return first_tensor(args);
  }
  Value target = eval(callee);
  Args args = eval_args(call);
  // `self.bbox_embed[idx](h)` where `__init__` left `self.bbox_embed = None` for the parent to
  // set (`self.model.decoder.bbox_embed = self.bbox_embed`): an element of a module list the
  // class does not declare, not a pass-through of `h`.
  if (callee->kind == ExprKind::Subscript && target.kind == Value::Kind::Neutral && frame_->unit &&
      !frame_->script) {
    const Expr *base = callee->operands[0];
    if (base->kind == ExprKind::Attribute && is_name(base->operands[0], "self") &&
        !frame_->env.count(self_key(base)) && !frame_->unit->find_child(base->text) &&
        !frame_->unit->find_parameter(base->text) && !frame_->unit->find_method(base->text)) {
      Value item;
      item.kind = Value::Kind::ModuleItem;
      item.path = base->text;
      item.picked_in_loop = picking_loop();
      return module_call(item, call, args);
    }
  }
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
  // `apply_chunking_to_forward(self.feed_forward_chunk, size, dim, x)`: a helper handed one of
  // this object's methods calls it on its trailing arguments, so the result is the method's
  // (`self.output`'s), not a pass-through of `x`.
  if (const FunctionDef *method = handed_method(call, frame_->unit)) {
    size_t wanted = 0;
    for (size_t i = 1; i < method->parameters.size(); ++i)
      if (!method->parameters[i].variadic && !method->parameters[i].default_value)
        ++wanted;
    if (wanted > 0 && wanted < args.positional.size()) {
      Args trailing;
      trailing.positional.assign(args.positional.end() - static_cast<std::ptrdiff_t>(wanted),
                                 args.positional.end());
      return call_function(method, call, trailing, true, frame_->unit);
    }
  }
  // `make_masks(structure)`: a function the analysis cannot see may fill a dict or list it is
  // given, with tensors made anywhere: what the container holds afterwards is unknown.
  if (callee->kind == ExprKind::Name)
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
  // `selective_state_update(state, x, ...)` from mamba-ssm, `flash_attn_func(q, k, v)`: a
  // compiled kernel of another package wants every tensor it is handed on one device.
  if (callee->kind == ExprKind::Name && !frame_->env.count(callee->text) && frame_->file &&
      imports_kernel(*frame_->file, callee)) {
    Site site;
    site.kind = SiteKind::Matmul;
    site.expr = call;
    site.operation = std::string(callee->text) + "(...)";
    site.external_kernel = true;
    auto add = [&site](const Expr *expr, const Value &v) {
      // `rearrange(x, "b l d -> b d l", l=seqlen)`: an unannotated argument may be a number.
      if (v.kind != Value::Kind::Tensor || !v.has_origins() ||
          std::all_of(v.origins.begin(), v.origins.end(),
                      [](const Origin *o) { return o->maybe_not_tensor; }))
        return;
      SiteOperand operand{expr, v.origins};
      operand.may_update_in_place =
          std::any_of(v.origins.begin(), v.origins.end(),
                      [](const Origin *o) { return o->kind == OriginKind::HeldState; });
      site.operands.push_back(operand);
    };
    for (size_t i = 0; i < args.positional.size(); ++i)
      add(call->operands[i + 1], args.positional[i]);
    for (size_t k = 0; k < call->keywords.size(); ++k)
      add(call->keywords[k].value, args.keywords[k].second);
    const OriginSet *reported = site.operands.size() > 1 ? emit(site) : nullptr;
    return anchored_result(reported, first_tensor(args));
  }
  return first_tensor(args);
}

} // namespace devlint
