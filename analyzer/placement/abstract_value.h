// The abstract value the placement interpreter computes for every expression: what kind of
// thing it is (tensor, device, module, container...) and, for tensors, the set of origins it may
// come from (DEVICE_MODEL.md section 3). Values meet at control-flow joins.
#pragma once

#include <memory>
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
  const ModuleClass *module_class = nullptr;    // Module: class of path when known
  const ChildDecl *child = nullptr;             // Module: declaration of the last segment
  std::string_view text;                        // Str

  bool has_origins() const { return !origins.empty(); }
  static Value neutral() { return {}; }
};

using Env = std::unordered_map<std::string_view, Value>;

// Two origins name the same place (fresh tensors never do: each may be made anywhere).
bool same_origin(const Origin *a, const Origin *b);
// Adds the origins of `from` not yet in `into`; a value keeps at most `max_origins`.
void add_origins(OriginSet &into, const OriginSet &from, size_t max_origins);
// The value at a control-flow join of two paths.
Value join(const Value &a, const Value &b, size_t max_origins);
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
// Placed on a literal device (`.to("cuda:1")`, `.cuda()`).
bool has_literal(const Value &v);

} // namespace devlint
