// The language server's framing (server/lsp_framing.h) on arbitrary client bytes: headers, a
// blank line, Content-Length bytes of body, message after message, each body parsed as the
// server parses it. A client must get a message or a defined end, never a crash, a hang, an
// allocation of the announced size or a terminal escape echoed back.
#include <cstdint>
#include <sstream>

#include "fuzz/fuzz_support.h"
#include "model/file_input.h"
#include "server/lsp_framing.h"

using namespace devlint;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A small cap, so that oversized messages (skipped, then the next one read) are reached.
  constexpr uint64_t kCap = 4096;
  std::istringstream in(std::string(reinterpret_cast<const char *>(data), size));
  for (int messages = 0; messages <= static_cast<int>(size); ++messages) {
    Frame frame = read_frame(in, kCap);
    switch (frame.status) {
    case FrameStatus::EndOfInput:
      return 0;
    case FrameStatus::BadHeader:
      DEVLINT_FUZZ_REQUIRE(!frame.error.empty(), "a bad header without a reason");
      for (char c : frame.error)
        DEVLINT_FUZZ_REQUIRE(static_cast<unsigned char>(c) >= 0x20 &&
                                 static_cast<unsigned char>(c) < 0x7f,
                             frame.error);
      return 0;
    case FrameStatus::TooLarge:
      DEVLINT_FUZZ_REQUIRE(frame.body.empty(), frame.error);
      continue;
    case FrameStatus::Message: {
      DEVLINT_FUZZ_REQUIRE(frame.body.size() <= kCap, std::to_string(frame.body.size()));
      nlohmann::json message;
      std::string error;
      if (!parse_json_text(frame.body, message, error))
        DEVLINT_FUZZ_REQUIRE(!error.empty(), "a refused message without a reason");
      continue;
    }
    }
  }
  // Every message consumes at least its header's blank line: more than `size` cannot be.
  DEVLINT_FUZZ_REQUIRE(false, "more messages than input bytes");
  return 0;
}
