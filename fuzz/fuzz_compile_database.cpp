// A repository's compile_commands.json (frontend/cpp/compile_database.h) on arbitrary bytes:
// parsing ends in a database or an error, never a crash, a hang or an exception, and whatever a
// command holds, only the allow-list reaches Clang (compile_flags.h) and the warning naming what
// was refused or dropped prints no control character.
#include <cstdint>
#include <string>
#include <string_view>

#include "frontend/cpp/compile_database.h"
#include "frontend/cpp/compile_flags.h"
#include "fuzz/fuzz_support.h"

using namespace devlint;

namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool has_control_character(std::string_view text) {
  for (char c : text)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      return true;
  return false;
}

// Whether `argument` is one of the forms the allow-list passes.
bool allowed_form(std::string_view argument) {
  for (std::string_view include :
       {"-I/proj/", "-isystem/proj/", "-iquote/proj/", "-idirafter/proj/"})
    if (starts_with(argument, include))
      return !has_control_character(argument);
  if (starts_with(argument, "-std=") || starts_with(argument, "-D") || starts_with(argument, "-U"))
    return !has_control_character(argument);
  if (starts_with(argument, "-f"))
    return argument.find("plugin") == std::string_view::npos &&
           argument.find("module") == std::string_view::npos &&
           argument.find("list") == std::string_view::npos &&
           argument.find("file") == std::string_view::npos;
  return false;
}

void require_filtered(const std::vector<std::string> &command) {
  CompileFlags flags =
      filter_compile_flags(command, "/proj/build", "/proj/build/a.cpp",
                           [](const std::string &d) { return starts_with(d, "/proj/"); });
  for (const std::string &argument : flags.arguments)
    DEVLINT_FUZZ_REQUIRE(allowed_form(argument), argument);
  std::string described = describe_filtered_flags(flags);
  DEVLINT_FUZZ_REQUIRE(!has_control_character(described), described);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  std::string error;
  auto database = parse_compile_database(text, "/proj", error);
  DEVLINT_FUZZ_REQUIRE(database || !error.empty(), "a database refused without a reason");
  if (database)
    for (const CompileCommand &command : database->commands)
      require_filtered(command.arguments);
  // The bytes as one "command" string, too.
  require_filtered(split_command_line(std::string(text)));
  return 0;
}
