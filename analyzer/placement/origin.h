// Where a tensor came from, relative to the device map (docs/DEVICE_MODEL.md section 3).
#pragma once

#include <string_view>
#include <vector>

#include "diagnostics/origin_kind.h"
#include "model/module_model.h"
#include "model/syntax.h"

namespace devlint {

// What is known of an origin besides its kind and label; each fact says the kinds it is set on.
enum class OriginFact : uint32_t {
  EarlierIteration = 1u << 0, // LayerIteration: from a previous pass over the loop
  Collected = 1u << 1,        // LayerIteration: gathered by a comprehension, read after it ran
  Settled = 1u << 2, // LayerIteration: appended to a list by a later loop, the same every pass
  MaybeNotTensor = 1u << 3, // Input: an unannotated argument: may be a Python number or object
  DefaultsToNone = 1u << 4, // Input: an argument whose default is None
  MayBeNone = 1u << 5,      // Input taken as a tensor that may still be None: no fix may read
                            // its `.device`
  InHelper = 1u << 6,       // made inside an inlined helper, on one of its paths
  LayerCaches = 1u << 7,    // Skip: the caches of every layer, one per layer's device
  MadeThere = 1u << 8,      // with moved_to: made there (`torch.full(..., device=x.device)`)
  LayerWeights = 1u << 9,   // Parameter: the weights of a torch layer the code calls
  PlacedObject = 1u << 10,  // LiteralDevice/RunTimeDevice: an object holding no tensor the
                            // analysis knows (a model) moved there: calling it runs a model
  Vector = 1u << 11,        // Fresh: made 1-D on the CPU (`torch.zeros((n,))`, `torch.arange`,
                            // `torch.tensor([a, b])`); an int reads a 0-dim element of it
  Distribution = 1u << 12,  // Fresh: a torch.distributions object built from Python numbers,
                            // its parameters 0-dim CPU tensors
  Component = 1u << 13,     // Child: on the device a pipeline's map dealt the component its
                            // label starts with (operations/pipelines.cpp)
  ModeCache = 1u << 14,     // PlainTensor: cached on `self` by an override of `train()`, made
                            // when `model.eval()` runs (from_pretrained, before `.to()`)
  LeftBehind = 1u << 15,    // LayerIteration: what the previous block returned, handed to the
                            // next one after `parallelize()` moved the input on without it
  OnePassList = 1u << 16,   // LayerIteration: appended to a list made during the same pass of its
                            // loop: every element of that list comes from one pass
  CastToCuda = 1u << 17,    // LiteralDevice: a CPU tensor `.type_as(x)` cast to x's CUDA type,
                            // which names no GPU: the current device. Parameter: cast so, a
                            // buffer the loader left on the CPU goes there too
};

struct Origin {
  OriginKind kind = OriginKind::Input;
  uint32_t facts = 0; // OriginFact bits
  bool has(OriginFact fact) const { return (facts & static_cast<uint32_t>(fact)) != 0; }
  void set(OriginFact fact, bool on = true) {
    if (on)
      facts |= static_cast<uint32_t>(fact);
    else
      facts &= ~static_cast<uint32_t>(fact);
  }
  std::string_view label;
  std::string_view moved_to; // `.to(x.device)` moved the value here (`x.device`): it travels with x
  // The last child of the unit holding no parameters the value went through (`self.dropout(h)`).
  // Where a map splits the unit, that child is a map entry of its own and its hook moves the
  // value to the entry's device (docs/DEVICE_MODEL.md section 2); otherwise it stays put.
  std::string_view through_empty_child;
  // A child holding nothing whose own forward computed the value from what it was handed (an
  // integral over bins; not a pass-through such as a dropout): the value is that child's output,
  // made by the call at `empty_child_call` in `empty_child_file`, whatever made its input.
  std::string_view made_by_empty_child;
  SourceRange empty_child_call;
  const SyntaxFile *empty_child_file = nullptr;
  // HeldState on `self`: the method that allocates it for every layer alike, on a device the
  // layer does not choose (`_setup_cache(batch, device)`, a root's loop over its layers).
  std::string_view allocated_by;
  // RunTimeDevice: the value's identity. The same variable, or copies of it passed to helpers,
  // keep one key; two keys are two device values that may differ.
  std::string_view device_key;
  SourceRange moved_at;
  // Child (and Parameter) in LibTorch code: the device script code moved this member module to
  // on its own (`model->head->to(torch::kCUDA, 1)` in `main`), apart from the rest of the model;
  // a LiteralDevice or RunTimeDevice origin made at that `->to` call.
  const Origin *moved_by_caller = nullptr;
  const FunctionDef *function = nullptr; // the function running when it was made (an argument's
                                         // receiver, not a helper it was passed on to)
  const ModuleClass *unit = nullptr;     // the class whose method that is, if any
  const Stmt *loop = nullptr; // LayerIteration: the loop that ran the element, when there is one
  const SyntaxFile *file = nullptr;
  SourceRange range;
};

// `.cpu()`, `.to("cpu")`: a value the code itself moved to the CPU (a Fresh origin labelled
// "cpu", as the tensor-method and device-argument models make it).
inline bool moved_to_cpu(const Origin *o) {
  return o->kind == OriginKind::Fresh && o->label == "cpu";
}

// Origins are interned per analysis; values hold pointers.
using OriginSet = std::vector<const Origin *>;

} // namespace devlint
