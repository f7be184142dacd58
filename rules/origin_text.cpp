#include "rules/origin_text.h"

#include "model/text.h"
#include "placement/condition_text.h"

namespace devlint {

namespace {

// What `self.<label>` is: a buffer the class registers (`register_buffer`) or a parameter.
std::string member_tensor_word(const Origin &o) {
  const ParameterDecl *p = o.unit ? o.unit->find_parameter(o.label) : nullptr;
  return p && p->is_buffer ? "buffer" : "parameter";
}

// The function that received an argument: the caller's `forward`, not a helper it passed the
// value on to.
std::string function_name(const Origin &o, const Site &site, std::string_view scope = ".") {
  const ModuleClass *unit = o.function ? o.unit : site.unit;
  const FunctionDef *function = o.function ? o.function : site.function;
  std::string out;
  if (unit)
    out += std::string(unit->name) + std::string(scope);
  if (function)
    out += std::string(function->name);
  return out;
}

// A ModuleList output read after the loop that ran it: no longer "this iteration's".
bool after_its_loop(const Origin &o, const Site &site) {
  return o.loop && o.file == site.file &&
         (site.expr->range.begin < o.loop->range.begin || site.expr->range.end > o.loop->range.end);
}

// A module path as Python code reads it: `decoder.layers.-1` is `decoder.layers[-1]`.
std::string python_path(std::string_view label) {
  std::string out;
  size_t start = 0;
  while (start <= label.size()) {
    size_t dot = label.find('.', start);
    std::string_view part =
        label.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    std::string_view digits = part.substr(!part.empty() && part[0] == '-' ? 1 : 0);
    bool index = !out.empty() && !digits.empty() &&
                 digits.find_first_not_of("0123456789") == std::string_view::npos;
    if (index)
      out += "[" + std::string(part) + "]";
    else
      out += (out.empty() ? "" : ".") + std::string(part);
    if (dot == std::string_view::npos)
      break;
    start = dot + 1;
  }
  return out;
}

// `.to(x.device)`, `.to(x)`, `device=x.device`: the value travels with `x`.
std::string moved_text(const Origin &o) {
  std::string_view target = o.moved_to;
  // `x.device`, or a variable that holds a device, such as `target_device`.
  std::string_view suffix = "device";
  bool names_device =
      o.kind == OriginKind::RunTimeDevice ||
      (target.size() >= suffix.size() && target.substr(target.size() - suffix.size()) == suffix);
  std::string verb = o.has(OriginFact::MadeThere) ? "made on " : "moved to ";
  return names_device ? verb + "`" + std::string(target) + "`"
                      : verb + "the device of `" + std::string(target) + "`";
}

// A child that a LibTorch module's constructor placed on a literal device: ", on `cuda:1`".
std::string placed_child_device(const Origin &o, const Site &site) {
  // Moved on its own by script code (`model->head->to(torch::kCUDA, 1)` in `main`).
  if (const Origin *moved = o.moved_by_caller) {
    std::string device = moved->kind == OriginKind::RunTimeDevice
                             ? std::string(moved->label)
                             : (moved->label == "cuda" ? "cuda:0" : std::string(moved->label));
    std::string by = moved->function ? " by `" + std::string(moved->function->name) + "`" : "";
    return ", moved on its own to `" + device + "`" + by + " (line " +
           std::to_string(moved->range.line) + ")";
  }
  if (!site.unit)
    return {};
  std::string_view first = std::string_view(o.label).substr(0, o.label.find('.'));
  const ChildDecl *child = site.unit->find_child(first);
  return child && !child->placed_device.empty() ? ", on `" + child->placed_device + "`" : "";
}

// A batch a `torch::data` loader gives: CPU tensors until the code moves them.
bool is_loader_batch(const Origin &o) {
  return o.kind == OriginKind::Fresh && o.label.rfind("torch.data.", 0) == 0;
}

// The same for C++ code (docs/CPP_DEVICE_MODEL.md): members without `self.`, `torch::` names,
// devices given as options rather than `device=`.
std::string describe_cpp_origin(const Origin &o, const Site &site) {
  std::string line = ", line " + std::to_string(o.range.line);
  std::string label = cpp_spelling(std::string(o.label));
  switch (o.kind) {
  case OriginKind::Input:
    return "argument `" + label + "` of `" + function_name(o, site, "::") + "`" + line;
  case OriginKind::Child:
    return "output of member module `" + label + "`" + placed_child_device(o, site) + line;
  case OriginKind::LayerIteration:
    return "output of an element of `" + label + "`" + line;
  case OriginKind::Parameter:
    return "parameter `" + label + "`" + line;
  case OriginKind::PlainTensor:
    return "tensor member `" + label + "`, not a registered buffer, so `->to()` leaves it" + line;
  case OriginKind::Fresh:
    if (label == "cpu")
      return "moved to the CPU" + line;
    if (is_loader_batch(o))
      return "a batch of `" + label + "(...)`, on the CPU until moved" + line;
    return "created by `" + label + "(...)` without a device, on the CPU" + line;
  case OriginKind::Skip:
    return "argument `" + label + "`" + line;
  case OriginKind::LiteralDevice:
    if (o.has(OriginFact::CastToCuda))
      return "made on the CPU and cast by `.type_as()` to a CUDA type, which names no GPU: on the "
             "current device (`cuda:0` unless set)" +
             line;
    return "placed on `" + label + "`" + line;
  case OriginKind::RunTimeDevice:
    return "the device `" + std::string(o.label) + "`, chosen at run time" + line;
  case OriginKind::HeldState:
    return "state `" + label + "` held by an argument object" + line;
  }
  return label + line;
}

// short_origin for C++ code: members without `self.`, `torch::` names.
std::string short_cpp_origin(const Origin &o, const Site &site) {
  std::string label = cpp_spelling(std::string(o.label));
  switch (o.kind) {
  case OriginKind::Input:
  case OriginKind::Skip:
    return "argument `" + label + "`";
  case OriginKind::Child:
    return "output of `" + label + "`" + placed_child_device(o, site);
  case OriginKind::LayerIteration:
    return "output of an element of `" + label + "`";
  case OriginKind::Parameter:
    return "parameter `" + label + "`";
  case OriginKind::PlainTensor:
    return "tensor member `" + label + "`, not a registered buffer";
  case OriginKind::Fresh:
    if (is_loader_batch(o))
      return "a `" + label + "(...)` batch, on the CPU";
    return label == "cpu" ? "moved to the CPU" : "`" + label + "(...)` on the CPU";
  case OriginKind::LiteralDevice:
    if (o.has(OriginFact::CastToCuda))
      return "cast to the current GPU";
    return "on `" + label + "`";
  case OriginKind::RunTimeDevice:
    return "on `" + std::string(o.label) + "`";
  case OriginKind::HeldState:
    return "state `" + label + "`";
  }
  return label;
}

// ", which `__init__` builds only when `config.num_static_categorical_features > 0`" for the
// unit's own child or parameter built under a setting: the origin exists only with it.
std::string built_only_when(const Origin &o) {
  std::string written;
  if (!o.unit || !member_built_by_setting(*o.unit, o.label, &written) || written.empty())
    return "";
  return ", which `__init__` builds only when `" + written + "`";
}

} // namespace

std::string cpp_spelling(std::string text) {
  if (text.rfind("self.", 0) == 0)
    text = text.substr(5);
  if (text.rfind("torch.", 0) == 0)
    for (size_t dot = text.find('.'); dot != std::string::npos; dot = text.find('.', dot + 2))
      text.replace(dot, 1, "::");
  return text;
}

std::string describe_origin(const Origin &o, const Site &site) {
  if (!o.moved_to.empty()) {
    Origin before = o;
    before.moved_to = {};
    if (o.kind == OriginKind::Input && o.label == "self.device" && o.moved_to == "self.device")
      return std::string(o.has(OriginFact::MadeThere) ? "made on" : "moved to") +
             " the module's `self.device`, line " + std::to_string(o.moved_at.line);
    return moved_text(o) + ", line " + std::to_string(o.moved_at.line) +
           ", so it is where that is: " + describe_origin(before, site);
  }
  if (site.file && site.file->explicit_placement)
    return describe_cpp_origin(o, site);
  // Computed by a module holding nothing (its own forward): its output, made from its input.
  if (!o.made_by_empty_child.empty()) {
    Origin handed = o;
    handed.made_by_empty_child = {};
    return "output of `self." + python_path(o.made_by_empty_child) + "`, line " +
           std::to_string(o.empty_child_call.line) +
           ", computed from what it was handed: " + describe_origin(handed, site);
  }
  std::string line = ", line " + std::to_string(o.range.line);
  std::string label = o.kind == OriginKind::Input || o.kind == OriginKind::Skip ||
                              o.kind == OriginKind::Fresh || o.kind == OriginKind::LiteralDevice
                          ? std::string(o.label)
                          : python_path(o.label);
  // A diffusers pipeline's component (placement/operations/pipelines.cpp).
  if (o.has(OriginFact::Component)) {
    std::string_view component = o.label.substr(0, o.label.find('.'));
    std::string dealt =
        "the GPU the pipeline's device map gave `self." + std::string(component) + "`";
    if (component.size() != o.label.size())
      return "output of `self." + label + "(...)`, on " + dealt + line;
    std::string_view written = o.file ? o.file->source->slice(o.range) : std::string_view{};
    if (written.size() < component.size() ||
        written.substr(written.size() - component.size()) != component)
      return "`" + std::string(written) + "`, the device of `self." + std::string(component) +
             (ends_with(written, "_execution_device")
                  ? "`, the pipeline's first registered module component"
                  : "`, the first module among the pipeline's constructor arguments "
                    "sorted by name (DiffusionPipeline.device)") +
             line;
    return dealt + line;
  }
  switch (o.kind) {
  case OriginKind::Input:
    if (label == "self.device")
      return "the module's `self.device`" + line;
    return "argument `" + label + "` of `" + function_name(o, site) + "`" + line;
  case OriginKind::Child:
    return "comes from `self." + label + "`" + built_only_when(o) + line;
  case OriginKind::LayerIteration:
    if (label.rfind("past", 0) == 0)
      return "one layer's cache from `" + label + "`, on that layer's device" + line;
    if (after_its_loop(o, site))
      return "output of an element of `self." + label + "`, read after the loop over it" + line;
    if (o.has(OriginFact::Settled) &&
        !o.loop) // `prior = self.priors[level]` before the loop that calls it
      return "output of one element of `self." + label + "`, the same on every pass" + line;
    if (o.has(OriginFact::Collected))
      return "outputs of the elements of `self." + label + "`, gathered by a comprehension" + line;
    if (o.has(OriginFact::EarlierIteration))
      return "holds outputs of earlier iterations over `self." + label + "`" + line;
    return "output of this iteration's element of `self." + label + "`" + line;
  case OriginKind::Parameter:
    if (o.has(OriginFact::LayerWeights))
      return "the weights of `self." + label.substr(0, label.rfind('.')) +
             "`, on the model's device" + line;
    if (o.label.find('.') != std::string_view::npos)
      return "parameter `self." + label + "` read directly, which no hook moves" + line;
    return member_tensor_word(o) + " `self." + label + "`" + built_only_when(o) + line;
  case OriginKind::PlainTensor:
    if (o.has(OriginFact::ModeCache))
      return "plain tensor attribute `self." + label +
             "`, cached by `train()` when `model.eval()` runs, not a registered buffer, so "
             "`.to()` leaves it on the CPU" +
             line;
    return "plain tensor attribute `self." + label +
           "`, not a registered buffer, so dispatch leaves it on the CPU" + line;
  case OriginKind::Fresh:
    if (label == "cpu")
      return "moved to the CPU" + line;
    return "created by `" + label + "(...)` without `device=`, on the CPU" + line;
  case OriginKind::Skip:
    return "skip-key argument `" + label + "`, left where it was created" + line;
  case OriginKind::LiteralDevice:
    if (o.has(OriginFact::CastToCuda))
      return "made on the CPU and cast by `.type_as()` to a CUDA type, which names no GPU: on the "
             "current device (`cuda:0` unless set)" +
             line;
    return "placed on `" + label + "`" + line;
  case OriginKind::RunTimeDevice:
    return "the device `" + label + "`, chosen at run time" + line;
  case OriginKind::HeldState: {
    if (!o.allocated_by.empty())
      return "`" + label + "`, allocated by `" + std::string(o.allocated_by) +
             "` alike for every layer, on a device the layer does not choose; dispatch never "
             "moves it" +
             line;
    // `cache_params.update_conv_state(...)`: a method of the object handing back its state.
    bool returned = label.size() > 5 && label.compare(label.size() - 5, 5, "(...)") == 0;
    return "`" + label + "`" + (returned ? " returns state" : "") +
           ", allocated once, on one device, by whoever built `" +
           label.substr(0, label.find('.')) + "`; no hook moves the tensors an object holds" + line;
  }
  }
  return label + line;
}

std::string short_origin(const Origin &o, const Site &site) {
  if (!o.moved_to.empty())
    return moved_text(o);
  if (site.file && site.file->explicit_placement)
    return short_cpp_origin(o, site);
  if (!o.made_by_empty_child.empty())
    return "from `self." + python_path(o.made_by_empty_child) + "`";
  std::string label = o.kind == OriginKind::Input || o.kind == OriginKind::Skip ||
                              o.kind == OriginKind::Fresh || o.kind == OriginKind::LiteralDevice
                          ? std::string(o.label)
                          : python_path(o.label);
  switch (o.kind) {
  case OriginKind::Input:
    return label == "self.device" ? "`self.device`" : "argument `" + label + "`";
  case OriginKind::Child:
    return "from `self." + label + "`";
  case OriginKind::LayerIteration:
    if (label.rfind("past", 0) == 0)
      return "one layer's cache";
    if (after_its_loop(o, site) || o.has(OriginFact::Collected) ||
        (o.has(OriginFact::Settled) && !o.loop))
      return "a `self." + label + "` output";
    return o.has(OriginFact::EarlierIteration) ? "earlier `self." + label + "` outputs"
                                               : "this iteration's `self." + label + "` output";
  case OriginKind::Parameter:
    if (o.has(OriginFact::LayerWeights))
      return "its weights";
    return member_tensor_word(o) + " `self." + label + "`";
  case OriginKind::PlainTensor:
    return "unregistered `self." + label + "`, on the CPU";
  case OriginKind::Fresh:
    return label == "cpu" ? "moved to the CPU" : "`" + label + "(...)` on the CPU";
  case OriginKind::Skip:
    return "skip key `" + label + "`";
  case OriginKind::LiteralDevice:
  case OriginKind::RunTimeDevice:
    return "on `" + label + "`";
  case OriginKind::HeldState:
    if (!o.allocated_by.empty())
      return "`" + label + "`, allocated by `" + std::string(o.allocated_by) + "`";
    return "`" + label + "`, allocated once by its holder's builder";
  }
  return label;
}

} // namespace devlint
