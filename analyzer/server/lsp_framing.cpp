#include "server/lsp_framing.h"

#include <algorithm>
#include <cctype>
#include <optional>

namespace devlint {

namespace {

enum class LineRead { Line, End, TooLong };

// One header line without its CRLF (or LF), at most kMaxHeaderLineBytes long.
LineRead read_header_line(std::istream &in, std::string &line) {
  line.clear();
  for (int c; (c = in.get()) != std::char_traits<char>::eof();) {
    if (c == '\n') {
      if (!line.empty() && line.back() == '\r')
        line.pop_back();
      return LineRead::Line;
    }
    if (line.size() >= kMaxHeaderLineBytes)
      return LineRead::TooLong;
    line.push_back(static_cast<char>(c));
  }
  return LineRead::End;
}

std::string lowercase(std::string text) {
  for (char &c : text)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// Content-Length's value: decimal digits only (optional blanks around them), no sign, no
// overflow. nullopt when it is anything else.
std::optional<uint64_t> parse_length(const std::string &value) {
  size_t begin = value.find_first_not_of(" \t"), end = value.find_last_not_of(" \t");
  if (begin == std::string::npos)
    return std::nullopt;
  uint64_t length = 0;
  for (size_t i = begin; i <= end; ++i) {
    char c = value[i];
    if (c < '0' || c > '9')
      return std::nullopt;
    uint64_t digit = static_cast<uint64_t>(c - '0');
    if (length > (UINT64_MAX - digit) / 10)
      return std::nullopt;
    length = length * 10 + digit;
  }
  return length;
}

// Reads (or, with `keep` null, skips) `length` bytes in bounded chunks; false when the input
// ends first.
bool read_body(std::istream &in, uint64_t length, std::string *keep) {
  char buffer[1 << 16];
  while (length > 0) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(sizeof buffer, length));
    in.read(buffer, static_cast<std::streamsize>(want));
    size_t got = static_cast<size_t>(in.gcount());
    if (keep)
      keep->append(buffer, got);
    if (got != want)
      return false;
    length -= got;
  }
  return true;
}

// At most 40 bytes of a header's value, control and non-ASCII bytes as \xNN: it is shown in a
// log and to the client, and must not carry terminal escapes.
std::string printable(const std::string &value) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < value.size() && i < 40; ++i) {
    unsigned char c = static_cast<unsigned char>(value[i]);
    if (c >= 0x20 && c < 0x7f)
      out += static_cast<char>(c);
    else
      out += std::string("\\x") + digits[c >> 4] + digits[c & 0xf];
  }
  return value.size() > 40 ? out + "..." : out;
}

Frame bad_header(std::string error) { return {FrameStatus::BadHeader, {}, std::move(error)}; }

} // namespace

Frame read_frame(std::istream &in, uint64_t max_body_bytes) {
  const std::string header = "content-length:";
  std::optional<uint64_t> length;
  size_t header_bytes = 0;
  std::string line;
  while (true) {
    LineRead read = read_header_line(in, line);
    if (read == LineRead::End)
      return {};
    if (read == LineRead::TooLong)
      return bad_header("a header line longer than " + std::to_string(kMaxHeaderLineBytes) +
                        " bytes");
    header_bytes += line.size() + 2;
    if (header_bytes > kMaxHeaderBytes)
      return bad_header("headers longer than " + std::to_string(kMaxHeaderBytes) + " bytes");
    if (line.empty()) {
      if (length)
        break;
      continue; // blank lines before the headers
    }
    if (lowercase(line.substr(0, header.size())) != header)
      continue; // Content-Type and any other header: not needed
    std::string value = line.substr(header.size());
    value.erase(0, value.find_first_not_of(" \t"));
    std::optional<uint64_t> parsed = parse_length(value);
    if (!parsed)
      return bad_header("Content-Length is not a number of bytes: `" + printable(value) + "`");
    if (length && *length != *parsed)
      return bad_header("two different Content-Length headers");
    length = parsed;
  }
  if (*length > max_body_bytes) {
    Frame frame{FrameStatus::TooLarge,
                {},
                "a message of " + std::to_string(*length) + " bytes, over the limit of " +
                    std::to_string(max_body_bytes) + " bytes"};
    read_body(in, *length, nullptr); // an input that ends meanwhile: the next read says so
    return frame;
  }
  Frame frame{FrameStatus::Message, {}, {}};
  if (!read_body(in, *length, &frame.body))
    return {};
  return frame;
}

} // namespace devlint
