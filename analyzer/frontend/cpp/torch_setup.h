// LibTorch's include directories, the arguments Clang gets for a file (devlint's defaults, or a
// compile_commands.json entry's allowed flags), and the shared precompiled LibTorch header.
#pragma once

#include <string>
#include <vector>

#include "frontend/cpp/compile_database.h"
#include "frontend/cpp/cpp_frontend.h"

namespace devlint::cpp {

std::string resource_dir();
// LibTorch's include directories: DIR/include and its C++ API under it; empty when not found.
std::vector<std::string> libtorch_includes(const CppSettings &settings);
// devlint's default arguments: C++17 and LibTorch's include directories.
std::vector<std::string> base_arguments(const CppSettings &settings);
// Without a compile database: `-I DIR/include` for each directory from the file's up to its
// checkout that has an `include/` folder (a project's own headers, as `#include "net.h"` or
// `#include <project/net.h>` expect them), nearest first.
std::vector<std::string> project_include_arguments(const std::string &main_file,
                                                   const std::string &checkout);
// The arguments of a file with a compile_commands.json entry: devlint's own, then the flags the
// allow-list kept (compile_flags.h). The database's compiler is never run.
std::vector<std::string> database_arguments(const CompileSetup &setup);
// What Clang may read besides the checkout: LibTorch's and the system's include directories,
// Clang's own headers and the precompiled header's directory.
std::vector<std::string> trusted_roots(const CppSettings &settings);
// The precompiled LibTorch header for files parsed with `arguments` (devlint's defaults, or a
// compile database entry's allowed flags: a PCH must be built with the flags of the files that
// use it), keyed by them and built once, shared by every file and run using the same ones. At
// most kMaxPchVariants sets of database flags get one per run; the files of any further set are
// parsed without. Its path, or empty with `error` filled (or without a PCH directory, or past the
// bound, with `error` empty).
inline constexpr size_t kMaxPchVariants = 4;
std::string build_pch(const CppSettings &settings, const std::vector<std::string> &arguments,
                      std::string &error);

} // namespace devlint::cpp
