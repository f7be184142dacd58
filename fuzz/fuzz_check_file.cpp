// One file through the whole pipeline, as `devlint check FILE` runs it: the input checks of
// source_from_bytes (what read_source_file applies to a file from disk), check_package (frontend,
// module model, placement analysis, rules, suppressions, fixes proposed) and every renderer.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fuzz/fuzz_support.h"
#include "render/renderer.h"

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

  for (const Finding &f : findings) {
    std::string where = f.code + " at " + std::to_string(f.range.begin);
    DEVLINT_FUZZ_REQUIRE(f.file == file.get(), where);
    DEVLINT_FUZZ_REQUIRE(f.range.begin <= f.range.end && f.range.end <= size, where);
    DEVLINT_FUZZ_REQUIRE(f.range.line >= 1 && f.range.line <= file->line_count(), where);
    if (f.fix)
      for (const TextEdit &e : f.fix->edits)
        DEVLINT_FUZZ_REQUIRE(e.begin <= e.end && e.end <= size, where);
  }

  for (OutputFormat format :
       {OutputFormat::Full, OutputFormat::Concise, OutputFormat::Json, OutputFormat::JsonLines,
        OutputFormat::Sarif, OutputFormat::Github, OutputFormat::Gitlab, OutputFormat::Junit}) {
    for (bool color : {false, true}) {
      RenderOptions options;
      options.color = color;
      options.tool_version = "fuzz";
      options.docs_url = "https://docs.invalid/{code}/{name}";
      std::ostringstream out;
      render(format, out, findings, options);
      // The machine-readable formats must stay parseable whatever the input held.
      if (format == OutputFormat::Json || format == OutputFormat::Sarif ||
          format == OutputFormat::Gitlab)
        DEVLINT_FUZZ_REQUIRE(nlohmann::json::accept(out.str()), out.str().substr(0, 2000));
      if (format == OutputFormat::JsonLines) {
        std::istringstream lines(out.str());
        for (std::string line; std::getline(lines, line);)
          DEVLINT_FUZZ_REQUIRE(nlohmann::json::accept(line), line.substr(0, 2000));
      }
      if (format != OutputFormat::Full && format != OutputFormat::Concise)
        break; // color only changes the text formats
    }
  }
  return 0;
}
