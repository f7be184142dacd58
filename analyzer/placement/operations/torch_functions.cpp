// PyTorch's functions (`torch.*`, `F.*`, `nn.functional.*`): constructors and sampling (fresh CPU
// tensors unless given a device), joining, elementwise, matmul and indexing operations (sites),
// losses, weighted layers as functions, reductions, and what returns no tensor.
// The lists of names live in model/torch_catalog.cpp.
#include "placement/interpreter.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <string>

#include "model/text.h"
#include "model/torch_catalog.h"
#include "placement/operations/call_shapes.h"

namespace devlint {

// The same ModuleList output from this pass or from an earlier one.
const Origin *Interpreter::iteration_version(const Origin *o, bool earlier) {
  if (o->has(OriginFact::EarlierIteration) == earlier)
    return o;
  Origin &copy = origins_.emplace_back(*o);
  copy.set(OriginFact::EarlierIteration, earlier);
  return &copy;
}

bool Interpreter::narrowed_to_python_sequence(const Expr *e) const {
  if (!e || e->kind != ExprKind::Name)
    return false;
  auto is_sequence_type = [](const Expr *t) { return is_name(t, "list") || is_name(t, "tuple"); };
  // `isinstance(x, list)`, `isinstance(x, (list, tuple))`, also as one operand of an `and`.
  std::function<bool(const Expr *)> proves = [&](const Expr *c) {
    if (!c)
      return false;
    if (c->kind == ExprKind::BoolOp && c->text == "and")
      return std::any_of(c->operands.begin(), c->operands.end(), proves);
    if (c->kind != ExprKind::Call || c->operands.size() != 3 ||
        !is_name(c->operands[0], "isinstance") || !is_name(c->operands[1], e->text))
      return false;
    const Expr *types = c->operands[2];
    if (types->kind == ExprKind::Tuple)
      return !types->operands.empty() &&
             std::all_of(types->operands.begin(), types->operands.end(), is_sequence_type);
    return is_sequence_type(types);
  };
  return std::any_of(frame_->assumed.begin(), frame_->assumed.end(),
                     [&](const auto &branch) { return branch.second && proves(branch.first); });
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
    if (weight)
      operand.role = OperandRole::Anchor;
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

// `torch.cat([a, b])`, `torch.stack(list)`: every element must sit on one device. A list built
// elsewhere is compared element by element when its elements are known, else as the outputs of
// one ModuleList element on this pass and on an earlier one.
Value Interpreter::concat_site(const Expr *call, const Args &args, const std::string &dotted) {
  Site site;
  site.kind = SiteKind::Concat;
  site.expr = call;
  site.operation = dotted;
  const Expr *list = call->operands.size() > 1 ? call->operands[1] : nullptr;
  const Value *list_value = args.positional.empty() ? nullptr : &args.positional[0];
  if (const Keyword *k = call->keyword("tensors"); !list && k) { // torch.cat(tensors=[a, b])
    list = k->value;
    list_value = args.keyword("tensors");
  }
  if (list && list_value && list->kind == ExprKind::Tuple && list_value->elements) {
    for (size_t i = 0; i < list->operands.size() && i < list_value->elements->size(); ++i) {
      const Value &v = (*list_value->elements)[i];
      if (v.has_origins() && v.kind != Value::Kind::Tuple) {
        site.operands.push_back({list->operands[i], v.origins});
        site.operands.back().branches = v.paths;
      } else if (v.kind == Value::Kind::Tuple)
        site.operands.push_back({list->operands[i], origins_of(v)});
    }
  } else if (list && list_value && list_value->elements && !list_value->elements->empty()) {
    // A list of known elements built elsewhere: each element is one operand.
    for (const Value &v : *list_value->elements)
      if (v.has_origins() || v.kind == Value::Kind::Tuple)
        site.operands.push_back({list, origins_of(v)});
  }
  // A list without known elements, or one whose elements one `.append` call added, one per pass
  // of a loop: the elements are built the same way, so origins that are alternatives of one path
  // (passed in or computed) sit together. Only elements made by different members of a
  // ModuleList may differ.
  if (list && list_value &&
      (!list_value->elements || (list_value->appended_by && list_value->elements->size() == 1 &&
                                 list_value->appended_by->front() != nullptr))) {
    site.operands.clear();
    for (const Origin *o : origins_of(*list_value))
      if (o->kind == OriginKind::LayerIteration && !o->has(OriginFact::Settled) &&
          !o->has(OriginFact::OnePassList) && !starts_with(o->label, "past")) {
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
  if (torch_catalog::is_concat_function(leaf))
    return concat_site(call, args, dotted);
  // `torch.split(x, sizes)`, `torch.chunk(x, n)`: pieces of the one tensor they take; the sizes
  // are Python numbers (or a list of them), never a tensor of the result.
  if ((leaf == "split" || leaf == "chunk" || leaf == "tensor_split" || leaf == "unbind" ||
       leaf == "split_with_sizes" || leaf == "narrow") &&
      !args.positional.empty() && args.positional[0].has_origins())
    return as_tensor(args.positional[0]);
  // `torch.autograd.grad(loss, latents)`: each gradient is on the device of its input, wherever
  // the loss was computed.
  if (dotted == "torch.autograd.grad") {
    const Value *inputs = args.positional.size() > 1 ? &args.positional[1] : args.keyword("inputs");
    return inputs ? as_tensor(*inputs) : Value::neutral();
  }
  // A torch.distributions distribution samples where its parameters are: one built from Python
  // numbers (`Gumbel(0, 1)`) samples on the CPU. Its `sample`/`rsample` give that value.
  if (torch_catalog::is_distribution_class(dotted)) {
    Value parameters = first_tensor(args);
    if (parameters.has_origins())
      return parameters;
    const Origin *made = make_origin(OriginKind::Fresh, intern(dotted), call->range);
    const_cast<Origin *>(made)->set(OriginFact::Distribution);
    return tensor(made);
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
      // torch.tensor(x.tolist()), torch.as_tensor(index.batch_shape()): new CPU data; so is
      // an argument the enclosing branch proved a Python list (`if isinstance(spout, list):`).
      if (args.positional[0].has_origins() && data->kind != ExprKind::Call &&
          !narrowed_to_python_sequence(data))
        return args.positional[0];
    }
    // torch.normal(mean, std) samples where mean is; torch.normal(0, 1, size) on the CPU.
    if (sampling) {
      Value source = first_tensor(args);
      if (source.has_origins())
        return source;
    }
    const Origin *made = make_origin(OriginKind::Fresh, intern(dotted), call->range);
    mark_vector(call, leaf, made);
    return tensor(made);
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
  // `nn.DataParallel(model)` in a script: a wrapper that moves the model's inputs for it.
  if (python_script())
    out.origins.erase(
        std::remove_if(out.origins.begin(), out.origins.end(),
                       [](const Origin *o) { return o->has(OriginFact::PlacedObject); }),
        out.origins.end());
  out.kind = out.origins.empty() ? Value::Kind::Neutral : Value::Kind::Tensor;
  if (python_script() && out.kind == Value::Kind::Neutral)
    out.made_by = frame_->file->source->slice(call->operands[0]->range);
  return out;
}

} // namespace devlint
