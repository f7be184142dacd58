// The Language Server Protocol's base protocol: header lines, a blank line, then a body of
// exactly Content-Length bytes. The client is untrusted input like any file: the header must be
// digits, the body is capped and read in bounded chunks (never allocated at the announced size
// before it arrives), and a header line cannot grow without end.
#pragma once

#include <cstdint>
#include <istream>
#include <string>

#include "model/file_input.h"

namespace devlint {

// The largest message body accepted: a document at the file size cap, JSON-escaped (most
// characters stay one byte; a few become two).
constexpr uint64_t kMaxMessageBytes = 2 * kMaxInputBytes;
// The longest header line, and the most header bytes in one message.
constexpr size_t kMaxHeaderLineBytes = 4096;
constexpr size_t kMaxHeaderBytes = 64 * 1024;

enum class FrameStatus {
  Message,    // `body` holds one message
  EndOfInput, // the client closed its end (between messages, or within a truncated one)
  TooLarge,   // a valid Content-Length over the cap: its body was skipped (read and dropped
              // in chunks), the next message can be read
  BadHeader,  // headers that cannot be trusted to find the next message: stop serving
};

struct Frame {
  FrameStatus status = FrameStatus::EndOfInput;
  std::string body;
  std::string error; // TooLarge and BadHeader: what was wrong, for the client and the log
};

// Reads one message from `in`.
Frame read_frame(std::istream &in, uint64_t max_body_bytes = kMaxMessageBytes);

} // namespace devlint
