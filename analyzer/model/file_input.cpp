#include "model/file_input.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace devlint {

namespace {

struct FdCloser {
  int fd;
  ~FdCloser() { close(fd); }
};

const char *kind_of(mode_t mode) {
  return S_ISDIR(mode)    ? "a directory"
         : S_ISFIFO(mode) ? "a FIFO, not a regular file"
         : S_ISCHR(mode)  ? "a character device, not a regular file"
         : S_ISBLK(mode)  ? "a block device, not a regular file"
         : S_ISSOCK(mode) ? "a socket, not a regular file"
                          : "not a regular file";
}

// Appends what `fd` holds up to `limit` bytes in all; false (with `why`) on a read error.
bool read_into(int fd, uint64_t limit, std::string &text, std::string &why) {
  char buffer[1 << 16];
  while (text.size() < limit) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(sizeof buffer, limit - text.size()));
    ssize_t got = read(fd, buffer, want);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0) {
      why = std::string("read error: ") + std::strerror(errno);
      return false;
    }
    if (got == 0)
      break;
    text.append(buffer, static_cast<size_t>(got));
  }
  return true;
}

struct TooDeep {};

// nlohmann's messages end with "; last read: '<bytes>'": the file's own text, left out.
std::string without_quoted_input(std::string message) {
  if (size_t at = message.find("; last read"); at != std::string::npos)
    message.erase(at);
  if (message.rfind("[json.exception.", 0) == 0)
    if (size_t end = message.find("] "); end != std::string::npos)
      message.erase(0, end + 2);
  return message;
}

} // namespace

std::string over_the_limit(uint64_t bytes, uint64_t max_bytes) {
  return "file is " + std::to_string(bytes) + " bytes, over the limit of " +
         std::to_string(max_bytes) + " bytes (" + std::to_string(max_bytes >> 20) + " MiB)";
}

std::optional<std::string> read_regular_file(const std::string &path, uint64_t max_bytes,
                                             std::string &why) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer. The checks below look at what was
  // opened, not at the name, so a file swapped meanwhile cannot slip through.
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    why = std::string("cannot open: ") + std::strerror(errno);
    return std::nullopt;
  }
  FdCloser closer{fd};
  struct stat info {};
  if (fstat(fd, &info) != 0) {
    why = std::string("cannot examine: ") + std::strerror(errno);
    return std::nullopt;
  }
  if (!S_ISREG(info.st_mode)) {
    why = kind_of(info.st_mode);
    return std::nullopt;
  }
  if (static_cast<uint64_t>(info.st_size) > max_bytes) {
    why = over_the_limit(static_cast<uint64_t>(info.st_size), max_bytes);
    return std::nullopt;
  }
  int flags = fcntl(fd, F_GETFL);
  if (flags >= 0)
    fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  // At most one byte past the limit: a file that grows while it is read stays bounded.
  std::string text;
  text.reserve(static_cast<size_t>(info.st_size));
  if (!read_into(fd, max_bytes + 1, text, why))
    return std::nullopt;
  if (text.size() > max_bytes) {
    why = over_the_limit(text.size(), max_bytes);
    return std::nullopt;
  }
  return text;
}

std::optional<std::string> read_at_most(int fd, uint64_t max_bytes, std::string &why) {
  std::string text;
  if (!read_into(fd, max_bytes + 1, text, why))
    return std::nullopt;
  return text;
}

bool parse_json_text(const std::string &text, nlohmann::json &out, std::string &error,
                     int max_depth) {
  // nlohmann's parser keeps its own stack, but copying, comparing and converting a document
  // recurse: a document is refused before it can be used.
  auto limit_depth = [max_depth](int depth, nlohmann::json::parse_event_t event, nlohmann::json &) {
    if ((event == nlohmann::json::parse_event_t::object_start ||
         event == nlohmann::json::parse_event_t::array_start) &&
        depth >= max_depth)
      throw TooDeep{};
    return true;
  };
  try {
    out = nlohmann::json::parse(text, limit_depth);
  } catch (const TooDeep &) {
    out = nullptr;
    error = "nested more than " + std::to_string(max_depth) + " levels deep";
    return false;
  } catch (const nlohmann::json::exception &e) {
    out = nullptr;
    error = "not valid JSON: " + without_quoted_input(e.what());
    return false;
  }
  return true;
}

bool read_json_file(const std::string &path, nlohmann::json &out, std::string &error,
                    uint64_t max_bytes) {
  std::optional<std::string> text = read_regular_file(path, max_bytes, error);
  return text && parse_json_text(*text, out, error);
}

size_t deepest_dotted_key(const std::string &text, uint32_t &line_out) {
  size_t deepest = 0, dots = 0;
  uint32_t line = 1;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') {
      if (dots > deepest) {
        deepest = dots;
        line_out = line;
      }
      dots = 0;
      ++line;
      quote = 0;
    } else if (quote) {
      if (c == '\\' && quote == '"')
        ++i;
      else if (c == quote)
        quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#') {
      while (i + 1 < text.size() && text[i + 1] != '\n')
        ++i;
    } else if (c == '.' &&
               !(i > 0 && std::isdigit(static_cast<unsigned char>(text[i - 1])) &&
                 i + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[i + 1])))) {
      ++dots;
    }
  }
  if (dots > deepest) {
    deepest = dots;
    line_out = line;
  }
  return deepest;
}

} // namespace devlint
