// One file through the whole pipeline, as `devlint check FILE` runs it: the input checks of
// source_from_bytes (what read_source_file applies to a file from disk), check_package (frontend,
// module model, placement analysis, rules, suppressions, fixes proposed) and every renderer.
#include <cstdint>

#include "fuzz/fuzz_support.h"

using namespace devlint;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Diagnostic diagnostic;
  auto file = source_from_bytes(
      fuzz::kFuzzPath, std::string(reinterpret_cast<const char *>(data), size), diagnostic);
  if (!file)
    return 0; // binary or not UTF-8: skipped with a warning, as the CLI does
  std::vector<Diagnostic> diagnostics;
  std::vector<Finding> findings =
      check_package({file.get()}, {file.get()}, fuzz::fuzz_options(), &diagnostics);
  sort_findings(findings);
  fuzz::require_findings_inside(findings, *file);
  fuzz::require_renderers_hold(findings);
  return 0;
}
