#include "model/python_fragment.h"

#include <algorithm>
#include <cstring>

namespace devlint {

std::vector<ByteClass> lex_python_fragment(std::string_view text) {
  std::vector<ByteClass> classes(text.size(), ByteClass::Code);
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote) {
      classes[i] = ByteClass::String;
      if (c == '\\' && i + 1 < text.size())
        classes[++i] = ByteClass::String;
      else if (c == quote)
        quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
      classes[i] = ByteClass::String;
      // A prefix (f"", rb'') belongs to the string token.
      for (size_t k = i;
           k > 0 && text[k - 1] != 0 && std::strchr("rRbBfFuU", text[k - 1]) && i - k < 2; --k)
        classes[k - 1] = ByteClass::String;
    } else if (c == '#') {
      std::fill(classes.begin() + i, classes.end(), ByteClass::Comment);
      size_t newline = text.find('\n', i);
      if (newline == std::string_view::npos)
        break;
      std::fill(classes.begin() + newline, classes.end(), ByteClass::Code);
      i = newline;
    }
  }
  return classes;
}

} // namespace devlint
