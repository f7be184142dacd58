// How accelerate may place one module class ("unit") under device_map="auto": whether the class
// may be split across devices, and which origins inside its methods may then sit on different
// devices (docs/DEVICE_MODEL.md sections 1 and 3).
#pragma once

#include <optional>
#include <string>
#include <unordered_map>

#include "model/module_model.h"
#include "placement/origin.h"

namespace devlint {

// Where an origin sits inside a unit's method, as far as the device map decides
// (docs/DEVICE_MODEL.md section 3). Two origins in different groups may sit on different devices.
struct DeviceGroup {
  enum class Kind : uint8_t {
    Any,       // compatible with every device: a skip key, a cache the block made itself
    Cpu,       // a fresh tensor or a plain attribute: the CPU
    Literal,   // a literal device: `name` ("cuda:0")
    Unit,      // the one device of a unit that is never split
    Input,     // the inputs of a split unit that does not sit on the map's first chain
    Entry,     // a device-map entry: `name` is its path below the unit ("layers.3", "vision.last")
    Iteration, // one pass over a ModuleList: `name` is the list's path
    Placed,    // children __init__ moved to one device variable: `name` is the variable
    Held,      // state allocated once by the module that built its holder (the model, on the
               // device of its inputs), read here through an argument no hook moves
    RunTime,   // a device chosen at run time: `name` is its key (Origin::device_key)
    Component, // the GPU a pipeline's map dealt a component: `name` is the component
  };
  Kind kind = Kind::Any;
  std::string name;
  bool earlier_iteration = false; // Iteration: a previous pass (its value outlives the pass)
  // A member module script code moved apart from the rest of its model (Origin::moved_by_caller):
  // not on the unit's own device, which a literal or run-time device otherwise may be. Not part
  // of equality: the device is.
  bool apart_from_unit = false;

  static DeviceGroup entry(std::string path) { return {Kind::Entry, std::move(path), false}; }
  bool any() const { return kind == Kind::Any; }
  bool operator==(const DeviceGroup &o) const {
    return kind == o.kind && name == o.name && earlier_iteration == o.earlier_iteration;
  }
  bool operator!=(const DeviceGroup &o) const { return !(*this == o); }
};

// What decided may_split (the rules explain it in words).
enum class SplitReason : uint8_t {
  None,          // nothing to say: not a module of a model loaded with a device map
  NotListed,     // not in the model's _no_split_modules: accelerate may split it
  Listed,        // in _no_split_modules: kept whole
  NoListInModel, // no model declares the list (only with --hand-made-maps): a hand-made map may
  NoLoader,      // no class of the package is loaded by from_pretrained (--hand-made-maps): a map
                 // the user builds may
  PlacedByHand,  // its constructor moves some children to a device (`.to(dev)`), not others
};

struct UnitFacts {
  bool may_split = false;
  bool on_first_chain = false; // inputs reach it on the map's first device
  DeviceGroup input_group;     // device group of its inputs
  SplitReason split_reason = SplitReason::None;
};

class PlacementModel {
public:
  explicit PlacementModel(const Package &package);

  const UnitFacts &facts(const ModuleClass *unit) const;
  // The device group an origin sits in inside `unit`.
  DeviceGroup group_of(const Origin &origin, const ModuleClass *unit) const;
  const Package &package() const { return package_; }
  // Whether `parameter` of `unit.forward` is never passed (or passed as None) where `unit` may be
  // split: a class kept whole in one place and split in another decides per place of use, so
  // an argument only present where it is kept whole meets nothing on another device.
  bool absent_where_split(const ModuleClass *unit, std::string_view parameter) const;
  // Whether `unit`'s constructor does not build `member` where `unit` may be split: code that
  // always reads it runs only where the class is kept whole.
  bool unbuilt_where_split(const ModuleClass *unit, std::string_view member) const;

private:
  const Package &package_;
  std::unordered_map<const ModuleClass *, UnitFacts> facts_;
  std::unordered_map<const ModuleClass *, std::vector<const ModuleClass *>> parents_;
  // Per unit, the forward parameters that no splittable parent passes (absent_where_split).
  std::unordered_map<const ModuleClass *, std::vector<std::string_view>> absent_where_split_;
  std::vector<std::string_view> arguments_absent_where_split(const ModuleClass *unit) const;
  // Per unit, the parameters and children its constructor does not create where it may be split
  // (`use_position_embeddings=False` skips the relative-position biases there).
  std::unordered_map<const ModuleClass *, std::vector<std::string_view>> unbuilt_where_split_;
  // Norm children built without weights (their affine flag False) wherever `unit` may split.
  std::unordered_map<const ModuleClass *, std::vector<std::string_view>> weightless_where_split_;
  std::vector<std::string_view>
  parameters_unbuilt_where_split(const ModuleClass *unit,
                                 std::vector<std::string_view> *weightless) const;
  // Where a weightless child of a split unit sits: a map entry of size 0 gets the device being
  // filled when it is reached, the device of the weighted sibling before it (or after it, for
  // the first; with none, the unit's inputs').
  std::optional<DeviceGroup> weightless_child_group(std::string_view child,
                                                    const ModuleClass *unit) const;
  UnitFacts no_unit_;
  // Per unit on the map's first chain, the forward parameters a caller fills with the output of
  // another of its own modules (`text_model(image_embeds=self.image_to_text_projection(x))`),
  // directly or through the caller's own such parameter: no hook moves them to the first device.
  std::unordered_map<const ModuleClass *, std::vector<std::string_view>> handed_by_caller_;
  void find_arguments_handed_by_callers();
  // A call of a child (`self.encoder(x)`) in a method of the class that holds it.
  struct ChildCall {
    const ModuleClass *caller;
    const FunctionDef *method;
    const ChildDecl *child;
    const Expr *expr;
  };
  bool output_of_other_modules(const Expr *e, const ChildCall &at, int depth) const;
  bool handed_by_caller(const ModuleClass *unit, std::string_view parameter) const;

  bool never_split_context(const ModuleClass *cls, int depth) const;
  bool first_chain(const ModuleClass *cls, int depth) const;
  bool never_split_context_uncached(const ModuleClass *cls, int depth) const;
  bool first_chain_uncached(const ModuleClass *cls, int depth) const;
  // Both walk up the containing classes; memoized per class, so a package whose classes contain
  // each other in a wide lattice costs linear time, not one walk per path.
  mutable std::unordered_map<const ModuleClass *, bool> never_split_memo_, first_chain_memo_;
  std::string first_item_path(const ModuleClass *cls) const;
  std::string last_item_path(const ModuleClass *cls) const;
  // The device-map entry holding `path`; `output` follows a split class to its last item, where
  // its forward's result is produced.
  DeviceGroup child_group(std::string_view path, const ModuleClass *unit, bool output) const;
};

} // namespace devlint
