#include "model/text.h"

#include <cctype>

#include "model/utf8.h"

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

std::vector<std::string_view> annotation_names(std::string_view annotation) {
  std::vector<std::string_view> names;
  size_t start = std::string_view::npos;
  for (size_t i = 0; i <= annotation.size(); ++i) {
    char c = i < annotation.size() ? annotation[i] : ' ';
    bool word = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
    if (word && start == std::string_view::npos)
      start = i;
    if (!word && start != std::string_view::npos) {
      names.push_back(annotation.substr(start, i - start));
      start = std::string_view::npos;
    }
  }
  return names;
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

std::string printable(std::string_view text) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    auto byte = static_cast<unsigned char>(text[i]);
    size_t length = utf8_sequence_length(text, i);
    if (length == 0) {
      out += "\\x";
      out += digits[byte >> 4];
      out += digits[byte & 0xF];
      ++i;
    } else if ((byte < 0x20 && byte != '\t') || byte == 0x7f) {
      unsigned picture = byte == 0x7f ? 0x2421 : 0x2400 + byte; // three bytes of UTF-8
      out += static_cast<char>(0xE0 | (picture >> 12));
      out += static_cast<char>(0x80 | ((picture >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (picture & 0x3F));
      ++i;
    } else if (length == 2 && byte == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) {
      auto code = static_cast<unsigned char>(text[i + 1]); // U+0080..U+009F: C2 80..C2 9F
      out += "\\u{";
      out += digits[code >> 4];
      out += digits[code & 0xF];
      out += "}";
      i += 2;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

} // namespace devlint
