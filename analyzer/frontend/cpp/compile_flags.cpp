#include "frontend/cpp/compile_flags.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <initializer_list>
#include <string_view>

namespace devlint {
namespace fs = std::filesystem;

namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool one_of(std::string_view text, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), text) != names.end();
}

bool has_control_character(std::string_view text) {
  return std::any_of(text.begin(), text.end(), [](char c) {
    auto byte = static_cast<unsigned char>(c);
    return byte < 0x20 || byte == 0x7f;
  });
}

// Options whose value is the next argument when written alone. The value is consumed with its
// option (refused or dropped together), so it is never read as an option of its own.
bool takes_separate_value(std::string_view option) {
  return one_of(option, {"-o",
                         "-x",
                         "-I",
                         "-isystem",
                         "-iquote",
                         "-idirafter",
                         "--include-directory",
                         "-D",
                         "-U",
                         "--define-macro",
                         "--undefine-macro",
                         "--std",
                         "-include",
                         "-imacros",
                         "-include-pch",
                         "-isysroot",
                         "-iprefix",
                         "-iwithprefix",
                         "-iwithprefixbefore",
                         "-iframework",
                         "-imultilib",
                         "-ivfsoverlay",
                         "-cxx-isystem",
                         "-isystem-after",
                         "-MF",
                         "-MT",
                         "-MQ",
                         "-MJ",
                         "-Xclang",
                         "-Xpreprocessor",
                         "-Xlinker",
                         "-Xassembler",
                         "-Xanalyzer",
                         "-Xcuda-fatbinary",
                         "-Xcuda-ptxas",
                         "-Xopenmp-target",
                         "-Xarch_device",
                         "-Xarch_host",
                         "-mllvm",
                         "-target",
                         "-arch",
                         "-dependency-file",
                         "-dependency-dot",
                         "--serialize-diagnostics",
                         "-serialize-diagnostic-file",
                         "-diagnostic-log-file",
                         "-header-include-file",
                         "-main-file-name",
                         "-load",
                         "-plugin",
                         "-add-plugin",
                         "-F",
                         "-L",
                         "-z",
                         "-u",
                         "-T",
                         "--param",
                         "-B",
                         "--sysroot",
                         "--gcc-toolchain",
                         "-gcc-toolchain",
                         "-working-directory",
                         "--config",
                         "--output",
                         "--language",
                         "-rpath"}) ||
         starts_with(option, "-Xarch_") || starts_with(option, "-plugin-arg-");
}

// Language options passed on, each also as -fno-NAME: they change what the code means.
bool is_language_option(std::string_view option) {
  if (!starts_with(option, "-f"))
    return false;
  std::string_view name = option.substr(2);
  if (starts_with(name, "no-"))
    name = name.substr(3);
  return one_of(name, {"exceptions",
                       "cxx-exceptions",
                       "rtti",
                       "signed-char",
                       "unsigned-char",
                       "char8_t",
                       "short-wchar",
                       "short-enums",
                       "ms-extensions",
                       "ms-compatibility",
                       "gnu-keywords",
                       "operator-names",
                       "sized-deallocation",
                       "aligned-new",
                       "coroutines-ts",
                       "delayed-template-parsing",
                       "threadsafe-statics",
                       "trigraphs",
                       "declspec",
                       "asm",
                       "access-control",
                       "elide-constructors",
                       "blocks",
                       "openmp",
                       "gnu-inline-asm",
                       "dollars-in-identifiers"});
}

// Limits of the parser with a number (-ftemplate-depth=1024).
bool is_numeric_language_option(std::string_view option) {
  for (std::string_view name :
       {"-ftemplate-depth=", "-fconstexpr-depth=", "-fconstexpr-steps=", "-fbracket-depth="})
    if (starts_with(option, name)) {
      std::string_view digits = option.substr(name.size());
      return !digits.empty() && digits.size() <= 8 &&
             std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
    }
  return false;
}

// Options of every ordinary build that only steer code generation, optimization, warnings or
// how diagnostics look: not passed, and not worth a word (devlint turns Clang's warnings off).
bool is_silently_ignored(std::string_view option) {
  if (one_of(option, {"-c",
                      "-S",
                      "-O",
                      "-O0",
                      "-O1",
                      "-O2",
                      "-O3",
                      "-Os",
                      "-Oz",
                      "-Og",
                      "-Ofast",
                      "-g",
                      "-g0",
                      "-g1",
                      "-g2",
                      "-g3",
                      "-ggdb",
                      "-ggdb3",
                      "-gdwarf-4",
                      "-gdwarf-5",
                      "-gline-tables-only",
                      "-w",
                      "-pedantic",
                      "-pedantic-errors",
                      "--pedantic",
                      "-pthread",
                      "-pipe",
                      "-m64",
                      "-fPIC",
                      "-fpic",
                      "-fPIE",
                      "-fpie",
                      "-fno-plt",
                      "-fvisibility=hidden",
                      "-fvisibility=default",
                      "-fvisibility=protected",
                      "-fvisibility-inlines-hidden",
                      "-fomit-frame-pointer",
                      "-fno-omit-frame-pointer",
                      "-ffunction-sections",
                      "-fdata-sections",
                      "-fstrict-aliasing",
                      "-fno-strict-aliasing",
                      "-fcommon",
                      "-fno-common",
                      "-fstack-protector",
                      "-fstack-protector-strong",
                      "-fstack-protector-all",
                      "-fno-stack-protector",
                      "-fdiagnostics-color",
                      "-fdiagnostics-color=always",
                      "-fdiagnostics-color=auto",
                      "-fdiagnostics-color=never",
                      "-fcolor-diagnostics",
                      "-fno-color-diagnostics",
                      "-fpermissive",
                      "-ffast-math",
                      "-fno-math-errno"}))
    return true;
  // Warnings by name (-Wall, -Wno-unused, -Werror=return-type); -Wp, -Wl, and -Wa, pass
  // options on to other tools and are refused.
  if (starts_with(option, "-W") && option.size() > 2) {
    std::string_view name = option.substr(2);
    return std::all_of(name.begin(), name.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '-' || c == '_' || c == '+' || c == '=';
    });
  }
  return false;
}

// Options that read a file other than the code (response files, forced includes, overlays,
// module maps, sanitizer lists, configuration, plugins), write one (dependency files, serialized
// diagnostics, statistics, temporaries), or hand options past the driver to Clang's internals,
// the preprocessor, LLVM or other tools.
bool is_refused(std::string_view option) {
  if (starts_with(option, "@") || starts_with(option, "-X") || starts_with(option, "-Wp,") ||
      starts_with(option, "-Wl,") || starts_with(option, "-Wa,") || starts_with(option, "-M") ||
      starts_with(option, "-B") || starts_with(option, "-fplugin") ||
      starts_with(option, "-fpass-plugin") || starts_with(option, "-plugin") ||
      starts_with(option, "-fmodule") || starts_with(option, "-fprebuilt-module") ||
      starts_with(option, "-fimplicit-module") || starts_with(option, "-save-") ||
      starts_with(option, "-emit-") || starts_with(option, "-ftime-trace") ||
      starts_with(option, "-fproc-stat-report") || starts_with(option, "-fsave-optimization") ||
      starts_with(option, "-fcrash-diagnostics") || starts_with(option, "-fprofile") ||
      starts_with(option, "--sysroot") || starts_with(option, "--gcc-toolchain") ||
      starts_with(option, "--config") || starts_with(option, "-specs") ||
      starts_with(option, "--specs") || starts_with(option, "-working-directory") ||
      starts_with(option, "-cc1"))
    return true;
  if (one_of(option, {"-mllvm",
                      "-include",
                      "-imacros",
                      "-include-pch",
                      "-ivfsoverlay",
                      "-iprefix",
                      "-iwithprefix",
                      "-iwithprefixbefore",
                      "-isysroot",
                      "-gcc-toolchain",
                      "-load",
                      "-add-plugin",
                      "-dependency-file",
                      "-dependency-dot",
                      "--serialize-diagnostics",
                      "-serialize-diagnostic-file",
                      "-diagnostic-log-file",
                      "-header-include-file",
                      "-main-file-name",
                      "-E",
                      "-H",
                      "--analyze"}))
    return true;
  // Any option naming a list or a file to read or write (-fsanitize-ignorelist=,
  // -stats-file=, -fprofile-list=).
  std::string_view name = option.substr(0, option.find('='));
  return name.find("list") != std::string_view::npos || name.find("file") != std::string_view::npos;
}

bool valid_standard(std::string_view value) {
  return (starts_with(value, "c") || starts_with(value, "gnu")) && value.size() <= 16 &&
         std::all_of(value.begin(), value.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+';
         });
}

bool valid_macro(std::string_view value) {
  if (value.empty() || value.size() > 4096 || has_control_character(value))
    return false;
  char first = value.front();
  return (first >= 'a' && first <= 'z') || (first >= 'A' && first <= 'Z') || first == '_';
}

} // namespace

CompileFlags filter_compile_flags(const std::vector<std::string> &command,
                                  const std::string &directory, const std::string &entry_file,
                                  const IncludeDirectoryCheck &include_allowed) {
  CompileFlags out;
  auto absolute = [&](const std::string &path) {
    fs::path p(path);
    if (p.is_relative())
      p = fs::path(directory) / p;
    return p.lexically_normal().string();
  };
  bool only_inputs = false; // after `--`
  for (size_t i = 1; i < command.size(); ++i) {
    const std::string &arg = command[i];
    if (arg.empty())
      continue;
    if (arg.find('\0') != std::string::npos) {
      out.dropped.push_back(arg);
      continue;
    }
    if (arg == "--" && !only_inputs) {
      only_inputs = true;
      continue;
    }
    if (only_inputs || arg[0] != '-' || arg == "-") {
      if (arg[0] == '@' && !only_inputs)
        out.refused.push_back(arg); // a response file
      else if (arg == "-" || absolute(arg) != entry_file)
        out.dropped.push_back(arg); // another input (stdin, an object file)
      continue;
    }
    // The option and, when it takes one, its value from the next argument.
    std::string shown = arg;
    std::string separate;
    bool has_separate = takes_separate_value(arg) && i + 1 < command.size();
    if (has_separate) {
      separate = command[++i];
      shown += " " + separate;
    }
    auto include = [&](const std::string &option, const std::string &directory_value) {
      if (directory_value.empty() || has_control_character(directory_value)) {
        out.dropped.push_back(shown);
        return;
      }
      std::string dir = absolute(directory_value);
      if (!include_allowed(dir)) {
        out.outside.push_back(dir);
        return;
      }
      out.arguments.push_back(option + dir);
    };
    auto macro = [&](const std::string &option, const std::string &value) {
      if (valid_macro(value))
        out.arguments.push_back(option + value);
      else
        out.dropped.push_back(shown);
    };
    auto standard = [&](const std::string &value) {
      if (valid_standard(value))
        out.arguments.push_back("-std=" + value);
      else
        out.dropped.push_back(shown);
    };
    std::string_view a = arg;
    if (has_separate && one_of(a, {"-I", "--include-directory"}))
      include("-I", separate);
    else if (has_separate && one_of(a, {"-isystem", "-iquote", "-idirafter"}))
      include(arg, separate);
    else if (has_separate && one_of(a, {"-D", "--define-macro"}))
      macro("-D", separate);
    else if (has_separate && one_of(a, {"-U", "--undefine-macro"}))
      macro("-U", separate);
    else if (has_separate && a == "--std")
      standard(separate);
    else if (has_separate && one_of(a, {"-o", "-x", "--output", "--language"}))
      continue; // the output and the language: devlint parses the file as C++, writes nothing
    else if (has_separate)
      (is_refused(a) ? out.refused : out.dropped).push_back(shown);
    else if (starts_with(a, "-std=") || starts_with(a, "--std="))
      standard(std::string(a.substr(a.find('=') + 1)));
    else if (starts_with(a, "-isystem-after"))
      out.dropped.push_back(shown);
    else if (starts_with(a, "-isystem") || starts_with(a, "-iquote") ||
             starts_with(a, "-idirafter")) {
      size_t length = starts_with(a, "-isystem") ? 8 : starts_with(a, "-iquote") ? 7 : 10;
      include(std::string(a.substr(0, length)), std::string(a.substr(length)));
    } else if (starts_with(a, "-I"))
      include("-I", std::string(a.substr(2)));
    else if (starts_with(a, "--include-directory="))
      include("-I", std::string(a.substr(20)));
    else if (starts_with(a, "-D"))
      macro("-D", std::string(a.substr(2)));
    else if (starts_with(a, "--define-macro="))
      macro("-D", std::string(a.substr(15)));
    else if (starts_with(a, "-U"))
      macro("-U", std::string(a.substr(2)));
    else if (starts_with(a, "--undefine-macro="))
      macro("-U", std::string(a.substr(17)));
    else if (is_language_option(a) || is_numeric_language_option(a))
      out.arguments.push_back(arg);
    else if (is_silently_ignored(a) || starts_with(a, "-o") || starts_with(a, "-x") ||
             starts_with(a, "--driver-mode=") ||
             one_of(a.substr(0, a.find('=') + 1), {"-fdebug-prefix-map=", "-ffile-prefix-map=",
                                                   "-fmacro-prefix-map=", "-fmessage-length="}))
      continue;
    else if (is_refused(a))
      out.refused.push_back(shown);
    else
      out.dropped.push_back(shown);
  }
  return out;
}

std::string printable_text(const std::string &text, size_t max_length) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    auto byte = static_cast<unsigned char>(text[i]);
    if (out.size() >= max_length) {
      // Cut at a UTF-8 boundary: drop continuation bytes of a sequence left open.
      while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80)
        out.pop_back();
      if (!out.empty() && static_cast<unsigned char>(out.back()) >= 0xC0)
        out.pop_back();
      return out + "...";
    }
    if (byte < 0x20 || byte == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      out += escaped;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string describe_filtered_flags(const CompileFlags &flags) {
  constexpr size_t kShown = 8;
  auto list = [](const std::vector<std::string> &items) {
    std::string out;
    for (size_t i = 0; i < items.size() && i < kShown; ++i)
      out += (i ? ", " : "") + printable_text(items[i]);
    if (items.size() > kShown)
      out += " and " + std::to_string(items.size() - kShown) + " more";
    return out;
  };
  std::vector<std::string> parts;
  if (!flags.refused.empty())
    parts.push_back("refused " + list(flags.refused) +
                    " (they read or write other files, or reach past Clang's driver)");
  if (!flags.outside.empty())
    parts.push_back("dropped the include directories " + list(flags.outside) +
                    " (outside the checkout, LibTorch's and the system's)");
  if (!flags.dropped.empty())
    parts.push_back("dropped " + list(flags.dropped) + " (not on devlint's list)");
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i)
    out += (i ? "; " : "") + parts[i];
  return out;
}

std::vector<std::string> split_command_line(const std::string &command) {
  std::vector<std::string> out;
  std::string current;
  bool in_word = false;
  for (size_t i = 0; i < command.size(); ++i) {
    char c = command[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word)
        out.push_back(std::move(current));
      current.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\\' && i + 1 < command.size()) {
      current += command[++i];
    } else if (c == '\'') {
      size_t end = command.find('\'', i + 1);
      if (end == std::string::npos)
        end = command.size();
      current.append(command, i + 1, end - i - 1);
      i = end;
    } else if (c == '"') {
      for (++i; i < command.size() && command[i] != '"'; ++i) {
        if (command[i] == '\\' && i + 1 < command.size() &&
            (command[i + 1] == '"' || command[i + 1] == '\\' || command[i + 1] == '$' ||
             command[i + 1] == '`'))
          ++i;
        current += command[i];
      }
    } else {
      current += c;
    }
  }
  if (in_word)
    out.push_back(std::move(current));
  return out;
}

} // namespace devlint
