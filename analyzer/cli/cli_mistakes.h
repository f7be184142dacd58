// Messages for command-line mistakes, with a "did you mean" where a known name is close: an
// unknown subcommand (`devlint chek`), an unknown option (`--output-fromat`), an unknown output
// format (`--output-format text`, which lists the valid ones). CLI11 reports the first two as
// "A subcommand is required" or "arguments were not expected"; main.cpp asks here first.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace devlint {

// The message for argv's first word when it is no subcommand of `app` (and no option), else "".
std::string unknown_subcommand_message(CLI::App &app, int argc, const char *const *argv);

// The message for the first `--option` that the subcommand named in argv does not have, else "".
std::string unknown_option_message(CLI::App &app, int argc, const char *const *argv);

// "unknown output format `text`; did you mean ...? (valid: full, concise, ...)".
std::string unknown_output_format_message(const std::string &format);

} // namespace devlint
