// CPU probes: on one GPU no hook moves a module's inputs, so a tensor made on the CPU and handed
// to a submodule (or returned by `prepare_inputs_for_generation` to the model's own forward) is
// followed into it; where it meets the model's tensors, the call is the site.
#include "placement/interpreter.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "placement/operations/call_shapes.h"

namespace devlint {

// Runs `forward` with its sites muted, following the origins of `probe` into it: whether one of
// them met the model's tensors there (note_probe_hit).
bool Interpreter::probe_forward(const FunctionDef *forward, const Expr *call, const Args &args,
                                const ModuleClass *cls, const OriginSet &probe) {
  cpu_probe_ = &probe;
  cpu_probe_hit_ = false;
  ++muted_sites_;
  call_function(forward, call, args, true, cls);
  --muted_sites_;
  cpu_probe_ = nullptr;
  return cpu_probe_hit_;
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
                          !o->has(OriginFact::MadeThere);
        unproven = unproven || (!made_on_cpu(o) && (o->has(OriginFact::MaybeNotTensor) ||
                                                    o->has(OriginFact::DefaultsToNone)));
      }
    if (!made_here.empty() && else_as_given) {
      add_origins(cpu, made_here);
      handed.push_back({e, made_here});
      if (unproven)
        handed.back().move_limit = MoveLimit::UnprovenElsewhere;
    } else if (!anchor_expr && v.kind == Value::Kind::Tensor && v.has_origins() &&
               std::none_of(v.origins.begin(), v.origins.end(), [](const Origin *o) {
                 return o->has(OriginFact::MaybeNotTensor) || o->has(OriginFact::DefaultsToNone) ||
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
  if (!probe_forward(forward, site_expr, args, cls, cpu))
    return;
  Site site;
  site.kind = SiteKind::Arithmetic;
  site.expr = site_expr;
  site.operation = std::move(operation);
  site.handed_use = cpu_probe_use_;
  SiteOperand anchor{anchor_expr, anchor_origins};
  anchor.role = OperandRole::Anchor;
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
  Site site = layer_input_site(callee, call, args.positional[0].origins);
  emit(site);
}

// `self.layer(x)`, a torch layer with weights, as a site: its weights against `input` (the
// origins of `x` that may sit elsewhere).
Site Interpreter::layer_input_site(const Value &callee, const Expr *call, OriginSet input) {
  const Expr *layer = call->operands[0];
  Site site;
  site.kind = SiteKind::Matmul;
  site.expr = call;
  site.operation = std::string(frame_->file->source->slice(layer->range)) + "(...)";
  const Origin *weight_origin = make_origin(
      OriginKind::Parameter, intern(std::string(callee.path) + ".weight"), layer->range);
  const_cast<Origin *>(weight_origin)->set(OriginFact::LayerWeights);
  SiteOperand weights{layer, {weight_origin}};
  weights.role = OperandRole::LayerWeights;
  site.operands.push_back(weights);
  site.operands.push_back({call->operands[1], std::move(input)});
  return site;
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
  // After `parallelize()` so does any layer with weights of another package (`Conv1D`).
  const ChildDecl *child = callee.child;
  if (is_torch_layer_with_weights(child) ||
      (hand_parallel_run_ && child && !child->resolved && child->has_parameters &&
       !child->is_container) ||
      (child && !child->resolved && child->is_container && child->has_parameters &&
       child->class_name == "Sequential"))
    note_probe_hit(call);
}

// After `parallelize()` a block of a module list runs on its own GPU with its arguments where
// the caller left them (hand_parallel_run_). Those that may sit apart from the block's input
// (its first argument, which the caller moves from block to block) are followed into the
// block's forward; where it uses one with its tensors, the argument is the site.
void Interpreter::check_unhooked_block_call(const Value &callee, const Expr *call,
                                            const Args &args) {
  if (!frame_->unit || !frame_->file || muted_sites_ != 1 ||
      callee.path.find('.') != std::string_view::npos)
    return;
  const ChildDecl *list = frame_->unit->find_child(callee.path);
  const ModuleClass *block = list && list->kind != ChildKind::Single ? list->resolved : nullptr;
  const FunctionDef *forward = block ? block->find_method("forward") : nullptr;
  const size_t written = call->operands.size() - 1;
  if (!forward || forward->parameters.size() < 2 || written < args.positional.size() ||
      written - args.positional.size() > 1)
    return;
  // `block(x, ...)`, or a checkpointing helper handed the block first: `f(block.__call__, x, ...)`.
  const size_t first = 1 + written - args.positional.size();
  // The block's input: its forward's first argument, given by position or by name.
  const std::string_view input_name = forward->parameters[1].name;
  const Expr *input_expr = nullptr;
  const Value *input_value = nullptr;
  std::vector<std::pair<const Expr *, const Value *>> handed;
  if (!args.positional.empty()) {
    input_expr = call->operands[first];
    input_value = &args.positional[0];
  }
  for (size_t i = 1; i < args.positional.size(); ++i)
    handed.emplace_back(call->operands[first + i], &args.positional[i]);
  for (size_t k = 0; k < args.keywords.size() && k < call->keywords.size(); ++k) {
    if (!input_expr && args.keywords[k].first == input_name) {
      input_expr = call->keywords[k].value;
      input_value = &args.keywords[k].second;
    } else {
      handed.emplace_back(call->keywords[k].value, &args.keywords[k].second);
    }
  }
  if (!input_value || input_value->kind != Value::Kind::Tensor || !input_value->has_origins())
    return;
  const OriginSet &input = input_value->origins;
  const std::string operation = call_spelling(call, call->operands[0]);
  SiteOperand anchor{input_expr, input};
  anchor.role = OperandRole::Anchor;
  auto moved_by_code = [](const Origin *o) {
    return !o->moved_to.empty() && !o->has(OriginFact::MadeThere);
  };
  // Where a block is the last on its GPU the caller moves the input on to the next one
  // (`hidden_states.to("cuda:" + str(k + 1))`: a path of the input that is only a device the
  // code names); what the previous block returned beside it (`position_bias =
  // layer_outputs[2]`) stays on that block's GPU.
  const bool input_moved_on =
      input_value->paths &&
      std::any_of(
          input_value->paths->begin(), input_value->paths->end(), [](const OriginSet &path) {
            return !path.empty() && std::all_of(path.begin(), path.end(), [](const Origin *o) {
              return o->kind == OriginKind::LiteralDevice;
            });
          });
  auto left_behind = [&](const Origin *o) {
    return input_moved_on && o->kind == OriginKind::LayerIteration && o->label == callee.path &&
           o->has(OriginFact::EarlierIteration) && o->moved_to.empty();
  };
  auto in_other_argument = [&](const Origin *o, const Value *mine) {
    return std::any_of(handed.begin(), handed.end(), [&](const auto &other) {
      return other.second != mine &&
             std::find(other.second->origins.begin(), other.second->origins.end(), o) !=
                 other.second->origins.end();
    });
  };
  // One argument at a time, each its own site (`attention_mask=attention_mask,` is where the
  // fix goes), found by what it alone holds (`cache_position` also went into the `causal_mask`
  // handed beside it).
  for (const auto &[expr, value] : handed) {
    // Moved on one of its paths (`if mask is not None: mask = mask.to(x.device)`): the caller
    // moves it where it is a tensor.
    if (value->kind != Value::Kind::Tensor ||
        std::any_of(value->origins.begin(), value->origins.end(), moved_by_code))
      continue;
    OriginSet probe;
    // An origin the input holds too is followed as a copy of its own, handed in this argument
    // alone: the block's uses of its input are not this argument's.
    Value followed = *value;
    for (const Origin *&o : followed.origins) {
      const bool in_input = std::find(input.begin(), input.end(), o) != input.end();
      // Each block's cache from the step before (`layer_past` taken beside the block) was made
      // by that block, on its device. A tensor made on another's device (`torch.arange(n,
      // device=x.device)`) is not followed: made from the caller's values, it shares their
      // paths into the block, where what uses which is not told apart.
      if ((!in_input || left_behind(o)) &&
          !(o->kind == OriginKind::LayerIteration && o->label != callee.path) &&
          o->moved_to.empty() && !in_other_argument(o, value)) {
        if (in_input) {
          Origin &apart = origins_.emplace_back(*o);
          apart.set(OriginFact::LeftBehind);
          o = &apart;
        }
        probe.push_back(o);
      }
    }
    if (probe.empty() || hand_parallel_probe_statements_ > kHandParallelProbeBudget)
      continue;
    Args probe_args = args;
    for (size_t k = 0; k < probe_args.positional.size(); ++k)
      if (&args.positional[k] == value)
        probe_args.positional[k] = followed;
    for (size_t k = 0; k < probe_args.keywords.size(); ++k)
      if (&args.keywords[k].second == value)
        probe_args.keywords[k].second = followed;
    const size_t entry_statements = statements_run_;
    statements_run_ = 0;
    // What the probe follows must outlive the joins of the block's code, where a value may hold
    // more origins than a value keeps (the first ones): a block's attention mixes many.
    const size_t kept_origins = limits_.max_origins;
    limits_.max_origins = 2 * kept_origins;
    const bool hit = probe_forward(forward, call, probe_args, block, probe);
    limits_.max_origins = kept_origins;
    hand_parallel_probe_statements_ += statements_run_;
    statements_run_ = entry_statements;
    if (!hit)
      continue;
    Site site;
    site.kind = SiteKind::Arithmetic;
    site.expr = expr;
    site.operation = operation;
    site.hand_parallel = true;
    site.handed_use = cpu_probe_use_;
    site.operands = {anchor, {expr, probe}};
    const int muted = muted_sites_;
    muted_sites_ = 0; // the site is this run's own: the rest of the run stays muted
    emit(site);
    muted_sites_ = muted;
  }
}

// After `parallelize()` the code places a head itself (`self.lm_head.to(first_device)`) and
// no hook moves its input: what another of the model's modules returned (the stack of blocks,
// on the last GPU) reaches it from wherever that ran.
void Interpreter::check_unhooked_layer_call(const Value &callee, const Expr *call,
                                            const Args &args) {
  const Expr *layer = call->operands[0];
  if (args.positional.empty() || call->operands.size() < 2 || !frame_->file ||
      layer->kind != ExprKind::Attribute || !callee.child || layer->text != callee.child->name ||
      callee.path.find('.') != std::string_view::npos || !is_torch_layer_with_weights(callee.child))
    return;
  const OriginSet &input = args.positional[0].origins;
  // Moved on one of its paths, or the output of this method's own blocks (`self.ln_f(x)` after
  // the loop: the last block's GPU is where `parallelize()` put the final norm).
  if (std::any_of(input.begin(), input.end(), [](const Origin *o) {
        return !o->moved_to.empty() || o->kind == OriginKind::LayerIteration;
      }))
    return;
  OriginSet from_other_modules;
  for (const Origin *o : input)
    if (o->kind == OriginKind::Child && o->label.substr(0, o->label.find('.')) != callee.path)
      from_other_modules.push_back(o);
  if (from_other_modules.empty())
    return;
  Site site = layer_input_site(callee, call, std::move(from_other_modules));
  site.hand_parallel = true;
  const int muted = muted_sites_;
  muted_sites_ = 0; // the site is this run's own: the rest of the run stays muted
  emit(site);
  muted_sites_ = muted;
}

} // namespace devlint
