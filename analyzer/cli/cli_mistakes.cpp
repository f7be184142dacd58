#include "cli/cli_mistakes.h"

#include <vector>

#include "model/did_you_mean.h"
#include "render/renderer.h"

namespace devlint {
namespace {

std::vector<std::string> subcommand_names(CLI::App &app) {
  std::vector<std::string> names;
  for (const CLI::App *sub : app.get_subcommands({}))
    names.push_back(sub->get_name());
  return names;
}

} // namespace

std::string unknown_subcommand_message(CLI::App &app, int argc, const char *const *argv) {
  if (argc < 2 || argv[1][0] == '-' || argv[1][0] == '\0')
    return "";
  std::string word = argv[1];
  std::vector<std::string> names = subcommand_names(app);
  for (const std::string &name : names)
    if (name == word)
      return "";
  std::string list;
  for (const std::string &name : names)
    list += (list.empty() ? "" : ", ") + name;
  return "unknown command `" + word + "`" + did_you_mean(word, names) + " (commands: " + list +
         "; see `devlint --help`)";
}

std::string unknown_option_message(CLI::App &app, int argc, const char *const *argv) {
  if (argc < 2)
    return "";
  CLI::App *command = nullptr;
  for (CLI::App *sub : app.get_subcommands({}))
    if (sub->get_name() == argv[1])
      command = sub;
  if (!command)
    return "";
  std::vector<std::string> options;
  for (const CLI::Option *option : command->get_options())
    for (const std::string &name : option->get_lnames())
      options.push_back("--" + name);
  for (int i = 2; i < argc; ++i) {
    std::string word = argv[i];
    if (word == "--")
      break; // paths follow
    if (word.rfind("--", 0) != 0)
      continue;
    std::string name = word.substr(0, word.find('='));
    bool known = false;
    for (const std::string &option : options)
      known |= option == name;
    if (!known)
      return "unknown option `" + name + "`" + did_you_mean(name, options) + " (see `devlint " +
             command->get_name() + " --help`)";
  }
  return "";
}

std::string unknown_output_format_message(const std::string &format) {
  std::vector<std::string> names;
  std::string all = output_format_names();
  for (size_t start = 0; start < all.size();) {
    size_t comma = all.find(", ", start);
    names.push_back(all.substr(start, comma - start));
    start = comma == std::string::npos ? all.size() : comma + 2;
  }
  return "unknown output format `" + format + "`" + did_you_mean(format, names) +
         " (valid: " + all + ")";
}

} // namespace devlint
