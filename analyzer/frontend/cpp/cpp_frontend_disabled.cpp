// The C++ frontend when devlint is built without Clang (-DDEVLINT_CPP=OFF): C++ files are
// reported as not analyzable instead of going through the Python frontend.
#include <filesystem>

#include "frontend/cpp/cpp_frontend.h"

namespace devlint {

bool cpp_frontend_available() { return false; }

bool is_cpp_source_path(const std::string &path) {
  std::string ext = std::filesystem::path(path).extension().string();
  return ext == ".cpp" || ext == ".cc" || ext == ".cxx";
}
bool is_cpp_header_path(const std::string &path) {
  std::string ext = std::filesystem::path(path).extension().string();
  return ext == ".h" || ext == ".hh" || ext == ".hpp" || ext == ".hxx";
}

CppUnit lower_cpp(const SourceFile &main, const CppSettings &, const CppTexts *) {
  CppUnit unit;
  auto syntax = std::make_unique<SyntaxFile>();
  syntax->source = &main;
  syntax->explicit_placement = true;
  unit.syntax.push_back(std::move(syntax));
  unit.diagnostics.push_back({Severity::Error, main.display_path, 0, 0,
                              "this devlint was built without the C++ frontend (configure with "
                              "-DDEVLINT_CPP=ON and Clang 14 installed)"});
  return unit;
}

std::string prepare_cpp_pch(const CppSettings &, std::string &error) {
  error = "this devlint was built without the C++ frontend";
  return {};
}

std::vector<std::string> default_cpp_arguments(const CppSettings &) { return {}; }

std::vector<std::string> cpp_compile_arguments(const std::string &, const CppSettings &) {
  return {};
}

} // namespace devlint
