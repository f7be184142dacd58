// Devices chosen at run time where code places tensors explicitly (LibTorch, docs/
// CPP_DEVICE_MODEL.md section 1; Python script code, docs/DEVICE_MODEL.md section 2b):
// `torch::Device device(torch::cuda::is_available() ? torch::kCUDA : torch::kCPU)`, `device =
// "cuda" if torch.cuda.is_available() else "cpu"`, a `torch::Device` parameter, a helper returning
// `Device(kCUDA, i)` on one path and `kCPU` on another. Such a device is a device even when
// unknown: what is moved to it sits with what else is moved to the same value, and apart from the
// CPU.
#include "placement/interpreter.h"

#include "model/text.h"

namespace devlint {

bool Interpreter::is_device_value(const Value &v) {
  return (v.kind == Value::Kind::Str && is_device_literal(v.text)) || is_run_time_device(v);
}

Value Interpreter::run_time_device(std::string_view label, std::string_view key,
                                   SourceRange range) {
  const Origin *o = make_origin(OriginKind::RunTimeDevice, label, range);
  const_cast<Origin *>(o)->device_key = key;
  Value v;
  v.kind = Value::Kind::Device;
  v.origins.push_back(o);
  return v;
}

std::optional<Value> Interpreter::join_devices(const Value &a, const Value &b, std::string_view key,
                                               SourceRange range) {
  if (!places_explicitly() || !is_device_value(a) || !is_device_value(b))
    return std::nullopt;
  if (a.kind == Value::Kind::Str && b.kind == Value::Kind::Str && a.text == b.text)
    return a;
  if (is_run_time_device(a) && is_run_time_device(b) &&
      a.origins[0]->device_key == b.origins[0]->device_key)
    return a;
  return run_time_device(key, key, range);
}

Value Interpreter::named_device(const Value &v, std::string_view name, SourceRange range) {
  if (!places_explicitly() || !is_run_time_device(v) || v.origins[0]->label == name)
    return v;
  Origin &named = origins_.emplace_back(*v.origins[0]);
  named.label = name;
  named.range = range;
  named.function = frame_->function;
  named.unit = frame_->unit;
  named.file = frame_->file;
  Value out = v;
  out.origins = {&named};
  return out;
}

Value Interpreter::device_construction(const Expr *call) {
  Value first = eval(call->operands[1]);
  for (size_t i = 2; i < call->operands.size(); ++i)
    eval(call->operands[i]);
  if (first.kind == Value::Kind::Str && call->operands.size() == 2)
    return first;
  // Python's `torch.device("cuda", 1)`: a literal device, "cuda:1".
  if (python_script() && first.kind == Value::Kind::Str && call->operands.size() == 3 &&
      call->operands[2]->kind == ExprKind::Number && is_device_literal(first.text)) {
    first.text = intern(std::string(first.text) + ":" +
                        std::string(frame_->file->source->slice(call->operands[2]->range)));
    return first;
  }
  if (!places_explicitly())
    return first.kind == Value::Kind::Str ? first : Value::neutral();
  if (is_run_time_device(first))
    return first;
  // `torch::Device(torch::kCUDA, i)`: a GPU whose index is known only at run time.
  std::string_view text = frame_->file->source->slice(call->range);
  return run_time_device(text, text, call->range);
}

void Interpreter::rename_devices_for_parameters(const FunctionDef *fn, size_t first, Args &args) {
  if (!places_explicitly())
    return;
  std::vector<std::pair<std::string_view, std::string_view>> renamed; // key -> parameter
  for (size_t i = 0; i < args.positional.size() && first + i < fn->parameters.size(); ++i) {
    const Parameter &p = fn->parameters[first + i];
    if (!p.variadic && is_run_time_device(args.positional[i]))
      renamed.emplace_back(args.positional[i].origins[0]->device_key, p.name);
  }
  if (renamed.empty())
    return;
  for (Value &v : args.positional)
    for (const Origin *&o : v.origins)
      for (const auto &[key, name] : renamed)
        if (o->kind == OriginKind::RunTimeDevice && o->device_key == key) {
          Origin &copy = origins_.emplace_back(*o);
          copy.label = name;
          if (!copy.moved_to.empty())
            copy.moved_to = name;
          copy.function = fn;
          o = &copy;
          break;
        }
}

Value Interpreter::device_returned(Value returned, const Expr *call) {
  if (!places_explicitly() || !is_run_time_device(returned) ||
      returned.origins[0]->function == frame_->function)
    return returned;
  // Chosen inside the helper: the call's text names it for its caller (`try_gpu(0)`), and two
  // calls written alike give the same device.
  std::string_view text = frame_->file->source->slice(call->range);
  if (returned.origins[0]->label != returned.origins[0]->device_key)
    return returned; // a device the helper was handed or holds by name
  return run_time_device(text, text, call->range);
}

} // namespace devlint
