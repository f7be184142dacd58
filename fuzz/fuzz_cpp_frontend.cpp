// The C++ frontend (Clang LibTooling, frontend/cpp/cpp_frontend.h) on one file as `devlint check
// FILE.cpp` runs it: check_package lowers the translation unit, runs the module model, the
// placement analysis, the rules and the proposed fixes, then every renderer. The LibTorch and
// standard headers are the small stand-ins in cpp_stub/, so one input takes milliseconds.
#include <cstdint>

#include "frontend/cpp/cpp_frontend.h"
#include "fuzz/fuzz_support.h"

using namespace devlint;

namespace {

CheckOptions cpp_fuzz_options() {
  CheckOptions options = fuzz::fuzz_options();
  options.cpp.libtorch_dir = DEVLINT_FUZZ_CPP_STUB_DIR;
  // A directory without compile_commands.json: the default arguments, and no walk up from the
  // working directory to whatever database lies above it.
  options.cpp.build_dir = DEVLINT_FUZZ_CPP_STUB_DIR;
  return options; // no pch_dir: nothing is written to disk
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Diagnostic diagnostic;
  auto file = source_from_bytes(
      fuzz::kFuzzCppPath, std::string(reinterpret_cast<const char *>(data), size), diagnostic);
  if (!file)
    return 0; // binary or not UTF-8: skipped with a warning, as the CLI does
  static const CheckOptions options = cpp_fuzz_options();
  std::vector<Diagnostic> diagnostics;
  std::vector<Finding> findings = check_package({file.get()}, {file.get()}, options, &diagnostics);
  // A crash in devlint's own lowering is recovered for users; here it is a defect to report.
  for (const Diagnostic &d : diagnostics)
    DEVLINT_FUZZ_REQUIRE(d.message.find(kLoweringCrashMessage) == std::string::npos, d.message);
  sort_findings(findings);
  fuzz::require_findings_inside(findings, *file);
  fuzz::require_renderers_hold(findings);
  return 0;
}
