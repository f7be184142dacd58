// Tensor methods: `.to()`/`.cuda()`/`.cpu()` (moves), `new_*` and `*_as` (where the receiver is),
// indexing, matmul and elementwise methods (sites), and methods that return no tensor.
#include "placement/interpreter.h"

#include <algorithm>
#include <string>
#include <unordered_set>

#include "model/text.h"
#include "model/torch_catalog.h"
#include "placement/operations/call_shapes.h"

namespace devlint {

namespace {

// Methods whose result has the receiver's rank: casts, copies and elementwise operations. Any
// other may reshape a 1-D tensor (vectors.cpp).
bool keeps_rank(std::string_view method) {
  static const std::unordered_set<std::string_view> names = {
      "to",         "type",   "type_as", "float",       "double",  "half",
      "bfloat16",   "long",   "int",     "bool",        "clone",   "detach",
      "contiguous", "cpu",    "flip",    "cumsum",      "cumprod", "repeat_interleave",
      "abs",        "neg",    "exp",     "log",         "sqrt",    "round",
      "clamp",      "clamp_", "pow",     "masked_fill", "fill_",   "zero_",
      "add_",       "sub_",   "mul_",    "div_"};
  return names.count(method) > 0 || torch_catalog::is_elementwise_function(method);
}

// Whether a call named `cuda` has the arguments torch's `Tensor.cuda` and `Module.cuda` take.
bool torch_cuda_signature(const Expr *call) {
  size_t positional = call->operands.size() - 1;
  for (const Keyword &k : call->keywords)
    if (k.name != "device" && k.name != "non_blocking" && k.name != "memory_format")
      return false;
  return positional <= 2;
}

// The device a `.cuda(...)` call names, positional or keyword; null for `.cuda()`.
const Expr *cuda_device_argument(const Expr *call) {
  if (const Keyword *k = call->keyword("device"))
    return k->value;
  return call->operands.size() > 1 ? call->operands[1] : nullptr;
}

} // namespace

Value Interpreter::tensor_method(const Expr *call, std::string_view method, const Value &receiver) {
  note_tensor(receiver);
  Args args = eval_args(call);
  // torch's `Tensor.cuda(device=None, non_blocking=False, memory_format=...)` (and
  // `Module.cuda(device=None)`): a call named `cuda` with other arguments is another library's
  // (hqq's `Quantizer.cuda(W_q, meta=meta, device=d)`), and says nothing of torch's devices.
  if (method == "cuda" && !torch_cuda_signature(call))
    return Value::neutral();
  // `.cuda(d)`, `.cuda(device=d)`: a move to `d`, as `.to(d)`; only a literal GPU number (or no
  // device) names a device in the code.
  const Expr *cuda_device = method == "cuda" ? cuda_device_argument(call) : nullptr;
  const bool cuda_moves_to_value = cuda_device && cuda_device->kind != ExprKind::Number &&
                                   cuda_device->kind != ExprKind::NoneLiteral;
  // `a.type_as(b)` is `a.type(b.type())`: b's type string (`torch.cuda.FloatTensor`) says CUDA
  // but names no GPU, so a tensor on a GPU keeps its GPU and one on the CPU goes to the current
  // device (cuda:0 unless set); it is no move to b's device. A `b` that may be on the CPU may
  // keep `a` there or bring it there: `a` is then taken to follow `b`, as before.
  auto on_cpu = [](const Origin *o) {
    return made_on_cpu(o) || o->kind == OriginKind::PlainTensor;
  };
  if (method == "type_as" && args.positional.size() == 1 && args.keywords.empty() &&
      args.positional[0].kind == Value::Kind::Tensor && args.positional[0].has_origins() &&
      std::none_of(args.positional[0].origins.begin(), args.positional[0].origins.end(), on_cpu) &&
      receiver.kind == Value::Kind::Tensor && receiver.has_origins()) {
    Value cast = receiver;
    for (const Origin *&o : cast.origins)
      if (on_cpu(o)) {
        Origin *current =
            const_cast<Origin *>(make_origin(OriginKind::LiteralDevice, "cuda", call->range));
        current->set(OriginFact::CastToCuda);
        o = current;
      } else if (o->kind == OriginKind::Parameter && !o->has(OriginFact::CastToCuda)) {
        // A buffer the loader may have left on the CPU goes to the current device too.
        Origin &copy = origins_.emplace_back(*o);
        copy.set(OriginFact::CastToCuda);
        o = &copy;
      }
    return cast;
  }
  if (method == "to" || method == "type_as" || method == "type" || cuda_moves_to_value) {
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
    std::optional<Value> script_device =
        device_value ? unknown_script_device(device_expr, *device_value) : std::nullopt;
    if (script_device)
      device_value = &*script_device;
    if (device_value && (device_value->kind == Value::Kind::Str || device_value->has_origins())) {
      Value d = device_argument(device_expr, *device_value, true);
      if (device_value->kind != Value::Kind::Str)
        d = placed_by(d, device_expr, call, false);
      if (d.has_origins())
        return d;
    }
    // After `parallelize()`, `hidden_states.to("cuda:" + str(k + 1))` where a block is the last
    // on its GPU: the value is now on the next GPU, a device the code names but the analysis
    // cannot number.
    if (hand_parallel_run_ && device_expr && builds_cuda_device_name(device_expr))
      return tensor(make_origin(OriginKind::LiteralDevice,
                                frame_->file->source->slice(device_expr->range), call->range));
    // `.to(x.device)` with an `x` the analysis cannot place: the value now travels with `x`,
    // wherever that is, so it meets nothing on another device that `x` would not.
    if (device_value && !device_value->has_origins() && names_device(device_expr))
      return tensor(make_origin(OriginKind::Skip, "moved", call->range));
    return receiver;
  }
  if (method == "cuda") {
    std::string device = "cuda";
    if (cuda_device && cuda_device->kind == ExprKind::Number)
      device = "cuda:" + std::string(frame_->file->source->slice(cuda_device->range));
    hardcoded(call, device);
    return tensor(make_origin(OriginKind::LiteralDevice, intern(device), call->range));
  }
  if (method == "cpu")
    return tensor(make_origin(OriginKind::Fresh, "cpu", call->range));
  // `Normal(0, 1).icdf(x)`: a distribution of Python numbers holds 0-dim CPU parameters, which
  // mix with `x` on any device; the result is where `x` is. Sampling makes new CPU values.
  if ((method == "icdf" || method == "cdf" || method == "log_prob") && !args.positional.empty() &&
      !receiver.origins.empty() &&
      std::all_of(receiver.origins.begin(), receiver.origins.end(),
                  [](const Origin *o) { return o->has(OriginFact::Distribution); }))
    return args.positional[0];
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

// `x.view(...)`, `x.to(y.device)`, `cache_params.update_conv_state(...)`: a method called on a
// value that holds tensors.
Value Interpreter::tensor_receiver_call(const Expr *call, const Value &receiver) {
  const Expr *object = call->operands[0]->operands[0];
  std::string_view leaf = call->text;
  // LibTorch code calls a model (or `forward`) directly: its methods are tensor methods.
  if (frame_->script && has_literal(receiver) && leaf != "to" && leaf != "cuda" &&
      !(frame_->file && frame_->file->explicit_placement)) {
    Args args = eval_args(call);
    // `model = model.to(device).eval()`: these return the module itself, the tensor's copy.
    if (leaf == "eval" || leaf == "train" || leaf == "half" || leaf == "float" ||
        leaf == "bfloat16" || leaf == "double" || leaf == "requires_grad_")
      return receiver;
    return script_model_call(call, object, receiver, args);
  }
  // `cache_params.update_conv_state(...)` of a transformers cache: it returns the state
  // the cache holds, where its builder allocated it.
  if (frame_->unit && held_state_methods_.count(leaf) && is_argument_object(object, receiver)) {
    eval_args(call);
    return tensor(make_origin(OriginKind::HeldState,
                              intern(std::string(object->text) + "." + std::string(leaf) + "(...)"),
                              call->range));
  }
  Value out = tensor_method(call, leaf, receiver);
  return keeps_rank(leaf) ? out : maybe_reshaped(out, call);
}

} // namespace devlint
