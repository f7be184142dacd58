// C++ frontend: parses a LibTorch translation unit with Clang (the typed AST: overloaded tensor
// operators, `auto`, module holders) and lowers it into the program model (model/syntax.h), so
// that the module model, the placement analysis, the rules and the fixes run unchanged
// (docs/CPP_DEVICE_MODEL.md). Nothing after this stage sees Clang.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "diagnostics/finding.h"
#include "model/syntax.h"

namespace devlint {

// Whether devlint was built with the C++ frontend (CMake option DEVLINT_CPP).
bool cpp_frontend_available();

bool is_cpp_source_path(const std::string &path); // .cpp .cc .cxx
bool is_cpp_header_path(const std::string &path); // .h .hh .hpp .hxx

// Building the shared precompiled header takes about a minute, once: the caller is told when it
// starts and ends (the frontend prints nothing).
enum class PchBuild : uint8_t { Started, Finished, Failed };

struct CppSettings {
  std::string libtorch_dir; // a LibTorch distribution (DIR/include); empty: detect
  std::string build_dir;    // -p: a directory holding compile_commands.json; empty: walk up
  // `compile-database` in a configuration: `build_dir` came from the repository, so it is used
  // only when it lies inside this directory (the configuration's), named in a warning otherwise.
  std::string build_dir_confined_to;
  std::string build_dir_source; // the configuration file that named it
  std::string pch_dir;          // where the shared precompiled torch header lives; empty: no PCH
  // Called (from the thread that builds it) when the precompiled header is built; may be empty.
  std::function<void(PchBuild, const std::string &pch_path)> on_pch_build;
};

// One translation unit, lowered: syntax[0] is the main file, then each project header it
// includes (headers of the system and of LibTorch are context only, never lowered).
struct CppUnit {
  std::vector<std::unique_ptr<SourceFile>> headers; // the project headers read for this unit
  std::vector<std::unique_ptr<SyntaxFile>> syntax;
  std::vector<Diagnostic> diagnostics;
};

// Texts that stand in for files on disk (the fix loop's fixed texts), by path.
using CppTexts = std::unordered_map<std::string, std::string>;

// The error a unit gets when devlint's own lowering crashed (recovered, as a Clang crash is).
inline constexpr const char *kLoweringCrashMessage =
    "devlint crashed while lowering this file (a devlint defect: please report it with the "
    "file); not analyzed";

// Parses and lowers `main`. Safe to call from several threads at once.
CppUnit lower_cpp(const SourceFile &main, const CppSettings &settings,
                  const CppTexts *texts = nullptr);

// Builds the shared precompiled header for the default flags now (the test suite and `bench/`
// prepare it once); returns its path, or an empty string with `error` filled.
std::string prepare_cpp_pch(const CppSettings &settings, std::string &error);

// The compiler arguments `main` is parsed with (its compile_commands.json entry, else the
// defaults), its working directory last, for the result cache's key.
std::vector<std::string> cpp_compile_arguments(const std::string &main,
                                               const CppSettings &settings);

// The default compiler arguments devlint uses for a file without a compile_commands.json entry
// (without the file itself and without the PCH), for `bench/` to compare with clang++.
std::vector<std::string> default_cpp_arguments(const CppSettings &settings);

} // namespace devlint
