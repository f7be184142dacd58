// Text generation: `model.generate(...)`, `self.language_model.generate(...)`.
#include "placement/interpreter.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace devlint {

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
        if (o->kind == OriginKind::Fresh && !o->has(OriginFact::MaybeNotTensor))
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
        if (o->has(OriginFact::MaybeNotTensor) || o->has(OriginFact::DefaultsToNone)) {
          Origin &tensor_input = origins_.emplace_back(*o);
          tensor_input.set(OriginFact::MaybeNotTensor, false);
          tensor_input.set(OriginFact::MayBeNone);
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
        anchor.role = OperandRole::Anchor;
        site.operands.push_back(anchor);
        return;
      }
    if (OriginSet cpu = fresh_only(v); !cpu.empty()) {
      fresh.push_back({expr, cpu});
      if (std::any_of(v.origins.begin(), v.origins.end(), [](const Origin *o) {
            return o->kind != OriginKind::Fresh &&
                   (o->has(OriginFact::MaybeNotTensor) || o->has(OriginFact::DefaultsToNone));
          }))
        fresh.back().move_limit = MoveLimit::UnprovenElsewhere;
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
    return generated_ids(call, args, result);
  // An argument that may be None (`attention_mask=None`) is a poor anchor when another one is
  // surely there (`encoder_hidden_states=image_embeds`).
  auto may_be_none = [](const OriginSet &origins) {
    return std::any_of(origins.begin(), origins.end(),
                       [](const Origin *o) { return o->has(OriginFact::MayBeNone); });
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
  return generated_ids(call, args, result);
}

// What `generate` returns: GenerationMixin grows the ids it is handed, moving each step's logits
// to their device (`outputs.logits[:, -1, :].to(..., device=input_ids.device)`), so the
// sequences are where `input_ids` was, not on the module's last part nor where `inputs_embeds`
// was; without ids, `result` (or the main input, first tensor argument).
Value Interpreter::generated_ids(const Expr *call, const Args &args,
                                 const std::optional<Value> &result) {
  const Value *ids = args.positional.empty() ? nullptr : &args.positional[0];
  for (size_t k = 0; k < args.keywords.size() && k < call->keywords.size(); ++k)
    if (call->keywords[k].name == "input_ids" || call->keywords[k].name == "inputs")
      ids = &args.keywords[k].second;
  if (ids && ids->kind == Value::Kind::Tensor && ids->has_origins())
    return *ids;
  return result ? *result : first_tensor(args);
}

} // namespace devlint
