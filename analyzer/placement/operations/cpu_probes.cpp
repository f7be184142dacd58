// CPU probes: on one GPU no hook moves a module's inputs, so a tensor made on the CPU and handed
// to a submodule (or returned by `prepare_inputs_for_generation` to the model's own forward) is
// followed into it; where it meets the model's tensors, the call is the site.
#include "placement/interpreter.h"

#include <algorithm>
#include <string>
#include <vector>

#include "placement/operations/call_shapes.h"

namespace devlint {

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

} // namespace devlint
