// Which operands of a site may sit on different devices under the device map, and which operand
// keeps its device (the anchor) so that the others move to it (docs/DEVICE_MODEL.md sections 3, 4).
#pragma once

#include <vector>

#include "placement/site.h"
#include "placement/unit_placement.h"

namespace devlint {

// Two operands of a site that may sit on different devices, with the origins that witness it.
struct Mismatch {
  size_t anchor = 0;         // operand index that keeps its device
  std::vector<size_t> moved; // operand indices that must move to the anchor's device
  const Origin *anchor_origin = nullptr;
  const Origin *moved_origin = nullptr;
  // Of the moved operand's origins, `moved_origin` is the only one on no device of the anchor's:
  // the operands meet apart only on paths that made it.
  bool moved_origin_alone = false;
};

// Fills `out` and returns true when some operand of `site` may sit on another device than the
// anchor.
bool find_mismatch(const Site &site, const PlacementModel &placement, Mismatch &out);

} // namespace devlint
