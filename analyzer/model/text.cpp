#include "model/text.h"

namespace devlint {

std::string shorten_snippet(std::string_view text, size_t width) {
  std::string out;
  for (char c : text) {
    if (c == '\n' || c == '\r')
      c = ' ';
    if (c == ' ' && !out.empty() && out.back() == ' ')
      continue;
    out += c;
  }
  if (out.size() > width)
    out = out.substr(0, width - 3) + "...";
  return out;
}

} // namespace devlint
