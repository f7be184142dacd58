#include "model/text.h"

#include <cctype>

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

std::vector<std::string> split_codes(std::string_view list) {
  std::vector<std::string> codes;
  std::string current;
  for (char c : list) {
    if (c == ',' || std::isspace(static_cast<unsigned char>(c))) {
      if (!current.empty())
        codes.push_back(std::move(current));
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty())
    codes.push_back(std::move(current));
  return codes;
}

} // namespace devlint
