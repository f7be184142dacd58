#include "model/utf8.h"

#include <cstdint>
#include <cstring>

namespace devlint {

size_t utf8_sequence_length(std::string_view text, size_t at) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char lead = byte(at);
  if (lead < 0x80)
    return 1;
  size_t length;
  unsigned char low = 0x80, high = 0xBF; // the allowed range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0)
      low = 0xA0; // overlong
    else if (lead == 0xED)
      high = 0x9F; // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0)
      low = 0x90; // overlong
    else if (lead == 0xF4)
      high = 0x8F; // past U+10FFFF
  } else {
    return 0; // a continuation byte, an overlong lead (C0, C1) or F5..FF
  }
  if (at + length > text.size())
    return 0;
  if (byte(at + 1) < low || byte(at + 1) > high)
    return 0;
  for (size_t k = 2; k < length; ++k)
    if ((byte(at + k) & 0xC0) != 0x80)
      return 0;
  return length;
}

size_t first_invalid_utf8(std::string_view text) {
  size_t at = 0;
  while (at < text.size()) {
    // Source is mostly ASCII: skip eight such bytes at a time.
    while (at + 8 <= text.size()) {
      uint64_t word;
      std::memcpy(&word, text.data() + at, sizeof word);
      if (word & 0x8080808080808080ull)
        break;
      at += 8;
    }
    if (at == text.size())
      break;
    size_t length = utf8_sequence_length(text, at);
    if (length == 0)
      return at;
    at += length;
  }
  return text.size();
}

bool valid_utf8(std::string_view text) { return first_invalid_utf8(text) == text.size(); }

std::string to_valid_utf8(std::string_view text) {
  size_t bad = first_invalid_utf8(text);
  if (bad == text.size())
    return std::string(text);
  std::string out(text.substr(0, bad));
  size_t at = bad;
  while (at < text.size()) {
    size_t length = utf8_sequence_length(text, at);
    if (length == 0) {
      out += "\xEF\xBF\xBD";
      ++at;
    } else {
      out.append(text, at, length);
      at += length;
    }
  }
  return out;
}

} // namespace devlint
