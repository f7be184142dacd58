#include "model/text.h"

namespace devlint {

std::string shorten_snippet(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\n' || c == '\r')
      c = ' ';
    if (c == ' ' && !out.empty() && out.back() == ' ')
      continue;
    out += c;
  }
  if (out.size() > 48)
    out = out.substr(0, 45) + "...";
  return out;
}

} // namespace devlint
