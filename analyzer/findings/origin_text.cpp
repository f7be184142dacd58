#include "findings/origin_text.h"

namespace devlint {
namespace {

std::string function_name(const Site &site) {
  std::string out;
  if (site.unit)
    out += std::string(site.unit->name) + ".";
  if (site.function)
    out += std::string(site.function->name);
  return out;
}

// The same for C++ code (docs/CPP_DEVICE_MODEL.md): members without `self.`, `torch::` names,
// devices given as options rather than `device=`.
std::string describe_cpp_origin(const Origin &o, const Site &site) {
  std::string line = ", line " + std::to_string(o.range.line);
  std::string label = cpp_spelling(std::string(o.label));
  switch (o.kind) {
  case OriginKind::Input:
    return "argument `" + label + "` of `" + function_name(site) + "`" + line;
  case OriginKind::Child:
    return "output of member module `" + label + "`" + line;
  case OriginKind::LayerIteration:
    return "output of an element of `" + label + "`" + line;
  case OriginKind::Parameter:
    return "parameter `" + label + "`" + line;
  case OriginKind::PlainTensor:
    return "tensor member `" + label + "`, not a registered buffer, so `->to()` leaves it" + line;
  case OriginKind::Fresh:
    if (label == "cpu")
      return "moved to the CPU" + line;
    return "created by `" + label + "(...)` without a device, on the CPU" + line;
  case OriginKind::Skip:
    return "argument `" + label + "`" + line;
  case OriginKind::LiteralDevice:
    return "placed on `" + label + "`" + line;
  }
  return label + line;
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
  if (site.file && site.file->explicit_placement)
    return describe_cpp_origin(o, site);
  std::string line = ", line " + std::to_string(o.range.line);
  std::string label(o.label);
  switch (o.kind) {
  case OriginKind::Input:
    if (label == "self.device")
      return "the module's `self.device`" + line;
    return "argument `" + label + "` of `" + function_name(site) + "`" + line;
  case OriginKind::Child:
    return "comes from `self." + label + "`" + line;
  case OriginKind::LayerIteration:
    if (label.rfind("past", 0) == 0)
      return "one layer's cache from `" + label + "`, on that layer's device" + line;
    if (o.earlier_iteration)
      return "holds outputs of earlier iterations over `self." + label + "`" + line;
    return "output of this iteration's element of `self." + label + "`" + line;
  case OriginKind::Parameter:
    if (label.find('.') != std::string::npos)
      return "parameter `self." + label + "` read directly, which no hook moves" + line;
    return "parameter `self." + label + "`" + line;
  case OriginKind::PlainTensor:
    return "plain tensor attribute `self." + label +
           "`, not a registered buffer, so dispatch leaves it on the CPU" + line;
  case OriginKind::Fresh:
    if (label == "cpu")
      return "moved to the CPU" + line;
    return "created by `" + label + "(...)` without `device=`, on the CPU" + line;
  case OriginKind::Skip:
    return "skip-key argument `" + label + "`, left where it was created" + line;
  case OriginKind::LiteralDevice:
    return "placed on `" + label + "`" + line;
  }
  return label + line;
}

} // namespace devlint
