// Loss modules built in a method.
#include "placement/interpreter.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/torch_catalog.h"
#include "placement/abstract_value.h"

namespace devlint {

// `nn.CrossEntropyLoss()`, `CrossEntropyLoss()`: a loss module; calling it is a loss site
// (site_emission.cpp, `loss_site`).
// A loss class of the package keeps its class: its call is summarised from its `forward`.
std::optional<Value> Interpreter::loss_class_call(const Expr *call) {
  const Expr *callee = call->operands[0];
  if (callee->kind != ExprKind::Name || !torch_catalog::is_loss_class(callee->text))
    return std::nullopt;
  eval_args(call);
  Value loss = loss_function();
  if (const ModuleClass *cls = pkg_.find_class(callee->text, frame_->file))
    if (cls->find_method("forward"))
      loss.module_class = cls;
  return loss;
}

// Records which arguments of the summarised loss call meet in `site`, an operation of its
// `forward`: the first argument whose origins each of two operands holds, where the two hold
// none in common (`outputs.masked_select(labels != -100)`: the outputs and the labels).
void Interpreter::note_argument_meeting(const Site &site) {
  std::vector<std::optional<size_t>> argument_of(site.operands.size());
  std::vector<std::vector<size_t>> held(site.operands.size());
  for (size_t i = 0; i < site.operands.size(); ++i)
    for (size_t k = 0; k < argument_meetings_->arguments.size(); ++k) {
      const OriginSet &argument = argument_meetings_->arguments[k];
      if (std::any_of(site.operands[i].origins.begin(), site.operands[i].origins.end(),
                      [&](const Origin *o) {
                        return std::any_of(argument.begin(), argument.end(),
                                           [o](const Origin *a) { return same_origin(o, a); });
                      }))
        held[i].push_back(k);
    }
  auto share = [](const std::vector<size_t> &a, const std::vector<size_t> &b) {
    return std::any_of(a.begin(), a.end(),
                       [&](size_t k) { return std::find(b.begin(), b.end(), k) != b.end(); });
  };
  for (size_t i = 0; i < site.operands.size(); ++i)
    for (size_t j = i + 1; j < site.operands.size(); ++j) {
      if (held[i].empty() || held[j].empty())
        continue;
      argument_meetings_->combined = true;
      if (share(held[i], held[j]))
        continue;
      // The operand that keeps its device in the operation comes first.
      bool swap = site.operands[j].keeps_device() && !site.operands[i].keeps_device();
      std::pair<size_t, size_t> pair = swap ? std::pair{held[j].front(), held[i].front()}
                                            : std::pair{held[i].front(), held[j].front()};
      auto &pairs = argument_meetings_->pairs;
      if (std::find(pairs.begin(), pairs.end(), pair) == pairs.end())
        pairs.push_back(pair);
    }
}

// `criterion(mask, outputs, ..., labels)` with `criterion` a loss class of the package built in
// the method: no hook moves what it is handed, so it fails where its `forward` first combines
// two arguments on different devices. Each pair of arguments it combines, in the order it does,
// is a loss site of the call (the first that may differ is reported; the checker keeps one
// finding per call); a forward that combines no two of them is checked as a loss of its first
// two tensors.
Value Interpreter::package_loss_call(const Value &loss, const Expr *call, const Args &args,
                                     std::string name) {
  const FunctionDef *forward =
      loss.module_class ? loss.module_class->find_method("forward") : nullptr;
  if (!forward || argument_meetings_ || cpu_probe_)
    return loss_site(call, args, std::move(name));
  // The call's arguments in order, with the expressions that pass them.
  std::vector<std::pair<const Expr *, const Value *>> passed;
  for (size_t i = 0; i < args.positional.size() && i + 1 < call->operands.size(); ++i)
    passed.emplace_back(call->operands[i + 1], &args.positional[i]);
  for (size_t k = 0; k < args.keywords.size() && k < call->keywords.size(); ++k)
    passed.emplace_back(call->keywords[k].value, &args.keywords[k].second);
  ArgumentMeetings meetings;
  for (const auto &[expr, value] : passed)
    meetings.arguments.push_back(value->kind == Value::Kind::Tensor ? origins_of(*value)
                                                                    : OriginSet{});
  argument_meetings_ = &meetings;
  ++muted_sites_;
  call_function(forward, call, args, true, loss.module_class);
  --muted_sites_;
  argument_meetings_ = nullptr;
  // Arguments it combines only where they already hold the same origins (`labels.to(
  // outputs.device)` handed in) meet nowhere apart: no site.
  if (!meetings.combined)
    return loss_site(call, args, std::move(name));
  for (const Value &v : args.positional)
    note_tensor(v);
  for (const auto &kv : args.keywords)
    note_tensor(kv.second);
  for (const auto &[first, other] : meetings.pairs) {
    Site site;
    site.kind = SiteKind::Loss;
    site.expr = call;
    site.operation = name;
    site.operands.push_back({passed[first].first, passed[first].second->origins});
    SiteOperand target{passed[other].first, passed[other].second->origins};
    target.role = OperandRole::Target;
    site.operands.push_back(target);
    emit(site);
  }
  return first_tensor(args);
}

Value Interpreter::loss_function() {
  Value v;
  v.kind = Value::Kind::LossFunction;
  return v;
}

} // namespace devlint
