// Origins that name a member of the analyzed unit (a child, one of its module lists, its own
// parameter or buffer): the site checker and the placement ranking ask the same question of a
// member the unit's `__init__` declares but an instance may not build.
#pragma once

#include <string_view>

#include "diagnostics/origin_kind.h"
#include "model/module_model.h"

namespace devlint {

// The kinds whose label starts with the unit's attribute (`model.embed`, `layers`, `weight`).
inline bool names_member(OriginKind kind) {
  return kind == OriginKind::Child || kind == OriginKind::LayerIteration ||
         kind == OriginKind::Parameter;
}

// The attribute of the unit such a label names (`model` for `model.embed`).
inline std::string_view member_attribute(std::string_view label) {
  return label.substr(0, label.find('.'));
}

// The origin names a member the unit's `__init__` (or a package base's) declares.
inline bool declares_member(const ModuleClass &unit, OriginKind kind, std::string_view label) {
  return names_member(kind) && (unit.find_child(member_attribute(label)) ||
                                (kind == OriginKind::Parameter && unit.find_parameter(label)));
}

} // namespace devlint
