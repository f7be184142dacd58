// What the fuzz targets share: the invariant check that turns a broken property into a crash
// libFuzzer records, and the options every target analyzes with.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "driver/check_run.h"
#include "driver/source_reading.h"
#include "render/renderer.h"

namespace devlint::fuzz {

// Aborts with a message: libFuzzer saves the input as a crash, the replay driver fails the test.
[[noreturn]] inline void invariant_failed(const char *what, const std::string &detail) {
  std::fprintf(stderr, "devlint fuzz: invariant broken: %s\n%s\n", what, detail.c_str());
  std::abort();
}

#define DEVLINT_FUZZ_REQUIRE(condition, detail)                                                    \
  do {                                                                                             \
    if (!(condition))                                                                              \
      ::devlint::fuzz::invariant_failed(#condition, (detail));                                     \
  } while (0)

// The path every fuzzed file is analyzed under: a model file, so every rule applies.
inline const char *kFuzzPath = "fuzz_input/modeling_fuzz.py";
// The C++ frontend's target: a translation unit (fuzz_cpp_frontend.cpp).
inline const char *kFuzzCppPath = "fuzz_input/fuzz_model.cpp";

// Every rule, and DL900, so suppression comments and their removal fixes are exercised too.
inline CheckOptions fuzz_options() {
  CheckOptions options;
  options.jobs = 1;
  options.report_unused_suppressions = true;
  return options;
}

// Every finding and fix edit of `file` lies inside it.
inline void require_findings_inside(const std::vector<Finding> &findings, const SourceFile &file) {
  size_t size = file.text.size();
  for (const Finding &f : findings) {
    std::string where = f.code + " at " + std::to_string(f.range.begin);
    DEVLINT_FUZZ_REQUIRE(f.file == &file, where);
    DEVLINT_FUZZ_REQUIRE(f.range.begin <= f.range.end && f.range.end <= size, where);
    DEVLINT_FUZZ_REQUIRE(f.range.line >= 1 && f.range.line <= file.line_count(), where);
    if (f.fix)
      for (const TextEdit &e : f.fix->edits)
        DEVLINT_FUZZ_REQUIRE(e.begin <= e.end && e.end <= size, where);
  }
}

// Every renderer, with and without color; the machine-readable formats must stay parseable
// whatever the input held.
inline void require_renderers_hold(const std::vector<Finding> &findings) {
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
}

} // namespace devlint::fuzz
