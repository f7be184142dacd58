// Device arguments: a literal device (`"cuda:1"`, reported as such in a module's method),
// another value's device (`device=x.device`, `.to(x.device)`: the value now travels with `x`).
#include "placement/interpreter.h"

#include <string>

#include "model/text.h"

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
    placed.set(OriginFact::MadeThere, made);
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

} // namespace devlint
