// How a finding names where a tensor came from: "argument `x` of `Block.forward`, line 12".
#pragma once

#include <string>

#include "placement/origin.h"
#include "placement/site.h"

namespace devlint {

// One phrase naming `origin` as seen from `site`'s function.
std::string describe_origin(const Origin &origin, const Site &site);

// A few words for a message's first line; the origins carry the full story.
std::string short_origin(const Origin &origin, const Site &site);

// Names as a C++ reader writes them: `torch::ones` for `torch.ones`, `fc` for `self.fc`.
std::string cpp_spelling(std::string text);

} // namespace devlint
