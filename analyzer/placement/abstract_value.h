// The abstract value the placement interpreter computes for every expression: what kind of
// thing it is (tensor, device, module, container...) and, for tensors, the set of origins it may
// come from (docs/DEVICE_MODEL.md section 3). Values meet at control-flow joins.
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/module_model.h"
#include "placement/origin.h"

namespace devlint {

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
  const ModuleClass *module_class =
      nullptr; // Module: class of path; ModuleItem: the elements' class, when known
  const ChildDecl *child = nullptr; // Module: declaration of the last segment
  std::string_view text;            // Str
  // ModuleItem: the innermost loop running where the element was picked (`for layer in
  // self.layers`, `self.layers[i]` inside a loop, or in a helper a loop calls); null when picked
  // outside every loop (`prior = self.priors[level]`), so the same module on every later pass.
  const Stmt *picked_in_loop = nullptr;
  // One element taken out of a module's output (`a, b = self.attn(x)`, `self.attn(x)[0]`): a
  // tensor, whatever its name says, not the output tuple itself.
  bool element = false;
  // Tuple with known elements that `.append` grew: per element, the append call that added it
  // (one element per call, joined over the passes of a loop), null for those it was made with
  // (`embeds = [self.embed(ids)]`). Null when nothing was appended.
  std::shared_ptr<std::vector<const Expr *>> appended_by;
  // Tuple made by a literal (`packed = []`) while loops ran: the innermost one. A list made during
  // a pass of a layer loop holds what that pass appends, not what every pass does.
  const Stmt *made_in_loop = nullptr;
  // Neutral, in Python script code: the callee that returned this object the analysis cannot see
  // (`StableDiffusionPipeline.from_pretrained`), empty when unknown.
  std::string_view made_by;
  // A tensor joined where paths meet (`if input_ids is None: m = emb == k` / `else: m = ids ==
  // k`): the origins it holds on each path, when there are a few; null when one path or unknown.
  std::shared_ptr<const std::vector<OriginSet>> paths;
  // An object whose attributes the code assigned (`outputs.pooler_output = self.embed(ids)`,
  // then `return outputs`): each attribute's value, the latest first. Reading the attribute gives
  // that value, not the object's origins. Dropped where paths with different objects meet.
  std::shared_ptr<const std::vector<std::pair<std::string_view, Value>>> fields;

  bool has_origins() const { return !origins.empty(); }
  static Value neutral() { return {}; }
};

using Env = std::unordered_map<std::string_view, Value>;

// Two origins name the same place (fresh tensors never do: each may be made anywhere).
bool same_origin(const Origin *a, const Origin *b);
// Adds the origins of `from` not yet in `into`; a value keeps at most `max_origins`.
void add_origins(OriginSet &into, const OriginSet &from, size_t max_origins);
// The value at a control-flow join of two paths.
// `element` appended to `list` (with `elements` and `appended_by` of its own) by `call`: a new
// element, or joined into the one that call appended before (on an earlier pass of a loop).
void add_appended_element(Value &list, const Expr *call, const Value &element, size_t max_origins);
// Two paths of a list grown by `.append` (see Value::appended_by).
std::optional<Value> join_grown_lists(const Value &a, const Value &b, size_t max_origins);
Value join(const Value &a, const Value &b, size_t max_origins);
// What a function returns on two paths: tuples of different lengths (`return q, k, v` under
// `if v is not None:`, else `return q, k`) keep each position's values, since a caller
// unpacking them takes one length (another raises); otherwise `join`.
Value join_returned(const Value &a, const Value &b, size_t max_origins);
Env join_env(const Env &a, const Env &b, size_t max_origins);
// Union of the tensor origins in a value (tuples included).
OriginSet origins_of(const Value &v, size_t max_origins);
Value as_tensor(const Value &v, size_t max_origins);
// `x.device`: a device value with x's origins.
Value device_of(const Value &v);
// A reported site's result sits with its anchor (as it will once fixed).
Value anchored_result(const OriginSet *anchor, Value fallback);
// Used like a tensor: an argument that was only maybe a tensor is one.
void mark_tensor(const Value &v);
// An index that may be a Python int (a plain name holding an unannotated argument, a loop
// variable over one): an int index works with a tensor on any device.
bool maybe_number(const Expr *index, const Value &v);
// Placed on a literal device (`.to("cuda:1")`, `.cuda()`) or a device chosen at run time.
bool has_literal(const Value &v);
// A device chosen at run time (Origin::device_key says which), not a tensor's device.
bool is_run_time_device(const Value &v);

// A tensor this code made on the CPU: a constructor without `device=`, `.cpu()`.
bool made_on_cpu(const Origin *o);
// docs/DEVICE_MODEL.md section 3: a Python number mixes with anything. Beside a CPU tensor, a value
// that may be one (an unannotated argument, `torch.as_tensor` of one) is taken to be one: were it
// a tensor on a GPU, the operation would fail on the CPU tensor anyway, and that is checked where
// the CPU tensor meets the model's activations. So when an origin of some operand is a CPU
// tensor (`is_cpu`), the origins that may be numbers leave every operand. The one place this
// rule is decided: for a site's operands (mismatch.cpp, with the placement's notion of CPU) and
// for the result of an operation (the interpreter, with made_on_cpu).
template <typename IsCpu>
void drop_numbers_beside_cpu(std::vector<OriginSet> &operands, IsCpu is_cpu) {
  bool beside_cpu = false;
  for (const OriginSet &origins : operands)
    for (const Origin *o : origins)
      beside_cpu = beside_cpu || (!o->has(OriginFact::MaybeNotTensor) && is_cpu(o));
  if (!beside_cpu)
    return;
  for (OriginSet &origins : operands)
    origins.erase(
        std::remove_if(origins.begin(), origins.end(),
                       [](const Origin *o) { return o->has(OriginFact::MaybeNotTensor); }),
        origins.end());
}
inline void drop_numbers_beside_cpu(std::vector<OriginSet> &operands) {
  drop_numbers_beside_cpu(operands, made_on_cpu);
}

} // namespace devlint
